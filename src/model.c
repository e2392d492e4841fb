/* model.c -- the table of device classes. The analytical tier shares one roofline across classes;
 * each class adds the checks its cost model relies on and its cycle-approximate tier, which needs
 * the class's execution description in the hwdesc (array, gpu, cpu, or a scratchpad for an NPU):
 * without it the cycle tier is refused, not faked. */
#include "model.h"

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

enum prec model_tensor_prec(const struct wl_tensor *t, const struct prec_cfg *p)
{
    return t->kind == WL_WEIGHT ? p->w : t->kind == WL_KV ? p->kv : p->a;
}

/* CPU BLAS libraries (GotoBLAS, BLIS, oneDNN) copy both GEMM operands into contiguous panels laid out
 * for the register micro-kernel, and an im2col convolution first unfolds its input: the A view
 * (gm x gk: the input, or its im2col matrix) and the B view (gk x gn: the weights) are each read and
 * written once, in a phase the multiply does not overlap. Its rate is overhead.pack_GBps (fitted by
 * dse calibrate). A GEMM of at most one micro-panel of rows (cpu.mr, else 32) is left unpacked, as
 * GEMV-like kernels for decode steps do. Re-packing B for every mc-row block of a tall A is not
 * counted. */
double model_pack_s(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                    const struct prec_cfg *p)
{
    enum hw_eff_class ec = model_eff_class(op);
    if (d->cls != HW_CPU || !(d->pack_Bps > 0) || (ec != EC_MATMUL && ec != EC_CONV) || op->n_in < 2 ||
        op->gm <= (d->cpu.present ? d->cpu.mr : 32))
        return 0;
    double ea = prec_bytes(model_tensor_prec(&g->t[op->in[0]], p));
    double eb = prec_bytes(model_tensor_prec(&g->t[op->in[1]], p));
    return op->gbatch * op->gk * (op->gm * ea + op->gn * eb) / d->pack_Bps;
}

enum hw_eff_class model_eff_class(const struct wl_op *op)
{
    switch (op->type) {
    case OP_MATMUL: return EC_MATMUL;
    case OP_CONV2D: return op->groups > 1 ? EC_CONV_DW : EC_CONV;
    case OP_ATTENTION: return EC_ATTENTION;
    case OP_SOFTMAX: return EC_SOFTMAX;
    case OP_LAYERNORM:
    case OP_RMSNORM: return EC_NORM;
    default: return EC_ELTWISE;
    }
}

const char *const fidelity_names[FID_COUNT + 1] = {"analytical", "cycle", NULL};

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
