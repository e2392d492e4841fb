/* model_cpu.c -- the cycle-approximate tier of a CPU.
 *
 * Compute: cores x SIMD lanes x FMA units x clock per precision is the device's peak (the hwdesc's
 * vector or matrix entries: AVX2, AVX-512, AMX, NEON). A GEMM runs as a BLIS-style register
 * micro-kernel of mr x nr outputs: the work is padded to whole micro-tiles, and the micro-tiles are
 * dealt to `threads` cores (x->threads, default one per core; one below the grain, MODEL_GRAIN_*,
 * and above it the fork/join, overhead.fork_join_us, is paid), so
 *   compute_s = ceil(ceil(M/mr) ceil(N/nr) groups / threads) x 2 mr nr K / (peak per core)
 * Memory, GEMM: cache blocking per level: a level of per-core capacity S keeps square blocks of side
 * t = floor(sqrt(S / (3 e))), so the level above it serves 2 M N K e / t + M N e bytes (at least the
 * operands once), each level at its bandwidth; main memory at stream_fraction of its peak (STREAM).
 * Other operators stream their working set from the nearest level that holds it (per-core share of
 * private caches, whole shared levels), at that level's bandwidth. */
#include <math.h>
#include <string.h>

#include "model.h"

enum op_status model_cpu_cycle(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                               const struct exec_cfg *x, struct op_cost *c)
{
    if (!d->cpu.present)
        return OPS_NO_TIER;
    enum op_status st = model_roofline_cost(d, g, op, x, c);
    if (st != OPS_OK || wl_op_is_view(op))
        return st;
    const struct hw_cpu *cp = &d->cpu;
    double cores = model_cpu_cores(d);
    double threads = x->threads > 0 && x->threads < cores ? x->threads : cores;
    int parallel = model_cpu_parallel(g, op); /* below the grain an op runs on one core (model.h) */
    if (!parallel)
        threads = 1;
    double peak = d->peak[c->engine][c->cprec] * d->eff_class[model_eff_class(op)] * model_gemm_eff(d, op, c->cprec, 0),
           per_core = peak / cores;
    int last = d->n_mem - 1;
    double e = prec_bytes(c->cprec), compulsory = 0;
    for (int k = 0; k < op->n_in; k++) /* an embedding's gathered rows, an expert bank's touched experts */
        compulsory += model_in_bytes(g, op, k, x);
    compulsory += model_out_bytes(g, op, 0, x) + model_extra_bytes(g, op, x);
    memset(c->bytes, 0, sizeof c->bytes);
    c->memory_s = 0;
    if (op_type_is_gemm(op->type)) {
        double M = op->gm, N = op->gn, K = op->gk, mr = cp->mr, nr = cp->nr;
        double jobs = ceil(M / mr) * ceil(N / nr) * op->gbatch;
        if (op->type == OP_ATTENTION) /* QK^T and PV: two GEMMs of the same padded size */
            jobs *= 2;
        c->compute_s = ceil(jobs / threads) * 2 * mr * nr * K / per_core;
        c->mapping_efficiency = op->macs / (ceil(jobs / threads) * threads * mr * nr * K);
        double inner = 0;
        int fit = last; /* warm (repeated runs): levels beyond the one that holds everything see nothing */
        for (int l = 0; x->warm && l < last && fit == last; l++)
            if (compulsory <= 0.5 * d->mem[l].capacity_bytes)
                fit = l;
        for (int l = 0; l <= fit; l++) {
            double bytes = compulsory;
            if (l > 0 && inner > 0) {
                double t = floor(sqrt(inner / (3 * e)));
                double tiled = 2 * op->gbatch * M * N * K * e / (t > 1 ? t : 1) + op->gbatch * M * N * e;
                if (tiled > bytes)
                    bytes = tiled;
            }
            c->bytes[l] = bytes;
            double bw = d->mem[l].bandwidth_Bps * d->eff_level[l] * (l == last ? cp->stream_fraction : 1);
            if (bytes / bw > c->memory_s) {
                c->memory_s = bytes / bw;
                c->mem_level = l;
            }
            /* The next level blocks for the per-core share of private levels (all but the last two). */
            double cap = d->mem[l].capacity_bytes;
            inner = (l < last - 1 ? cap / cores : cap);
        }
    } else {
        int home = last;
        for (int l = 0; l < last; l++) {
            double cap = l < last - 1 ? d->mem[l].capacity_bytes / cores * threads : d->mem[l].capacity_bytes;
            if (compulsory <= cap) {
                home = l;
                break;
            }
        }
        c->bytes[home] = compulsory;
        double bw = d->mem[home].bandwidth_Bps * d->eff_level[home] * (home == last ? cp->stream_fraction : 1);
        if (home < last - 1)
            bw = bw * threads / cores; /* private caches: the cores in use */
        c->memory_s = compulsory / bw;
        c->mem_level = home;
        double vp = d->peak[c->engine][c->cprec] * d->eff_class[model_eff_class(op)] * threads / cores;
        c->compute_s = vp > 0 ? op->flops / vp : 0;
    }
    c->energy_memory_J = 0;
    for (int l = 0; l < d->n_mem; l++)
        c->energy_memory_J += c->bytes[l] * d->mem[l].energy_J_per_byte;
    c->overhead_s = model_launch_s(d, op, x) + model_cpu_prep_s(d, op) + (parallel && threads > 1 ? d->fork_join_s : 0);
    c->cycles_compute = c->compute_s * d->boost_Hz;
    model_finish(d, op, c);
    return OPS_OK;
}
