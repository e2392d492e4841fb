/* model_roofline.c -- the analytical tier: a multi-level roofline per operator.
 *
 *   compute_s  = flops / (peak(engine, precision) x efficiency of the operator's class: matmul,
 *                matmul_skinny, conv2d, conv2d_depthwise, attention, attention_decode, softmax,
 *                norm, eltwise; efficiency.compute for the GEMM-like ones and efficiency.vector for
 *                the rest unless per_class says; calibrated per class x, for GEMM-like ones, the
 *                kernel terms of model_gemm_eff: precision, K depth, tile/wave/fold quantization);
 *                on a CPU x s for a depthwise convolution of stride s (its vectors gather lanes),
 *                whose peak is the vector lanes' (cpu_depthwise_peak: no dot product to pack)
 *   home(x)    = the memory level an operand lives in: where the software stack's memory planner
 *                puts it (pass_plan_memory: weights pinned in a scratchpad, activations kept on
 *                chip), else the last level, except that an activation stays in the nearest on-chip
 *                level (sram or cache; not level 0 of a device with 3 or more levels, which is
 *                private per core) that it fits in half of. An operand a fused kernel keeps inside
 *                (pass.h: fused_in, fused_out) moves no bytes.
 *   bytes_l    = traffic through level l of every operand whose home is l or farther: each read
 *                once and each result written once (on a CPU, twice at main memory: write-allocate
 *                caches read a line before writing it); for GEMM-like ops the tiled traffic re-reads
 *                operand A once per output-column tile and B once per output-row tile of side
 *                t = floor(sqrt(S / (ea + eb + 4))), S being the capacity of the levels nearer the
 *                compute than l (the 4 bytes hold an fp32 accumulator). Level 0 sees no tiling.
 *   memory_s   = max over levels of bytes_l / (bandwidth_l x efficiency of level l), at main memory
 *                (bytes + bw_half_bytes) / (...) (model_mem_s: small kernels reach less bandwidth)
 *   (with x->warm, as in a kernel timed over repeated runs, every tensor lives in the nearest level
 *   whose half holds it)
 *   prep_s     = on a CPU, a phase before the op (model_cpu_prep_s): a GEMM's set-up and the copy of
 *                its operands into packed panels (left and right elements / their rates), or a
 *                grouped convolution's per-group cost
 *   CPU cores  = an op below MODEL_GRAIN_ELEMS output elements (GEMM-like: MODEL_GRAIN_MACS) runs on
 *                one core, above it on n = x->threads cores (all by default): compute_s and memory_s
 *                x cores / n, + fork_join_us when n > 1
 *   time_s     = max(compute_s, memory_s) + s x min(compute_s, memory_s) + launches x per-kernel
 *                overhead (per_op_us, or graph_node_us under launch elimination) + prep_s
 *                + on a GPU, a split-K GEMM's reduction of its fp32 partials (model_gpu_tiling)
 *                (compute and transfers overlap but for the fraction s = efficiency.serial_fraction,
 *                default 0: the pure roofline)
 *   energy     = MACs x E_mac(precision) + other FLOPs x E_mac(vector precision) / 2
 *                + sum_l bytes_l x E_byte(l) + idle power x time_s
 * The ops of one fused kernel are then combined into one roofline (eval.c: kernel_rooflines).
 * Views (reshape, slice) and folded ops cost nothing. An embedding reads only the gathered rows.
 * Attention is fused (no score matrix is written), as FlashAttention-style kernels do, unless the
 * stack has no fused kernel: then QK^T and PV run as GEMMs over the whole S x T matrix at the matmul
 * efficiency, the softmax at the vector peak, and the scores cross main memory 4 times (written,
 * read, written, read); a KV cache grown by concatenation is copied every step (read + written). An expert bank (MoE) reads the
 * D of its E experts the step's tokens reach (wl.h). Williams, Waterman, Patterson,
 * "Roofline", CACM 2009; tiling bound after Hong and Kung, STOC 1981. */
