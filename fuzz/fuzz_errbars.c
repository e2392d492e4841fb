/* fuzz_errbars.c -- libFuzzer target for the error-bar table loader (eb_load_buf,
 * validate/published/error-bars.json): schema, tier, rows, their classes, kinds and bounds, duplicate
 * rows; a loaded table is then looked up for every class and kind.
 * Build and run: sh fuzz/run.sh [seconds] errbars */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "errbar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct eb_table t;
    struct dse_err e;
    dse_err_clear(&e);
    if (eb_load_buf((const char *)data, (unsigned long)size, "fuzz.json", &t, &e) != DSE_OK)
        return 0;
    for (int c = 0; c < HW_CLASS_COUNT; c++)
        for (int k = 0; k < PK_COUNT; k++) {
            int fb;
            const struct eb_row *r = eb_find(&t, (enum hw_class)c, (enum pkind)k, &fb);
            /* an interval is ordered and above -100 %, so its pessimistic ends are finite and positive */
            if (r && !(r->low_pct > -100 && r->low_pct <= r->high_pct && eb_pessimistic(1, 1, r->low_pct) > 0 &&
                       isfinite(eb_pessimistic(1, -1, r->low_pct))))
                abort();
        }
    return 0;
}
