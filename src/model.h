/* model.h -- the device cost-model interface: the cost of one operator on one device.
 *
 * Each device class (cpu, gpu, systolic, npu) is an entry in a const table of function pointers
 * (model.c); a new class is one file and one table entry. Costs are in seconds, bytes and joules,
 * for ONE execution of the op (the caller multiplies by the op's count). */
#ifndef DSE_MODEL_H
#define DSE_MODEL_H

#include "hw.h"
#include "wl.h"

enum bound { BOUND_COMPUTE, BOUND_MEMORY, BOUND_OVERHEAD, BOUND_NONE, BOUND_COUNT };
extern const char *const bound_names[BOUND_COUNT + 1];

/* Why an op cannot run on a device. */
enum op_status { OPS_OK, OPS_UNSUPPORTED_OP, OPS_UNSUPPORTED_PREC };

struct exec_cfg {
    struct prec_cfg prec;
    double graph_weight_bytes; /* all weights of the graph being evaluated (for on-chip residency) */
};

struct op_cost {
    double compute_s, memory_s, overhead_s, time_s;
    enum bound bound;
    int mem_level;               /* the level that limits memory time */
    double bytes[HW_MAX_MEM];    /* bytes served by each memory level */
    double energy_compute_J, energy_memory_J, energy_static_J;
    double utilization;          /* achieved / peak arithmetic rate, in [0, 1] */
    enum prec cprec;             /* arithmetic precision used */
    enum hw_engine engine;
};

struct device_model {
    const char *name; /* class name, as in hwdesc "class" */
    const char *tier; /* "analytical" */
    /* Class-specific sanity checks of a loaded device beyond the schema. */
    int (*check)(const struct hw_device *d, struct dse_err *e);
    /* Fills *c; returns OPS_OK or why the op cannot run here (c is then untouched). */
    enum op_status (*op_cost)(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                              const struct exec_cfg *x, struct op_cost *c);
};

const struct device_model *model_for(enum hw_class cls);

/* The analytical roofline shared by every class in this tier (model_roofline.c). */
enum op_status model_roofline_cost(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                                   const struct exec_cfg *x, struct op_cost *c);
/* Precision an op computes in on a device, or -1 when the device has no engine for it. */
int model_op_prec(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                  const struct prec_cfg *p, enum hw_engine *eng, double *peak);

#endif
