/* model_gpu.c -- the cycle-approximate tier of a GPU.
 *
 * GEMM-like operators run as thread-block tiles of tile_m x tile_n outputs, ctas_per_sm per SM
 * (tiles shrink to the next power of two >= M or N, at least 16, for skinny shapes, and K is split
 * across CTAs when the tiles cannot fill the GPU: split-K, as GEMM libraries choose):
 *   tiles = groups x ceil(M / tile_m) x ceil(N / tile_n) x split
 *   waves = ceil(tiles / (SMs x ctas_per_sm))                      (wave quantization; a GEMM's less
 *           the share gemm_wave_tail of its last wave's idle SMs the library puts to work)
 *   compute_s = waves x 2 tile_m tile_n K / (peak / (SMs x ctas_per_sm))  (padding included)
 * Operands reach a tile through shared memory: every tile streams its A panel (tile_m x K) and B
 * panel (K x tile_n) from L2, so L2 serves tiles x (tile_m + tile_n) x K elements. Main memory serves
 * each operand once when A and B fit in half of L2; otherwise the tiles of a wave (a block of about
 * sqrt(SMs x ctas) tiles a side) share panels through L2 and A is re-read once per wave column of
 * tiles, B once per wave row. A split-K GEMM then reduces its fp32 partials through main memory, a
 * serial phase (model_gpu_tiling). Streaming kernels reach bw_fraction of the memory bandwidth.
 * Attention: per batch x head, one tile per tile_m queries sweeps all keys (FlashAttention-style:
 * only q, k, v and the output touch memory) unless the stack runs it unfused (wl_op.attn_unfused), when
 * the S x T score matrix is written and read back twice (scores, then probabilities). Every kernel pays
 * its launch (model_launch_s: per_op_us, or graph_node_us when replayed from a captured graph); an op
 * fused into a kernel moves only what crosses the kernel's boundary (model_in_bytes, model_out_bytes).
 * Other operators: the roofline with the achieved bandwidth fraction. */
#include <math.h>
#include <string.h>

#include "model.h"

void model_finish(const struct hw_device *d, const struct wl_op *op, struct op_cost *c)
{
    double busy = model_busy_s(d, c->compute_s, c->memory_s);
    c->time_s = busy + c->overhead_s;
    c->bound = c->overhead_s > busy ? BOUND_OVERHEAD : c->compute_s >= c->memory_s ? BOUND_COMPUTE : BOUND_MEMORY;
    double peak = 0;
    for (int e = 0; e < ENG_COUNT; e++)
        if (d->peak[e][c->cprec] > peak)
            peak = d->peak[e][c->cprec];
    c->utilization = c->time_s > 0 && peak > 0 ? op->flops / peak / c->time_s : 0;
    if (c->utilization > 1)
        c->utilization = 1;
    c->energy_static_J = d->idle_W * c->time_s;
}

static double level_energy(const struct hw_device *d, const struct op_cost *c)
{
    double j = 0;
    for (int l = 0; l < d->n_mem; l++)
        j += c->bytes[l] * d->mem[l].energy_J_per_byte;
    return j;
}

