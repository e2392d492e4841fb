/* model.c -- the table of device classes. The analytical tier shares one roofline across classes;
 * each class adds the checks its cost model relies on and its cycle-approximate tier, which needs
 * the class's execution description in the hwdesc (array, gpu, cpu, or a scratchpad for an NPU):
 * without it the cycle tier is refused, not faked. */
#include "model.h"

#include <math.h>

static int need_engine(const struct hw_device *d, enum hw_engine e, const char *why, struct dse_err *err)
{
    for (int i = 0; i < d->n_compute; i++)
        if (d->compute[i].engine == e)
            return DSE_OK;
    return dse_err_set(err, DSE_EINPUT, NULL, NULL, "device '%s' (class %s) has no %s engine: %s", d->name,
                       hw_class_names[d->cls], hw_engine_names[e], why);
}

static int check_cpu(const struct hw_device *d, struct dse_err *e)
{
    return need_engine(d, ENG_VECTOR, "a CPU computes with SIMD units", e);
}

static int check_gpu(const struct hw_device *d, struct dse_err *e)
{
    return need_engine(d, ENG_VECTOR, "a GPU runs element-wise work on its CUDA/vector cores", e);
}

static int check_array(const struct hw_device *d, struct dse_err *e)
{
    return need_engine(d, ENG_MATRIX, "systolic arrays and NPUs compute GEMMs on a MAC array", e);
}

static const struct device_model models[HW_CLASS_COUNT] = {
    [HW_CPU] = {"cpu", "analytical+cycle", check_cpu, model_roofline_cost, model_cpu_cycle},
    [HW_GPU] = {"gpu", "analytical+cycle", check_gpu, model_roofline_cost, model_gpu_cycle},
    [HW_SYSTOLIC] = {"systolic", "analytical+cycle", check_array, model_roofline_cost, model_systolic_cycle},
    [HW_NPU] = {"npu", "analytical+cycle", check_array, model_roofline_cost, model_npu_cycle},
};

int model_cpu_parallel(const struct wl_graph *g, const struct wl_op *op)
{
    if (op_type_is_gemm(op->type))
        return op->macs >= MODEL_GRAIN_MACS;
    return op->n_out > 0 && g->t[op->out[0]].elems >= MODEL_GRAIN_ELEMS;
}

double model_cpu_cores(const struct hw_device *d)
{
    double cores = 1;
    for (int i = 0; i < d->n_compute; i++)
        if (d->compute[i].units > cores)
            cores = d->compute[i].units;
    return cores;
}

double model_busy_s(const struct hw_device *d, double compute_s, double memory_s)
{
    double hi = compute_s > memory_s ? compute_s : memory_s, lo = compute_s > memory_s ? memory_s : compute_s;
    return hi + d->serial_fraction * lo;
}

enum prec model_tensor_prec(const struct wl_tensor *t, const struct prec_cfg *p)
{
    return t->kind == WL_WEIGHT ? p->w : t->kind == WL_KV ? p->kv : p->a;
}

/* CPU BLAS libraries (GotoBLAS, BLIS, oneDNN) copy both GEMM operands into contiguous panels laid out
 * for the register micro-kernel, in a phase the multiply does not overlap. The left operand is cut
 * into panels of mr rows, a transposition; the right one into panels of nr columns, row pieces
 * copied whole; their rates differ (on this project's 2-vCPU host the left packs about 4x slower per
 * element), so each has its own: overhead.pack_left_Gelem_per_s and pack_right_Gelem_per_s, fitted by
 * dse calibrate. Counted in elements, not bytes: packing is a shuffle (for bf16, fp16 and int8 also
 * a widening or a bias) per element, slower than the bandwidth of the level it reads. A matmul packs
 * its inputs in order; a convolution, in the NCHW layout of PyTorch's CPU path and of dse's kernel,
 * is W (OC x C KH KW) times the input unfolded by im2col (C KH KW x OH OW), so its weights pack as the
 * left operand and the unfolded input as the right, counted twice (im2col writes it, packing copies
 * it) unless the convolution is 1 x 1 with stride 1, whose input is already the GEMM operand. (A
 * stride-s im2col costing 1 + s copies fitted the scalar gather dse's kernel once had; with the
 * vector gather it now has, 2 fits best.) The call also has a fixed cost, overhead.gemm_setup_us
 * (packing buffers, a parallel region and its barriers). Skinny GEMMs (MODEL_SKINNY_ROWS) are left
 * unpacked, as matrix-vector kernels do. Re-packing for every row block of a tall operand is not
 * counted. A grouped or depthwise convolution runs group by group, each paying
 * overhead.per_group_us (its loop set-up and edges: 14 x 14 depthwise planes ran at 2/3 the rate
 * of 56 x 56 ones). */
