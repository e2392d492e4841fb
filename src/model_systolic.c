/* model_systolic.c -- the cycle-approximate tier of a systolic array.
 *
 * A GEMM (M x K) @ (K x N) (a convolution through im2col: M = output pixels x batch, K = filter
 * height x width x input channels per group, N = filters per group) is folded over an R x C array
 * the way SCALE-Sim v2 does (Samajdar et al., arXiv 1811.02883 and ISPASS 2020; scalesim/compute/
 * systolic_compute_{os,ws,is}.py), whose demand matrices give one cycle per row:
 *   OS: Sr = M, Sc = N, T = K, cycles per fold = T + R + C - 2  (operands stream in skewed, outputs drain)
 *   WS: Sr = K, Sc = N, T = M, cycles per fold = 2R + C + T - 2 (R cycles to load the weight tile)
 *   IS: Sr = K, Sc = M, T = N, cycles per fold = 2R + C + T - 2 (R cycles to load the input tile)
 *   folds = ceil(Sr / R) x ceil(Sc / C);  compute cycles = folds x cycles per fold
 *   mapping efficiency = Sr Sc / (folds R C)  (the mean over folds of the PEs mapped)
 *   with `count` identical arrays (TPU v4: 8 MXUs) the folds are dealt to them: ceil(folds / count)
 * Memory (a closed form in place of SCALE-Sim's trace replay): each operand SRAM is double-buffered,
 * so half of it holds the working set; an operand matrix that does not fit is fetched from DRAM again
 * on every revisit (OS: inputs per column fold, weights per row fold; WS: inputs per column fold and
 * partial sums per row fold; IS: weights per column fold and partial sums per row fold). DRAM
 * transfers overlap compute: stall cycles = max(0, DRAM bytes / (bytes per cycle) - compute cycles).
 * Grouped convolutions run group by group and attention as QK^T then PV, per batch x head, as
 * SCALE-Sim runs separate layers. Operators that are not GEMMs do not use the array: their cost is
 * the analytical roofline's (the vector unit). */
#include <math.h>
#include <string.h>

#include "model.h"

void model_systolic_gemm(int rows, int cols, enum hw_dataflow df, double M, double K, double N, struct sa_gemm *o)
{
    double R = rows, C = cols, Sr, Sc, T, per;
    switch (df) {
    case DF_WS: Sr = K; Sc = N; T = M; per = 2 * R + C + T - 2; break;
    case DF_IS: Sr = K; Sc = M; T = N; per = 2 * R + C + T - 2; break;
    default: Sr = M; Sc = N; T = K; per = T + R + C - 2; break;
    }
    double rf = ceil(Sr / R), cf = ceil(Sc / C);
    o->folds = rf * cf;
    o->cycles_per_fold = per;
    o->compute_cycles = o->folds * per;
    o->mapping_efficiency = Sr * Sc / (o->folds * R * C);
    /* Operand elements read from / written to the array's SRAMs (SCALE-Sim's request counts). */
    switch (df) {
    case DF_WS:
        o->ifmap_reads = cf * M * K;
        o->filter_reads = K * N;
        o->ofmap_writes = rf * M * N;
        break;
    case DF_IS:
        o->ifmap_reads = M * K;
        o->filter_reads = cf * K * N;
        o->ofmap_writes = rf * M * N;
        break;
    default:
        o->ifmap_reads = cf * M * K;
        o->filter_reads = rf * K * N;
        o->ofmap_writes = M * N;
        break;
    }
}

/* DRAM elements read and written for one GEMM given the operand SRAMs (half of each usable). */
static void gemm_dram(const struct hw_array *a, double M, double K, double N, double e, double *rd, double *wr)
{
    double R = a->rows, C = a->cols;
    double in = M * K * e, w = K * N * e, out = M * N * e;
    int in_fits = in <= a->ifmap_bytes / 2, w_fits = w <= a->filter_bytes / 2, out_fits = out <= a->ofmap_bytes / 2;
    double rf, cf;
    switch (a->dataflow) {
    case DF_WS:
        rf = ceil(K / R);
        cf = ceil(N / C);
        *rd = in * (in_fits ? 1 : cf) + w + (out_fits ? 0 : (rf - 1) * out);
        *wr = out * (out_fits ? 1 : rf);
        break;
    case DF_IS:
        rf = ceil(K / R);
        cf = ceil(M / C);
        *rd = in + w * (w_fits ? 1 : cf) + (out_fits ? 0 : (rf - 1) * out);
        *wr = out * (out_fits ? 1 : rf);
        break;
    default:
        rf = ceil(M / R);
        cf = ceil(N / C);
        *rd = in * (in_fits ? 1 : cf) + w * (w_fits ? 1 : rf);
        *wr = out;
        break;
    }
}

