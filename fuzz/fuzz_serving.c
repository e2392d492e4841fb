/* fuzz_serving.c -- libFuzzer target for the serving corpus loader (scorpus_load_buf,
 * validate/published/serving/cases.csv): the fixed header, quoting, every field's check (counts, rate,
 * metric and unit, value, field lengths), ids unique. Build and run: sh fuzz/run.sh [seconds] serving */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct scase *c = NULL;
    int n = 0;
    struct dse_err e;
    dse_err_clear(&e);
    if (scorpus_load_buf((const char *)data, size, "fuzz.csv", &c, &n, &e) == DSE_OK)
        free(c);
    return 0;
}