double model_cpu_prep_s(const struct hw_device *d, const struct wl_op *op)
{
    enum hw_eff_class ec = model_eff_class(op);
    if (d->cls == HW_CPU && ec == EC_CONV_DW) /* group by group: a small plane each (depthwise) */
        return op->gbatch * d->per_group_s;
    if (d->cls != HW_CPU || (ec != EC_MATMUL && ec != EC_CONV) || op->gm <= MODEL_SKINNY_ROWS)
        return 0;
    double in = op->gbatch * op->gk * op->gm, w = op->gbatch * op->gk * op->gn; /* elements of the two views */
    double left = ec == EC_CONV ? w : in, right = ec == EC_CONV ? in : w, s = d->gemm_setup_s;
    if (ec == EC_CONV && (op->kh * op->kw > 1 || op->sh > 1 || op->sw > 1))
        right *= 2; /* im2col unfolds the input, then packing copies it */
    if (d->pack_elem_per_s[0] > 0)
        s += left / d->pack_elem_per_s[0];
    if (d->pack_elem_per_s[1] > 0)
        s += right / d->pack_elem_per_s[1];
    return s;
}

enum hw_eff_class model_eff_class(const struct wl_op *op)
{
    const struct op_info *oi = &op_info[op->type];
    /* a grouped convolution is a depthwise kernel when its groups hold fewer than 8 input channels each
     * (gk = C / groups x kh x kw); wider groups run as a batch of dense convolutions (ResNeXt, RegNet) */
    int alt = (oi->narrow == NARROW_ROWS && op->gm <= MODEL_SKINNY_ROWS) ||
              (oi->narrow == NARROW_GROUPED && op->groups > 1 && op->gk < 8.0 * op->kh * op->kw);
    return alt ? oi->eff_alt : oi->eff;
}

const char *const fidelity_names[FID_COUNT + 1] = {"analytical", "cycle", NULL};

double model_in_bytes(const struct wl_graph *g, const struct wl_op *op, int slot, const struct exec_cfg *x)
{
    if (!x->nofuse && (op->fused_in & (1u << slot)))
        return 0;
    return wl_op_read_bytes(g, op, slot, &x->prec);
}

double model_out_bytes(const struct wl_graph *g, const struct wl_op *op, int slot, const struct exec_cfg *x)
{
    if (!x->nofuse && (op->fused_out & (1u << slot)))
        return 0;
    return wl_tensor_bytes(&g->t[op->out[slot]], &x->prec);
}

double model_launch_s(const struct hw_device *d, const struct wl_op *op, const struct exec_cfg *x)
{
    double n = op->launches;
    if (x->nofuse && !wl_op_is_view(op) && n < 1) /* cut out of its kernel: a launch of its own */
        n = 1;
    return n * (x->graph_capture ? d->graph_node_s : d->per_op_s);
}

int model_planned_home(const struct exec_cfg *x, int t) { return x->home ? x->home[t] : -1; }

double model_attention_scores(const struct wl_op *op) { return op->gbatch * op->gm * op->gn; }

/* The K loop and waves of tiling t at `split` K chunks, and what reducing their partials costs. */
static void tiling_split(const struct hw_device *d, const struct wl_op *op, double tiles, double split,
                         struct gpu_tiling *t)
{
    const struct hw_gpu *gp = &d->gpu;
    t->split = split;
    t->tiles = tiles * split;
    /* whole waves, less the share of the last one's idle SMs the library puts to work (gemm_wave_tail) */
    double wf = t->tiles / t->conc;
    t->waves = wf + (1 - d->gemm_wave_tail) * (ceil(wf) - wf);
    /* a CTA steps through K tile_k at a time: a chunk shorter than a step costs a whole one (so a deeper
     * K split further is never cheaper than a shallower one) */
    t->kc = ceil(op->gk / split);
    if (gp->tile_k > 0)
        t->kc = ceil(t->kc / gp->tile_k) * gp->tile_k;
    t->red_bytes = t->red_s = 0;
    if (split > 1) {
        int last = d->n_mem - 1;
        t->red_bytes = 2 * 4 * split * op->gbatch * op->gm * op->gn;
        t->red_s = model_mem_s(d, op, last, t->red_bytes, d->mem[last].bandwidth_Bps * d->eff_level[last]);
    }
}

/* Seconds of tiling t's main loop (padding included: every CTA of a wave runs its whole tile) at rate
 * FLOP/s and the depth term (model_gemm_depth) */
static double main_loop_s(const struct hw_device *d, const struct wl_op *op, const struct gpu_tiling *t,
                          double rate)
{
    return t->waves * t->conc * 2 * t->tm * t->tn * t->kc / (rate * model_gemm_depth(d, op, t));
}

