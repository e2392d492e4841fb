/* fuzz_topo.c -- libFuzzer target for the SCALE-Sim topology CSV loader (wl_load_buf, csv = 1).
 *
 * Covers the CSV field splitter and integer parser, both header forms (conv "IFMAP Height, ..." and
 * GEMM "Layer, M, N, K"), depthwise ("DP") layers, and the graph they produce (wl_finalize, wl_build).
 * Build and run: sh fuzz/run.sh [seconds] topo */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "err.h"
#include "wl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wl_model m;
    struct wl_graph g;
    struct dse_err e;
    dse_err_clear(&e);
    if (wl_load_buf((const char *)data, (unsigned long)size, "fuzz.csv", 1, &m, &e) != DSE_OK)
        return 0;
    memset(&g, 0, sizeof g); /* wl_build may fail before it initialises g */
    dse_err_clear(&e);
    (void)wl_build(&m, &(struct wl_shape){1, 4, 0}, &g, &e);
    wl_graph_free(&g);
    wl_model_free(&m);
    return 0;
}