/* A GEMM-like op's cycle-tier cost for tiling gt (NULL: attention), into c (the roofline's, launch set). */
static void gpu_cost(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                     const struct exec_cfg *x, const struct gpu_tiling *gt, struct op_cost *c)
{
    const struct hw_gpu *gp = &d->gpu;
    int last = d->n_mem - 1, l2 = last > 0 ? last - 1 : 0;
    double hbm = d->mem[last].bandwidth_Bps * d->eff_memory * gp->bw_fraction;
    double e = prec_bytes(c->cprec), conc = (double)gp->sms * gp->ctas_per_sm;
    double peak_tile = d->peak[c->engine][c->cprec] * d->eff_class[model_eff_class(op)] * d->eff_prec[c->cprec] *
                       model_gemm_depth(d, op, gt) / conc;
    double tm = gp->tile_m, tn = gp->tile_n, M = op->gm, N = op->gn, K = op->gk;
    double a_bytes = 0, b_bytes = 0, o_bytes = 0, tiles, work, l2_bytes, dram, red_bytes = 0, waves;
    for (int k = 0; k < op->n_in; k++) { /* an expert bank: the experts the tokens reach */
        double b = model_in_bytes(g, op, k, x);
        if (k == 0)
            a_bytes += b;
        else
            b_bytes += b;
    }
    o_bytes = model_out_bytes(g, op, 0, x);
    if (!gt) {
        /* gbatch = batch x heads; M = S queries, N = T keys, K = head_dim; QK^T and PV per tile. */
        tiles = op->gbatch * ceil(M / tm);
        waves = ceil(tiles / conc);
        work = 2 * (2 * tm * N * K);
        l2_bytes = a_bytes + tiles * 2 * N * K * e + o_bytes;
        dram = a_bytes + b_bytes + o_bytes;
        if (op->attn_unfused || op->kv_concat) {
            double extra = model_extra_bytes(g, op, x);
            dram += extra;
            l2_bytes += extra;
        }
    } else {
        c->overhead_s += gt->red_s; /* split-K's partials: written and read back after the main loop */
        red_bytes = gt->red_bytes;
        waves = gt->waves;
        tm = gt->tm;
        tn = gt->tn;
        tiles = gt->tiles;
        work = 2 * tm * tn * gt->kc;
        l2_bytes = tiles * (tm + tn) * ceil(K / gt->split) * e + o_bytes;
        if (a_bytes + b_bytes <= d->mem[l2].capacity_bytes / 2 || last == 0) {
            dram = a_bytes + b_bytes + o_bytes;
        } else {
            double w = floor(sqrt(conc));
            if (w < 1)
                w = 1;
            dram = a_bytes * ceil(gt->tiles_n / w) + b_bytes * ceil(gt->tiles_m / w) + o_bytes;
        }
    }
    c->compute_s = waves * work / peak_tile;
    memset(c->bytes, 0, sizeof c->bytes);
    c->bytes[last] = dram;
    if (last > 0)
        c->bytes[l2] = l2_bytes;
    c->bytes[last] += red_bytes;
    double t_l2 = last > 0 ? l2_bytes / (d->mem[l2].bandwidth_Bps * d->eff_memory) : 0,
           t_dram = model_mem_s(d, op, last, dram, hbm);
    c->memory_s = t_l2 > t_dram ? t_l2 : t_dram;
    c->mem_level = t_l2 > t_dram ? l2 : last;
    c->energy_memory_J = level_energy(d, c);
    c->cycles_compute = c->compute_s * d->boost_Hz;
    c->mapping_efficiency = op->macs / (waves * conc * work / 2);
    model_finish(d, op, c);
}

enum op_status model_gpu_cycle(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                               const struct exec_cfg *x, struct op_cost *c)
{
    if (!d->gpu.present)
        return OPS_NO_TIER;
    enum op_status st = model_roofline_cost(d, g, op, x, c); /* support, precision, MAC energy */
    if (st != OPS_OK || wl_op_is_view(op))
        return st;
    const struct hw_gpu *gp = &d->gpu;
    int last = d->n_mem - 1;
    c->overhead_s = model_launch_s(d, op, x);
    if (!op_type_is_gemm(op->type)) { /* streaming: the roofline's traffic at the achieved bandwidth */
        double m = 0;
        for (int l = 0; l < d->n_mem; l++) {
            double s = model_mem_s(d, op, l, c->bytes[l], d->mem[l].bandwidth_Bps * d->eff_memory * (l == last ? gp->bw_fraction : 1));
            if (s > m) {
                m = s;
                c->mem_level = l;
            }
        }
        c->memory_s = m;
        model_finish(d, op, c);
        return OPS_OK;
    }
    const struct op_cost base = *c; /* the roofline's support, precision, MAC energy and launch */
    struct gpu_tiling gt;
    int gemm = op->type != OP_ATTENTION;
    if (gemm) /* kernel choice: tiles shrink for skinny shapes, split-K fills the GPU (model_gpu_tiling) */
        model_gpu_tiling(d, op, c->cprec, &gt);
    /* a split kernel is costed beside the unsplit one and the faster kept (the library's choice, here with
     * this tier's memory time) */
    for (int pass = 0; pass < (gemm && gt.split > 1 ? 2 : 1); pass++) {
        struct op_cost k = base;
        if (pass == 1)
            model_gpu_unsplit(d, op, &gt);
        gpu_cost(d, g, op, x, gemm ? &gt : NULL, &k);
        if (pass == 0 || k.time_s < c->time_s)
            *c = k;
    }
    return OPS_OK;
}