void model_gpu_tiling(const struct hw_device *d, const struct wl_op *op, enum prec p, struct gpu_tiling *t)
{
    const struct hw_gpu *gp = &d->gpu;
    double M = op->gm, N = op->gn, K = op->gk, pm = 16, pn = 16;
    t->conc = (double)gp->sms * gp->ctas_per_sm;
    t->tm = gp->tile_m;
    t->tn = gp->tile_n;
    while (pm < M && pm < t->tm)
        pm *= 2;
    while (pn < N && pn < t->tn)
        pn *= 2;
    t->tm = pm < t->tm ? pm : t->tm;
    t->tn = pn < t->tn ? pn : t->tn;
    t->tiles_m = ceil(M / t->tm);
    t->tiles_n = ceil(N / t->tn);
    double tiles = op->gbatch * t->tiles_m * t->tiles_n, split = 1;
    if (tiles < t->conc) { /* split-K, up to one chunk of tile_k per CTA */
        split = floor(t->conc / tiles);
        double kmax = ceil(K / gp->tile_k);
        if (split > kmax)
            split = kmax;
        if (gp->split_k_max >= 1 && split > gp->split_k_max) /* the library's limit (1: no split-K) */
            split = gp->split_k_max;
        if (split < 1)
            split = 1;
    }
    tiling_split(d, op, tiles, split, t);
    if (split <= 1)
        return;
    /* A library's heuristic runs split-K only where it pays: keep the unsplit kernel when it takes no
     * longer than the split one plus the reduction (main loops at the precision's rate with the depth
     * terms of model_gemm_eff, each overlapped with the operands' main-memory traffic). */
    double rate = 0;
    for (int e = 0; e < ENG_COUNT; e++)
        if (d->peak[e][p] > rate)
            rate = d->peak[e][p];
    rate *= d->eff_class[model_eff_class(op)] * d->eff_prec[p];
    if (!(rate > 0))
        return;
    /* a memory-bound GEMM gains nothing from a shorter main loop: both kernels stream A, B and C once
     * from main memory (an estimate at precision p), overlapped with their main loops */
    int last = d->n_mem - 1;
    double e = prec_bytes(p), mem = model_mem_s(d, op, last, op->gbatch * (M * K + K * N + M * N) * e,
                                                d->mem[last].bandwidth_Bps * d->eff_level[last]);
    struct gpu_tiling one = *t;
    tiling_split(d, op, tiles, 1, &one);
    double s1 = main_loop_s(d, op, &one, rate), ss = main_loop_s(d, op, t, rate);
    if ((s1 > mem ? s1 : mem) <= (ss > mem ? ss : mem) + t->red_s)
        *t = one;
}

void model_gpu_unsplit(const struct hw_device *d, const struct wl_op *op, struct gpu_tiling *t)
{
    if (t->split > 1)
        tiling_split(d, op, t->tiles / t->split, 1, t);
}

double model_gemm_depth(const struct hw_device *d, const struct wl_op *op, const struct gpu_tiling *t)
{
    enum hw_eff_class ec = model_eff_class(op);
    if (!(op->gk > 0) || (ec != EC_MATMUL && ec != EC_MATMUL_SKINNY))
        return 1;
    double k = t ? t->kc : op->gk, kh = d->gemm_k_half + (t ? d->gemm_k_fill / t->waves : 0);
    return kh > 0 ? k / (k + kh) : 1;
}

double model_gemm_eff_tiled(const struct hw_device *d, const struct wl_op *op, enum prec p, int quantize,
                            const struct gpu_tiling *t)
{
    if (!op_type_is_gemm(op->type))
        return 1;
    /* the depth term of a GEMM library's matmul kernels (fitted on them: hwdesc/arch); attention's K is a
     * head dimension and convolutions run other kernels, neither fitted: not applied */
    double f = d->eff_prec[p] * model_gemm_depth(d, op, t);
    if (!quantize || !(op->macs > 0))
        return f;
    if (t) {
        f *= op->gbatch * op->gm * op->gn * op->gk / (t->waves * t->conc * t->tm * t->tn * t->kc);
    } else if (d->array.present) {
        struct sa_gemm s;
        model_systolic_gemm(d->array.rows, d->array.cols, d->array.dataflow, op->gm, op->gk, op->gn, &s);
        f *= s.mapping_efficiency;
    } else if (d->cls == HW_CPU && d->cpu.present) {
        double mr = d->cpu.mr, nr = d->cpu.nr;
        f *= op->gm * op->gn / (ceil(op->gm / mr) * mr * ceil(op->gn / nr) * nr);
    }
    return f;
}

