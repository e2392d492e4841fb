/* fuzz_onnx.c -- libFuzzer target for the ONNX importer (wl_load_buf, csv = 2: wl_onnx.c).
 *
 * Covers protobuf-c's decoding of the ModelProto subset (src/onnx.proto), the initializer, input and
 * attribute readers, the topological sort, and shape inference with constant folding for a batch of
 * 1 and 2 (wl_onnx_build). Seeds: the small models tests/onnx/make_models.py writes.
 * Build and run: sh fuzz/run.sh [seconds] onnx */
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
    if (wl_load_buf((const char *)data, (unsigned long)size, "fuzz.onnx", 2, &m, &e) != DSE_OK)
        return 0;
    memset(&g, 0, sizeof g);
    dse_err_clear(&e);
    (void)wl_build(&m, &(struct wl_shape){2, 7, 0}, &g, &e);
    wl_graph_free(&g);
    wl_model_free(&m);
    return 0;
}
