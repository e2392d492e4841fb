/* fuzz_hwdesc.c -- libFuzzer target for the hwdesc JSON loader (hw_load_buf).
 *
 * Covers ju_parse (cJSON + syntax-error positions), the schema/key checks in jsonu.c and every
 * memory, device, compute, DVFS and link field check and derivation in hw_load.c.
 * Build and run: sh fuzz/run.sh [seconds] hwdesc */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* struct hw_system is large (tens of KiB): allocate it once, not on the stack per input.
     * hw_load_buf clears it first, so no state leaks from one input to the next. */
    static struct hw_system *sys;
    struct dse_err e;
    if (!sys && !(sys = malloc(sizeof *sys)))
        abort();
    dse_err_clear(&e);
    (void)hw_load_buf((const char *)data, (unsigned long)size, "fuzz.json", sys, &e);
    return 0;
}
