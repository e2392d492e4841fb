/* fuzz_published.c -- libFuzzer target for the published-corpus CSV loader (pcorpus_load_buf,
 * validate/published/NAME.csv): the header's named columns, quoting, every field's check (devices,
 * stacks, workloads and kernel shapes, phases, batch and token counts, precisions, metrics and their
 * units), ids unique. Build and run: sh fuzz/run.sh [seconds] published */
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pcorpus pc;
    struct dse_err e;
    dse_err_clear(&e);
    if (pcorpus_load_buf((const char *)data, size, "fuzz.csv", &pc, &e) == DSE_OK)
        pcorpus_free(&pc);
    return 0;
}