#include "model.h"

#include <math.h>
#include <string.h>

const char *const bound_names[BOUND_COUNT + 1] = {"compute", "memory", "overhead", "none", "network", NULL};

static int vector_prec(const struct hw_device *d, enum prec want, double *peak, enum hw_engine *eng)
{
    /* Element-wise work runs at the activation precision when the device has it; integer and
     * low-precision activations are otherwise processed in the narrowest float it has. */
    static const enum prec order[] = {P_FP16, P_BF16, P_FP32};
    if ((*peak = hw_vector_peak(d, want, eng)) > 0)
        return want;
    for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++)
        if ((*peak = hw_vector_peak(d, order[i], eng)) > 0)
            return order[i];
    return -1;
}

/* A CPU's depthwise convolution: each channel sums only its kh x kw window, so there is no run of
 * adjacent input channels to pack into a dot-product instruction (AMX tiles, AVX512-VNNI VPDPBUSD and
 * ARM SDOT reduce 4 int8 products, VDPBF16PS and BFDOT 2 bf16 ones, per 32-bit lane). oneDNN's depthwise
 * int8 kernel widens each byte to a 32-bit lane (vpmovzxbd / vpmovsxbd) and multiplies and adds lane by
 * lane (jit_uni_x8s8s32x_dw_conv_kernel.cpp, OpenVINO's mkl-dnn fork): one MAC per 32-bit lane, the fp32
 * FMA rate. So integer, bf16 and fp8 depthwise convolutions run at the vector engine's fp32 peak; fp16
 * at its fp16 peak where the cores have fp16 lanes (AVX512-FP16, ARM FMLA), else fp32; fp32 and fp64 at
 * their own. (ARM's int8 kernels can widen to 16-bit lanes, SMLAL, twice the fp32 lanes: not modelled.) */
static double cpu_depthwise_peak(const struct hw_device *d, enum prec cp, enum hw_engine *eng, double gemm_peak)
{
    double v = 0;
    if (cp == P_FP32 || cp == P_FP64 || cp == P_FP16)
        v = d->peak[ENG_VECTOR][cp];
    if (!(v > 0))
        v = d->peak[ENG_VECTOR][P_FP32];
    if (!(v > 0))
        return gemm_peak; /* no vector figure to fall back on: the device's own GEMM rate */
    *eng = ENG_VECTOR;
    return v < gemm_peak ? v : gemm_peak;
}

int model_op_prec(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                  const struct prec_cfg *p, enum hw_engine *eng, double *peak)
{
    if (wl_op_is_view(op)) {
        *peak = 0;
        *eng = ENG_VECTOR;
        return p->a;
    }
    if (op_type_is_gemm(op->type)) {
        enum prec a = model_tensor_prec(&g->t[op->in[0]], p), b = model_tensor_prec(&g->t[op->in[1]], p);
        enum prec cp = prec_compute(b, a);
        *peak = hw_gemm_peak(d, cp, eng);
        if (*peak > 0 && d->cls == HW_CPU && model_eff_class(op) == EC_CONV_DW)
            *peak = cpu_depthwise_peak(d, cp, eng, *peak);
        return *peak > 0 ? (int)cp : -1;
    }
    return vector_prec(d, p->a, peak, eng);
}

/* The level tensor ti (read as `bytes`) lives in: the stack's memory plan, else the rule of the
 * header comment. */
