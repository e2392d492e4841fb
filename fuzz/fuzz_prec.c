/* fuzz_prec.c -- libFuzzer target for the precision parser (prec_parse).
 *
 * Covers the short forms ("fp16", "w4a16", "w4a16kv8") and the keyed form ("w=int4,a=fp16,kv=fp8").
 * An accepted configuration is formatted back with prec_format and must parse to the same value.
 * Build and run: sh fuzz/run.sh [seconds] prec */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "prec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct prec_cfg c, c2;
    struct dse_err e;
    char buf[128];
    char *s = malloc(size + 1); /* prec_parse takes a C string */
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    dse_err_clear(&e);
    if (prec_parse(s, &c, &e) == DSE_OK) {
        /* Round trip: the canonical form of an accepted value parses back to that value. */
        prec_format(&c, buf, sizeof buf);
        if (prec_parse(buf, &c2, &e) != DSE_OK || c2.w != c.w || c2.a != c.a || c2.kv != c.kv)
            abort();
    }
    free(s);
    return 0;
}
