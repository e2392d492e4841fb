/* fuzz_workload.c -- libFuzzer target for the JSON workload loader (wl_load_buf, csv = 0).
 *
 * Covers graph JSON (tensors, ops, attributes, shape checks in wl_finalize), HuggingFace-style
 * transformer configs (wl_parse_transformer + wl_build_transformer) and CNN builder specs
 * (wl_build_cnn). Each accepted model is also built once more at batch 1, 4 tokens.
 * Build and run: sh fuzz/run.sh [seconds] workload */
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
    if (wl_load_buf((const char *)data, (unsigned long)size, "fuzz.json", 0, &m, &e) != DSE_OK)
        return 0;
    memset(&g, 0, sizeof g); /* wl_build may fail before it initialises g */
    dse_err_clear(&e);
    (void)wl_build(&m, &(struct wl_shape){1, 4, 0}, &g, &e);
    wl_graph_free(&g);
    wl_model_free(&m);
    return 0;
}