enum op_status model_systolic_cycle(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                                    const struct exec_cfg *x, struct op_cost *c)
{
    if (!op_type_is_gemm(op->type) || !d->array.present) {
        if (!d->array.present && op_type_is_gemm(op->type))
            return OPS_NO_TIER; /* no array geometry to fold over */
        return model_roofline_cost(d, g, op, x, c);
    }
    /* Start from the analytical cost for support, precision and energy per MAC; replace the time. */
    enum op_status st = model_roofline_cost(d, g, op, x, c);
    if (st != OPS_OK)
        return st;
    const struct hw_array *a = &d->array;
    double e = prec_bytes(c->cprec), rd = 0, wr = 0, r1, w1;
    struct sa_gemm s1, s2;
    double gemms = op->gbatch;
    memset(&s2, 0, sizeof s2);
    if (op->type == OP_ATTENTION) { /* per batch x head: (S x hd) @ (hd x T), then (S x T) @ (T x hd) */
        model_systolic_gemm(a->rows, a->cols, a->dataflow, op->gm, op->gk, op->gn, &s1);
        model_systolic_gemm(a->rows, a->cols, a->dataflow, op->gm, op->gn, op->gk, &s2);
        gemm_dram(a, op->gm, op->gk, op->gn, e, &r1, &w1);
        rd += r1;
        wr += w1;
        gemm_dram(a, op->gm, op->gn, op->gk, e, &r1, &w1);
        rd += r1;
        wr += w1;
    } else {
        model_systolic_gemm(a->rows, a->cols, a->dataflow, op->gm, op->gk, op->gn, &s1);
        gemm_dram(a, op->gm, op->gk, op->gn, e, &rd, &wr);
    }
    /* count arrays take folds in turn: a layer's folds are dealt to them (ceil). */
    double per_fold = s1.compute_cycles / s1.folds, compute;
    if (a->count > 1) {
        compute = gemms * ceil(s1.folds / a->count) * per_fold;
        if (s2.folds > 0)
            compute += gemms * ceil(s2.folds / a->count) * (s2.compute_cycles / s2.folds);
    } else {
        compute = gemms * (s1.compute_cycles + s2.compute_cycles);
    }
    double clock = d->boost_Hz;
    for (int i = 0; i < d->n_compute; i++)
        if (d->compute[i].engine == ENG_MATRIX && d->compute[i].prec == c->cprec)
            clock = d->compute[i].clock_Hz;
    const struct hw_mem *dram = &d->mem[d->n_mem - 1];
    double bytes_per_cycle = dram->bandwidth_Bps * d->eff_memory / clock;
    double dram_bytes = gemms * (rd + wr);
    double stall = dram_bytes / bytes_per_cycle - compute;
    if (stall < 0)
        stall = 0;
    double macs = op->macs;
    c->cycles_compute = compute;
    c->cycles_stall = stall;
    c->mapping_efficiency = (s1.mapping_efficiency * s1.compute_cycles + s2.mapping_efficiency * s2.compute_cycles) /
                            (s1.compute_cycles + s2.compute_cycles);
    c->sram_reads = gemms * (s1.ifmap_reads + s1.filter_reads + s2.ifmap_reads + s2.filter_reads);
    c->sram_writes = gemms * (s1.ofmap_writes + s2.ofmap_writes);
    c->dram_reads = gemms * rd / e;
    c->dram_writes = gemms * wr / e;
    c->compute_s = compute / clock;
    c->memory_s = dram_bytes / (dram->bandwidth_Bps * d->eff_memory);
    c->time_s = (compute + stall) / clock + c->overhead_s;
    c->bound = c->overhead_s > (compute + stall) / clock ? BOUND_OVERHEAD : stall > 0 ? BOUND_MEMORY : BOUND_COMPUTE;
    c->mem_level = d->n_mem - 1;
    c->utilization = macs / ((double)a->rows * a->cols * a->count * (compute + stall) + 1e-300);
    if (c->utilization > 1)
        c->utilization = 1;
    /* Traffic per level: the operand SRAMs serve every array request; DRAM the refetches. */
    memset(c->bytes, 0, sizeof c->bytes);
    c->bytes[0] = (c->sram_reads + c->sram_writes) * e;
    c->bytes[d->n_mem - 1] = dram_bytes;
    c->energy_memory_J = c->bytes[0] * d->mem[0].energy_J_per_byte +
                         (d->n_mem > 1 ? dram_bytes * dram->energy_J_per_byte : 0);
    c->energy_static_J = d->idle_W * c->time_s;
    return OPS_OK;
}