int model_gpu_gemm(const struct hw_device *d, const struct wl_op *op)
{
    return d->cls == HW_GPU && d->gpu.present && op_type_is_gemm(op->type) && op->type != OP_ATTENTION && op->macs > 0;
}

double model_gemm_eff(const struct hw_device *d, const struct wl_op *op, enum prec p, int quantize)
{
    if (!op_type_is_gemm(op->type))
        return 1;
    struct gpu_tiling t;
    int gpu = model_gpu_gemm(d, op);
    if (gpu)
        model_gpu_tiling(d, op, p, &t);
    return model_gemm_eff_tiled(d, op, p, quantize, gpu ? &t : NULL);
}

double model_mem_factor(const struct hw_device *d, const struct wl_op *op)
{
    double fn = op->type == OP_ELTWISE && op->fn > FN_NONE && op->fn < FN_COUNT ? d->eff_fn[op->fn] : 1;
    return d->eff_mclass[model_eff_class(op)] * fn;
}

/* Row kernels (sarathi-serve's csrc at c94dbf4, branch vidur, as vLLM's: rms_norm_kernel and
 * silu_and_mul_kernel launch grid(num_tokens), block(min(d, 1024)); rotary_embedding_kernel grid(num_tokens),
 * block(min(heads x rot_dim / 2, 512)) over rotation pairs). Each thread loops over its row `iters` times,
 * each step a dependent round trip to memory, so a row takes iters x iter_s however wide the memory is;
 * rows run `resident` at a time: sms x threads_per_sm / threads CTAs (at most 32 per SM). The kernel's
 * memory time is at least waves x iters x iter_s (Little's law: with few rows in flight the bytes moving
 * at once, not the bandwidth, bound it; the fitted iter_s covers a norm's two passes and its reduction). */
int model_row_kind(const struct wl_op *op)
{
    if (!op->launches)
        return -1; /* inside another op's kernel: that kernel's grid */
    if (model_eff_class(op) == EC_NORM)
        return RK_NORM;
    if (op->type == OP_ELTWISE && op->fn == FN_ROPE)
        return RK_ROPE;
    if (op->type == OP_ELTWISE && op->fn == FN_MUL)
        return RK_MUL;
    return -1;
}

double model_row_floor_s(const struct hw_device *d, const struct wl_op *op)
{
    int k = d->cls == HW_GPU && d->gpu.present && d->gpu.sms > 0 && d->row_threads_per_sm > 0 ? model_row_kind(op) : -1;
    if (k < 0 || !(d->row_iter_s[k] > 0) || !(op->rows >= 1) || !(op->cols >= 1))
        return 0;
    double work = k == RK_ROPE ? ceil(op->cols / 2) : op->cols, cap = k == RK_ROPE ? 512 : 1024;
    double threads = work < cap ? work : cap, per_sm = floor(d->row_threads_per_sm / threads);
    per_sm = per_sm < 1 ? 1 : per_sm > 32 ? 32 : per_sm;
    return ceil(op->rows / (d->gpu.sms * per_sm)) * ceil(work / threads) * d->row_iter_s[k];
}

double model_mem_s(const struct hw_device *d, const struct wl_op *op, int l, double bytes, double bw)
{
    if (!(bytes > 0))
        return 0;
    /* a kernel's achieved share of bandwidth (its class's and, element-wise, its function's factor) at
     * whichever level bounds it: the library's kernel, not the memory, sets it; the small-transfer term and
     * a row kernel's latency floor at main memory */
    double k = model_mem_factor(d, op);
    if (l != d->n_mem - 1)
        return bytes / (bw * k);
    double t = (bytes + d->bw_half_bytes) / (bw * k), fl = model_row_floor_s(d, op);
    return t + fl;
}

double model_extra_bytes(const struct wl_graph *g, const struct wl_op *op, const struct exec_cfg *x)
{
    double extra = 0;
    if (op->type != OP_ATTENTION)
        return 0;
    if (op->attn_unfused)
        extra += 4 * model_attention_scores(op) * prec_bytes(x->prec.a);
    if (op->kv_concat)
        for (int k = 1; k < op->n_in; k++)
            extra += 2 * wl_op_read_bytes(g, op, k, &x->prec);
    return extra;
}

enum op_status model_cost(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                          const struct exec_cfg *x, struct op_cost *c)
{
    const struct device_model *m = &models[d->cls];
    if (x->fidelity == FID_CYCLE)
        return m->op_cost_cycle ? m->op_cost_cycle(d, g, op, x, c) : OPS_NO_TIER;
    return m->op_cost(d, g, op, x, c);
}

const struct device_model *model_for(enum hw_class cls)
{
    return (unsigned)cls < HW_CLASS_COUNT ? &models[cls] : NULL;
}
