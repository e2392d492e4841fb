/* fuzz_suite.c -- libFuzzer target for the validation suite loaders (vsuite_load_buf).
 *
 * The first input byte picks the format: even, a JSON suite or a dse validate/calibrate --json result
 * (named fuzz.json); odd, an import CSV with its column header (named fuzz.csv). Covers load_case and
 * every shape field's bounds, the CSV splitter and its numbers, the result converter.
 * Build and run: sh fuzz/run.sh [seconds] suite */
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vsuite s;
    struct dse_err e;
    if (size < 1)
        return 0;
    dse_err_clear(&e);
    if (vsuite_load_buf((const char *)data + 1, size - 1, data[0] & 1 ? "fuzz.csv" : "fuzz.json", &s, &e) ==
        DSE_OK)
        vsuite_free(&s);
    return 0;
}
