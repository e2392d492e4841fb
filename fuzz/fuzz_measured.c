/* fuzz_measured.c -- libFuzzer target for the measured-kernel corpus loader (kcorpus_load_buf,
 * validate/measured/SOURCE/kernels.csv): the fixed header, quoting, every field's check (case slugs,
 * hwdesc names, kernels and their shapes, collectives' bytes / ranks / nodes, precisions, times, halves,
 * group and note lengths), case ids unique, the row bound. Build and run: sh fuzz/run.sh [seconds] measured */
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kcorpus kc = {0};
    struct dse_err e;
    dse_err_clear(&e);
    kcorpus_load_buf((const char *)data, size, "fuzz.csv", &kc, &e);
    kcorpus_free(&kc);
    return 0;
}