static int home_level(const struct hw_device *d, const struct wl_graph *g, int ti, double bytes,
                      const struct exec_cfg *x)
{
    const struct wl_tensor *t = &g->t[ti];
    int last = d->n_mem - 1, first = hw_first_shared_level(d), planned = model_planned_home(x, ti);
    if (d->ctx.present && t->kind != WL_INPUT) { /* a dataflow NPU keeps weights and activations on chip
                                                    (its contexts' reloads are eval.c's, per pass) */
        int sp = -1;
        for (int l = 0; l < last; l++)
            if (d->mem[l].kind == MEM_SRAM && (sp < 0 || d->mem[l].capacity_bytes > d->mem[sp].capacity_bytes))
                sp = l;
        if (sp >= 0)
            return sp;
    }
    if (planned >= 0 && planned <= last && !x->warm)
        return planned;
    if (x->warm) { /* a kernel timed over repeated runs: its tensors stay where they fit */
        for (int l = first; l < last; l++)
            if (bytes <= 0.5 * d->mem[l].capacity_bytes)
                return l;
        return last;
    }
    if (t->kind == WL_ACT) {
        for (int l = first; l < last; l++)
            if ((d->mem[l].kind == MEM_SRAM || d->mem[l].kind == MEM_CACHE) && bytes <= 0.5 * d->mem[l].capacity_bytes)
                return l;
    }
    return last;
}

enum op_status model_roofline_cost(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                                   const struct exec_cfg *x, struct op_cost *c)
{
    const struct prec_cfg *p = &x->prec;
    if (!(d->ops_mask & (1u << op->type)))
        return OPS_UNSUPPORTED_OP;
    enum hw_engine eng;
    double peak;
    int cp = model_op_prec(d, g, op, p, &eng, &peak);
    if (cp < 0)
        return OPS_UNSUPPORTED_PREC;
    memset(c, 0, sizeof *c);
    c->cprec = (enum prec)cp;
    c->engine = eng;
    c->mem_level = d->n_mem - 1;
    if (wl_op_is_view(op)) {
        c->bound = BOUND_NONE;
        return OPS_OK;
    }

    /* Operands: A (input 0), B (input 1, and for attention every key/value input), the rest, and the
     * outputs; each with its bytes and home level. */
    double bytes_of[WL_MAX_IN + WL_MAX_OUT + 1];
    int home[WL_MAX_IN + WL_MAX_OUT + 1], role[WL_MAX_IN + WL_MAX_OUT + 1], n = 0;
    for (int k = 0; k < op->n_in; k++, n++) {
        bytes_of[n] = model_in_bytes(g, op, k, x); /* an embedding's rows, an expert bank's experts; 0 fused */
        home[n] = home_level(d, g, op->in[k], bytes_of[n], x);
        role[n] = k == 0 ? 0 : (k == 1 || op->type == OP_ATTENTION) ? 1 : 2;
    }
    for (int k = 0; k < op->n_out; k++, n++) {
        bytes_of[n] = model_out_bytes(g, op, k, x);
        home[n] = home_level(d, g, op->out[k], bytes_of[n], x);
        role[n] = 2;
    }
    double extra = model_extra_bytes(g, op, x); /* unfused scores, a concatenated cache */
    if (extra > 0) {
        bytes_of[n] = extra;
        home[n] = d->n_mem - 1;
        role[n++] = 2;
    }

    double inner_cap = 0;
    for (int l = 0; l < d->n_mem; l++) {
        /* A CPU's write-back caches fill a line before a store to it: an output in main memory is
         * read and written (write-allocate), so 2x its bytes cross that level. */
        double wa = d->cls == HW_CPU && l == d->n_mem - 1 ? 2 : 1;
        double ra = 1, rb = 1; /* re-reads of A and B from the tiling at this level */
        if (op_type_is_gemm(op->type) && l > 0 && inner_cap > 0 && op->gbatch > 0) {
            double ea = prec_bytes(c->cprec), eb = ea;
            double t = floor(sqrt(inner_cap / (ea + eb + 4)));
            if (t < 1)
                t = 1;
            ra = ceil(op->gn / t);
            rb = ceil(op->gm / t);
        }
        double bytes = 0;
        for (int k = 0; k < n; k++)
            if (home[k] >= l)
                bytes += bytes_of[k] * (role[k] == 0 ? ra : role[k] == 1 ? rb : 1) *
                         (k >= op->n_in && k < op->n_in + op->n_out ? wa : 1);
        c->bytes[l] = bytes;
        double s = model_mem_s(d, op, l, bytes, d->mem[l].bandwidth_Bps * d->eff_level[l]);
        if (s >= c->memory_s) {
            c->memory_s = s;
            c->mem_level = l;
        }
        c->energy_memory_J += bytes * d->mem[l].energy_J_per_byte;
        inner_cap += d->mem[l].capacity_bytes;
    }

