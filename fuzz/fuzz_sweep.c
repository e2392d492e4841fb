/* fuzz_sweep.c -- libFuzzer target for the sweep-spec loader (src/sweep_spec.c): the input is a spec
 * (sweeps/README.md), loaded from memory by sweep_spec_load_buf with SW_LOAD_SHIPPED_ONLY, so the
 * systems and workloads it names can only be shipped files under hwdesc/ and models/ (run from the
 * repository root; fuzz/run.sh does). A spec that loads and is small enough to prepare quickly (few
 * variants, graphs and precisions: the accuracy proxy runs a 128^3 emulated GEMM per precision) is
 * then prepared (hw: variants, power caps, placements, graphs) and one point is evaluated, so the
 * sizes the loader accepted are exercised where they are used. */
#include <stddef.h>
#include <stdint.h>

#include "sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sweep_spec sp;
    struct sweep_prep *p = NULL;
    struct dse_err e;
    if (sweep_spec_load_buf((const char *)data, size, "sweeps/fuzz.json", SW_LOAD_SHIPPED_ONLY, &sp, &e) != DSE_OK)
        return 0;
    long long graphs = sp.n_workloads, precisions = 1, requests = 0;
    for (int w = 0; w < sp.n_workloads; w++) /* a serving point simulates its run: keep runs short */
        requests = sp.wl[w].serving.n > requests ? sp.wl[w].serving.n : requests;
    for (int a = 0; a < sp.n_axes; a++) {
        if (sp.axes[a].kind == AX_BATCH)
            graphs *= sp.axes[a].n;
        if (sp.axes[a].kind == AX_PRECISION)
            precisions = sp.axes[a].n;
    }
    if (sp.n_variants <= 16 && graphs <= 4 && precisions <= 2 && requests <= 2000 && sweep_prepare(&sp, &p, &e) == DSE_OK) {
        struct sw_row row;
        if (sweep_scratch_init(p, 1, &e) == DSE_OK)
            sweep_eval_point(p, sp.points - 1, 0, &row, &e);
        sweep_prep_free(p);
    }
    sweep_spec_free(&sp);
    return 0;
}
