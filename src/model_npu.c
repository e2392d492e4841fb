/* model_npu.c -- the cycle-approximate tier of an NPU: a MAC array, a vector unit, a software-
 * managed scratchpad (the first sram level) and DMA from main memory (the last level).
 *
 * Compute: GEMM-like layers fold over the array as a systolic array does (model_systolic_gemm) when
 * the device describes one, else run at the matrix peak; other layers at the vector peak (the
 * array's pipeline on NPUs without one). Tiling, with half the (largest sram) scratchpad usable
 * (double buffering): a layer that fits runs whole; if its activations fit in a quarter of the
 * scratchpad they stay and the weights stream through once; otherwise the activations are cut into
 * n = ceil(activations / (scratchpad / 4)) tiles and the weights re-stream for each:
 *   DMA bytes = off-chip activations + weights x n (weights pinned on chip are not streamed; an
 *   intermediate activation within a quarter of the scratchpad stays on chip). DMA
 * overlaps compute across tiles (double buffering), not within the first and last:
 *   time = DMA/n + (n - 1) max(DMA, compute)/n + compute/n + per-layer overhead
 *        = max(DMA, compute) + min(DMA, compute)/n + per-layer overhead.
 * Operators the NPU does not run fall back to the system's CPU (eval.c) with transfer costs. A dataflow
 * NPU (hwdesc contexts) keeps weights and activations on chip: only graph inputs come by DMA, and its
 * contexts' reloads are costed once per pass (eval.c, eval_contexts). */
#include <math.h>
#include <string.h>

#include "model.h"

enum op_status model_npu_cycle(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                               const struct exec_cfg *x, struct op_cost *c)
{
    enum op_status st = model_roofline_cost(d, g, op, x, c);
    if (st != OPS_OK || wl_op_is_view(op))
        return st;
    int sp = -1, last = d->n_mem - 1;
    for (int l = 0; l < last; l++) /* the scratchpad: the largest on-chip sram level */
        if (d->mem[l].kind == MEM_SRAM && (sp < 0 || d->mem[l].capacity_bytes > d->mem[sp].capacity_bytes))
            sp = l;
    if (sp < 0)
        return OPS_NO_TIER; /* no scratchpad described */
    double half = d->mem[sp].capacity_bytes / 2;
    /* Intermediate activations that fit in a quarter of the scratchpad stay on chip between layers;
     * graph inputs, KV caches and larger activations come and go by DMA. */
    double w = 0, w_dma = 0, act = 0, act_dma = model_extra_bytes(g, op, x);
    int w_pinned = 0; /* weights stay on chip only by the stack's memory plan (pass_plan_memory) */
    for (int k = 0; k <= op->n_in; k++) { /* inputs as read: an embedding's rows, an expert bank's experts */
        int ti = k < op->n_in ? op->in[k] : op->out[0], planned = model_planned_home(x, ti);
        const struct wl_tensor *t = &g->t[ti];
        double b = k < op->n_in ? model_in_bytes(g, op, k, x) : model_out_bytes(g, op, 0, x);
        int on_chip = planned >= 0 ? planned < last : -1; /* the stack's memory plan, where it has one */
        if (d->ctx.present) /* a dataflow NPU: weights and activations stay on chip (eval.c: contexts) */
            on_chip = t->kind != WL_INPUT;
        if (t->kind == WL_WEIGHT) {
            w += b;
            w_dma += (on_chip >= 0 ? !on_chip : !w_pinned) ? b : 0;
            continue;
        }
        act += b;
        if (on_chip >= 0 ? !on_chip : t->kind != WL_ACT || b > half / 2)
            act_dma += b;
    }
    /* Tiles: everything fits; or the activations stay and the weights stream through once; or the
     * activations are cut into tiles of a quarter of the scratchpad and the weights re-stream per tile. */
    double tiles = 1;
    if (w + act > half && act > half / 2)
        tiles = ceil(act / (half / 2));
    double dma = act_dma + w_dma * tiles;
    double bw = d->mem[last].bandwidth_Bps * d->eff_memory;
    double dma_s = dma / bw;
    double peak = 0;
    if (op_type_is_gemm(op->type) && d->array.present) {
        struct sa_gemm s;
        model_systolic_gemm(d->array.rows, d->array.cols, d->array.dataflow, op->gm, op->gk, op->gn, &s);
        double clock = d->boost_Hz, cyc = ceil(s.folds / d->array.count) * s.cycles_per_fold * op->gbatch *
                                                (op->type == OP_ATTENTION ? 2 : 1);
        c->cycles_compute = cyc;
        c->mapping_efficiency = s.mapping_efficiency;
        c->compute_s = cyc / clock / (d->eff_compute * model_gemm_eff(d, op, c->cprec, 0));
    } else {
        peak = op_type_is_gemm(op->type) ? hw_gemm_peak(d, c->cprec, NULL) : hw_vector_peak(d, c->cprec, NULL);
        c->compute_s = peak > 0 ? op->flops / (peak * (op_type_is_gemm(op->type) ? d->eff_compute : d->eff_vector)) : 0;
        c->cycles_compute = c->compute_s * d->boost_Hz;
    }
    memset(c->bytes, 0, sizeof c->bytes);
    c->bytes[last] = dma;
    c->bytes[sp] = w + act;
    c->memory_s = dma_s;
    c->mem_level = last;
    /* Pipeline of n tiles: fill (first DMA), n - 1 overlapped steps, drain (last compute):
     * DMA/n + (n - 1) max(DMA, compute)/n + compute/n = max(DMA, compute) + min(DMA, compute)/n. */
    double lo = dma_s < c->compute_s ? dma_s : c->compute_s;
    c->overhead_s = model_launch_s(d, op, x) + lo / tiles;
    c->energy_memory_J = c->bytes[last] * d->mem[last].energy_J_per_byte + c->bytes[sp] * d->mem[sp].energy_J_per_byte;
    c->dram_reads = dma / prec_bytes(c->cprec);
    model_finish(d, op, c);
    return OPS_OK;
}
