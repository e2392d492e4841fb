/* fuzz_multi.c -- libFuzzer target for the multi-device corpus loader (mcorpus_load_buf,
 * validate/published/multi-device/cases.csv): the fixed header, quoting, every field's check (counts,
 * phases, metrics and their FLOP counts, values), ids unique. Build and run: sh fuzz/run.sh [seconds] multi */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mcase *c = NULL;
    int n = 0;
    struct dse_err e;
    dse_err_clear(&e);
    if (mcorpus_load_buf((const char *)data, size, "fuzz.csv", &c, &n, &e) == DSE_OK)
        free(c);
    return 0;
}