    enum hw_eff_class ec = model_eff_class(op);
    struct gpu_tiling gt; /* a GPU GEMM's kernel, chosen once */
    int gpu_gemm = model_gpu_gemm(d, op);
    if (gpu_gemm)
        model_gpu_tiling(d, op, c->cprec, &gt);
    c->compute_s =
        peak > 0 ? op->flops / (peak * d->eff_class[ec] * model_gemm_eff_tiled(d, op, c->cprec, 1, gpu_gemm ? &gt : NULL)) : 0;
    if (op->type == OP_ATTENTION && op->attn_unfused && peak > 0) {
        /* QK^T and PV as GEMMs over the whole S x T matrix (masked scores are computed too), the
         * softmax as a vector kernel */
        double sc = model_attention_scores(op), vpeak;
        enum hw_engine ve;
        enum hw_eff_class mc = op->gm <= MODEL_SKINNY_ROWS ? EC_MATMUL_SKINNY : EC_MATMUL;
        int vp = vector_prec(d, p->a, &vpeak, &ve);
        c->compute_s = 4 * sc * op->gk / (peak * d->eff_class[mc]) +
                       (vp >= 0 && vpeak > 0 ? 5 * sc / (vpeak * d->eff_class[EC_SOFTMAX]) : 0);
    }
    c->overhead_s = model_launch_s(d, op, x) + model_cpu_prep_s(d, op);
    if (gpu_gemm) { /* split-K's partial sums: a serial phase after the main loop */
        c->overhead_s += gt.red_s;
        c->bytes[d->n_mem - 1] += gt.red_bytes;
        c->energy_memory_J += gt.red_bytes * d->mem[d->n_mem - 1].energy_J_per_byte;
    }
    if (d->cls == HW_CPU) {
        if (ec == EC_CONV_DW && op->sw > 1)
            c->compute_s *= op->sw; /* stride-s taps gather their lanes with shuffles (NCHW, vectors along W) */
        /* n cores of the device's `cores` in use (x->threads, else all; one below the grain) get
         * n / cores of the peak and of every level's bandwidth; running on more than one costs a
         * fork/join. */
        double cores = model_cpu_cores(d);
        double used = x->threads > 0 && x->threads < cores ? x->threads : cores;
        if (!model_cpu_parallel(g, op))
            used = 1;
        if (used > 1)
            c->overhead_s += d->fork_join_s;
        if (used < cores) {
            c->idle_share = 1 - used / cores;
            c->compute_s *= cores / used;
            c->memory_s *= cores / used;
        }
    }
    double busy = model_busy_s(d, c->compute_s, c->memory_s);
    c->time_s = busy + c->overhead_s;
    if (c->overhead_s > busy)
        c->bound = BOUND_OVERHEAD;
    else
        c->bound = c->compute_s >= c->memory_s ? BOUND_COMPUTE : BOUND_MEMORY;
    /* of the device's peak: not compute_s x eff, which the one-core and stride factors above inflate */
    c->utilization = c->time_s > 0 && peak > 0 ? op->flops / peak / c->time_s : 0;

    double mac_J = d->mac_J[eng][c->cprec];
    double vec_peak;
    enum hw_engine veng;
    int vp = vector_prec(d, p->a, &vec_peak, &veng);
    double flop_J = vp >= 0 ? d->mac_J[veng][vp] / 2 : mac_J / 2;
    double other = op->flops - 2 * op->macs;
    c->energy_compute_J = op->macs * mac_J + (other > 0 ? other : 0) * flop_J;
    c->energy_static_J = d->idle_W * c->time_s;
    return OPS_OK;
}
