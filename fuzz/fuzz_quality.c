/* fuzz_quality.c -- libFuzzer target for the published quality table's loader (ql_load_buf,
 * validate/quality/published-quality.csv): the header, quoting, every field (ids, kinds, families and
 * their kinds, sizes, precisions, metrics, figures against loss_pct, sources, URLs), duplicates, line
 * numbers. A loaded table is then asked for every format of a few shipped models and of each of its own
 * families at three sizes (ql_estimate, ql_describe): an estimate is finite, says how it was reached and
 * names rows of the table.
 * Build and run: sh fuzz/run.sh [seconds] quality */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "quality.h"

static void check(const struct ql_table *t, const char *name, int kind, double params)
{
    static const char *const precs[] = {"fp16", "fp8", "w8a8", "w8a16", "w4a16", "w4a8", "int4", "w4a8kv4",
                                        "w=fp8,a=fp8,kv=fp16", "w=fp16,a=fp16,kv=int4", "w=int4,a=fp8,kv=fp8"};
    for (unsigned i = 0; i < sizeof precs / sizeof precs[0]; i++) {
        struct prec_cfg p;
        struct dse_err e;
        struct ql_est q;
        char d[512];
        if (prec_parse(precs[i], &p, &e))
            abort();
        int ok = ql_estimate(t, name, kind, params, &p, &q);
        if (ok && (!isfinite(q.loss_pct) || !q.flags || q.n_used < 0 || q.n_used > QL_MAX_USED ||
                   q.n_used_all < q.n_used))
            abort();
        if (!ok && q.flags)
            abort();
        for (int k = 0; ok && k < q.n_used; k++)
            if (q.used[k] < 0 || q.used[k] >= t->n)
                abort();
        if ((q.flags & (1u << QL_REFERENCE)) && q.loss_pct != 0)
            abort();
        ql_describe(t, &q, 6, d, sizeof d);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ql_table t;
    struct dse_err e;
    dse_err_clear(&e);
    if (ql_load_buf((const char *)data, size, "fuzz.csv", &t, &e) != DSE_OK)
        return 0;
    check(&t, "llama-3.2-1b", QK_LLM, 1.24e9);
    check(&t, "mistral-7b", QK_LLM, 7.24e9);
    check(&t, "resnet50", QK_CNN, 25.6e6);
    check(&t, "bert-base", -1, 110e6);
    for (int f = 0; f < t.n_fam; f++)
        for (int s = 0; s < 3; s++)
            check(&t, t.fam[f].name, t.fam[f].kind, (s == 0 ? 1e8 : s == 1 ? 7e9 : 3e11));
    ql_free(&t);
    return 0;
}
