/* hw.h -- hardware descriptions: a system of devices, memories and links, loaded from hwdesc JSON.
 *
 * A struct hw_system is plain data, read-only once loaded, shared by every thread. Rates are held
 * in SI base units (bytes, bytes/s, FLOP/s, seconds, joules per byte) so cost models never convert. */
#ifndef DSE_HW_H
#define DSE_HW_H

#include "err.h"
#include "optype.h"
#include "prec.h"

#define HW_NAME_LEN 64
#define HW_MAX_DEVICES 16
#define HW_MAX_COMPUTE 32
#define HW_MAX_MEM 8
#define HW_MAX_DVFS 32
#define HW_MAX_LINKS 32
#define HW_HEADLINE_TOL 0.03 /* derived peak vs datasheet headline */

enum hw_class { HW_CPU, HW_GPU, HW_SYSTOLIC, HW_NPU, HW_CLASS_COUNT };
enum hw_engine { ENG_MATRIX, ENG_VECTOR, ENG_COUNT };
enum hw_mem_kind { MEM_REGISTER, MEM_SRAM, MEM_CACHE, MEM_DRAM, MEM_HOST, MEM_KIND_COUNT };

extern const char *const hw_class_names[HW_CLASS_COUNT + 1];
extern const char *const hw_engine_names[ENG_COUNT + 1];
extern const char *const hw_mem_kind_names[MEM_KIND_COUNT + 1];

struct hw_compute {
    enum hw_engine engine;
    enum prec prec;
    double units, flops_per_cycle_per_unit, clock_Hz;
    double peak_flops;        /* units x flops/cycle x clock */
    double energy_J_per_mac;  /* from the file, or the 45 nm default scaled by node */
};

struct hw_mem {
    char name[HW_NAME_LEN];
    enum hw_mem_kind kind;
    double capacity_bytes, bandwidth_Bps, latency_s, energy_J_per_byte;
    double reserved_bytes; /* held by the OS, driver and runtime before a workload allocates (reserved_GiB) */
    int shared; /* index into hw_system.memories, or -1 for a private level */
};

struct hw_dvfs_point {
    double freq_Hz, voltage_V;
};

/* A systolic MAC array as SCALE-Sim describes it (optional; the cycle tier needs it). */
enum hw_dataflow { DF_OS, DF_WS, DF_IS, DF_COUNT };
extern const char *const hw_dataflow_names[DF_COUNT + 1];
struct hw_array {
    int present;
    int rows, cols, count; /* count identical arrays share the folds of a layer */
    enum hw_dataflow dataflow;
    double ifmap_bytes, filter_bytes, ofmap_bytes; /* operand SRAMs (each double-buffered) */
    /* How DRAM feeds the operand SRAMs: the device's main memory level, shared (a hwdesc array), or
     * SCALE-Sim's three interfaces (a .cfg): USER gives each `interface_words_per_cycle`, CALC sizes
     * them so that nothing stalls. */
    enum hw_sa_interface { SA_SHARED, SA_USER, SA_CALC } interface;
    double interface_words_per_cycle;
};

/* A dataflow NPU (Hailo-style): the compiler maps every layer of a network onto its own part of the chip,
 * weights and the layers' line buffers held on chip, frames streaming through; a network whose weights
 * and buffers exceed what one configuration holds is cut into contexts, run one after another, each
 * switched in once per batch (its weights reloaded from the host over the device's main memory level,
 * plus a fixed reconfiguration time). docs/models.md, "Dataflow NPUs". */
struct hw_contexts {
    int present;
    double capacity_bytes; /* weights + line buffers one context holds */
    double switch_s;       /* reconfiguration of one context switch, beside its weights' reload */
};

/* GPU execution parameters for the cycle tier (optional). */
struct hw_gpu {
    int present;
    int sms, ctas_per_sm;
    int tile_m, tile_n, tile_k;
    double bw_fraction; /* achieved fraction of main-memory bandwidth by streaming kernels */
    int split_k_max;    /* the most K chunks its GEMM library splits a GEMM into to fill the SMs (gpu.split_k_max;
                           0: as many as fill them; 1: a library without split-K) */
};

/* CPU execution parameters for the cycle tier (optional). */
struct hw_cpu {
    int present;
    int mr, nr;             /* register micro-kernel tile (elements of C) */
    double stream_fraction; /* sustainable (STREAM-like) fraction of DRAM bandwidth */
};

struct hw_device {
    char name[HW_NAME_LEN];
    char model[128];
    enum hw_class cls;
    double process_nm;
    double base_Hz, boost_Hz;
    struct hw_compute compute[HW_MAX_COMPUTE];
    int n_compute;
    struct hw_mem mem[HW_MAX_MEM]; /* nearest first; the last is where tensors live */
    int n_mem;
    struct hw_dvfs_point dvfs[HW_MAX_DVFS];
    int n_dvfs;
    double idle_W, tdp_W;
    /* The power model (docs/models.md, "Power and energy"): an active device draws idle_W + active_W
     * (clocks, instruction issue, leakage at load: power.active_W) while its kernels run, plus each
     * operation's energy; engine_W[e] is engine e's dynamic power at its headline rate (power.matrix_W,
     * power.vector_W), from which a compute entry without energy_pJ_per_mac takes its MAC energy. */
    double active_W, engine_W[ENG_COUNT];
    /* What it draws beyond idle_W between the kernels of a run, its clocks up but no kernel running (a
     * runtime's host work between steps, launch gaps, waits): clock distribution and memory interfaces
     * awake, the units clock-gated (power.gap_W; 0: it idles in gaps; at most active_W). Locked clocks
     * pay active_W instead (hw_system.clocks_locked). */
    double gap_W;
    double units_share; /* of its units online (a mode's; 1) */
    double power_mape_pct; /* held-out error of a power calibration (power.heldout_mape_pct), or -1 */
    double price_USD, die_area_mm2; /* 0 when not given */
    double rent_USD_per_hour;       /* cloud rental, 0 when not given */
    double area_fixed_mm2, area_per_mac_mm2, area_per_MiB_mm2; /* area model; per_mac 0: none */
    double power_cap_W;             /* 0: none; set by a sweep's power_W axis (hw_apply_power_cap) */
    double min_limit_W;             /* the lowest power limit the board accepts (nvidia-smi -pl's range); 0: none */
    char disabled[256];             /* non-empty: this variant of the device cannot run (the reason) */
    char software[64];              /* its default software stack (software/NAME.json); "" for none */
    double per_op_s;                /* fixed cost per kernel launch (a stream launch on a GPU) */
    double graph_node_s;            /* GPU: the same for a kernel replayed from a captured graph */
    double kernel_s;                /* a kernel's fixed duration on the device, as a profiler's trace times it
                                       (launch excluded): the measured-kernel corpora's (hwdesc/arch kernel_us) */
    char arch[HW_NAME_LEN];         /* the architecture file its kernel terms come from ("": its own) */
    double per_step_s;              /* runtime work per forward pass on this system beyond the stack's (its
                                       host, driver and runtime: overhead.per_step_us) */
    double per_request_s;           /* the same per request (overhead.per_request_us) */
    double pack_elem_per_s[2];      /* CPU: GEMM elements packed per second, left and right operand (0: none) */
    double gemm_setup_s;            /* CPU: fixed cost of a packed GEMM call (buffers, barriers) */
    double fork_join_s;             /* CPU: cost of running an op on all cores (a parallel region) */
    double per_group_s;             /* CPU: cost of each group of a grouped (or depthwise) convolution */
    double eff_compute, eff_vector, eff_memory; /* achieved fraction of peak (GEMM, other ops, memory), (0, 1] */
    double serial_fraction;         /* share of min(compute, memory) not overlapped, [0, 1] (default 0) */
    double calib_mape_pct;          /* held-out error of a calibration (efficiency.heldout_mape_pct), or -1 */
    double eff_class[EC_COUNT];     /* compute efficiency per operator class (compute / vector, or per_class) */
    double eff_level[HW_MAX_MEM];   /* bandwidth efficiency per memory level (memory, or per_level) */
    double eff_prec[P_COUNT];       /* GEMM engines' efficiency per arithmetic precision (per_precision; 1) */
    double eff_mclass[EC_COUNT];    /* main-memory bandwidth efficiency per operator class, on top of the
                                       level's (memory_per_class; 1) */
    double eff_fn[FN_COUNT];        /* an element-wise kernel's bandwidth factor by its function, on top of
                                       eff_mclass (a library's rotary or gated kernels reach less than its add) */
    double gemm_k_half;             /* K at which a GEMM's K loop reaches half its rate (gemm_k_half; 0: none) */
    double gemm_k_fill;             /* a GPU GEMM kernel's pipeline fill and drain, once per kernel, in K steps of
                                       one tile (gemm_k_fill; 0: none): per wave gemm_k_half + gemm_k_fill / waves */
    double gemm_wave_tail;          /* share of a GPU GEMM's idle last-wave SMs its library puts to work (stream-K,
                                       tile-shape choice; gemm_wave_tail in [0, 1]; 0: whole waves) */
    double row_iter_s[RK_COUNT];    /* GPU row kernels: one dependent step through a row (row_kernels.iter_ns
                                       of the architecture; 0: no floor, model_row_floor_s) */
    int row_threads_per_sm;         /* resident threads per SM those kernels' CTAs share (0: none) */
    double bw_half_bytes;           /* bytes a kernel moves at main memory to reach half its bandwidth
                                       (efficiency.bw_half_MB; 0: none) */
    unsigned ops_mask;              /* bit (1u << op_type) set when the device runs that operator */
    struct hw_array array;
    struct hw_contexts ctx;
    struct hw_gpu gpu;
    struct hw_cpu cpu;
    /* Derived: best peak FLOP/s and its MAC energy per engine and precision (0 when unsupported). */
    double peak[ENG_COUNT][P_COUNT];
    double mac_J[ENG_COUNT][P_COUNT];
};

struct hw_link {
    char name[HW_NAME_LEN];
    char type[16];
    int a, b; /* device indices */
    double bandwidth_Bps, latency_s, energy_J_per_byte;
};

/* A topology: N identical copies of one device joined by levels of interconnect, innermost first;
 * level l groups `count` units of level l - 1 (level 0 groups devices), so the system has the
 * product of the counts. Ranks are numbered with level 0 varying fastest. bandwidth_Bps is per
 * device and direction: a switch's or fat tree's injection bandwidth, one link of a ring or torus
 * (both of whose directions an algorithm may use), times the level's efficiency (the achieved share
 * of the line rate, hwdesc "efficiency"). Collective costs: par.h. */
#define HW_MAX_TOPO_LEVELS 4
#define HW_MAX_TOPO_DEVICES 65536
enum hw_topo_kind { TOPO_SWITCH, TOPO_RING, TOPO_TORUS, TOPO_FAT_TREE, TOPO_KIND_COUNT };
extern const char *const hw_topo_kind_names[TOPO_KIND_COUNT + 1];
struct hw_topo_level {
    char name[HW_NAME_LEN];
    enum hw_topo_kind kind;
    int count;
    int n_dims, dims[3]; /* torus: its dimensions (product = count); else 1, {count} */
    double bandwidth_Bps, latency_s, energy_J_per_byte;
    double line_rate_Bps;  /* bandwidth_GBps as written; bandwidth_Bps is that x the level's efficiency */
    double base_latency_s; /* fixed cost of a collective over this level (a library's set-up and
                              synchronisation: NCCL's base latency), beside latency_s per step; a
                              collective spanning several levels pays the largest once */
};
struct hw_topology {
    int n_level; /* 0: no topology (the system is one copy of each of its devices) */
    int dev;     /* the replicated device */
    struct hw_topo_level level[HW_MAX_TOPO_LEVELS];
    int devices; /* product of the counts */
};

/* An operating point of a whole system (a Jetson nvpmodel mode): each named device's clock and share of
 * its units online, each shared memory level's bandwidth, and the power budget it is designed to
 * (hwdesc "modes"; "mode" selects one). */
#define HW_MAX_MODES 12
struct hw_mode {
    char name[32];
    double budget_W;
    double clock_Hz[HW_MAX_DEVICES];    /* 0: the device's clock is not set by the mode */
    double units_share[HW_MAX_DEVICES]; /* of the device's units (cores, TPCs) online, (0, 1]; 0: not set */
    double mem_Bps[HW_MAX_MEM];         /* bandwidth of each top-level memory; 0: not set */
};

/* A board's lumped thermal model (hwdesc "thermal"; src/thermal.h, docs/models.md "Thermal"): the heat
 * of the devices in `devices` flows from one node through one resistance R to the ambient air, R and
 * the node's heat capacity C those of the cooling in use; the board throttles at throttle_C (and shuts
 * down at shutdown_C, 0 where unpublished). The conditions of the run (ambient, cooling, duration) are
 * part of it, so that hw: settings and sweep axes (ambient_C, cooling, duration_s) reach them. */
#define HW_MAX_COOLING 6
struct hw_thermal {
    int present;
    char cooling_name[HW_MAX_COOLING][24];
    double R_C_per_W[HW_MAX_COOLING]; /* junction-to-ambient resistance of each cooling, degC per W */
    double C_J_per_C[HW_MAX_COOLING]; /* the node's heat capacity with it, J per degC; 0: unpublished */
    int n_cooling;
    int cooling;                      /* the one in use */
    double throttle_C, shutdown_C;
    double ambient_C;
    double duration_s;                /* the run the thermal figures are of; 0: none asked (burst only) */
    unsigned devices;                 /* bit d: device d's heat goes through this path */
};

/* What a system draws beyond its devices (hwdesc "enclosure"; docs/models.md "Power and energy"): base_W
 * inside the system's own budget (a module's SoC fabric, memory controller and DRAM standby: what an
 * nvpmodel budget counts beside the cores), chassis_idle_W outside it (a carrier board or a server chassis
 * at idle: fans at their floor, NICs, drives, host sockets the hwdesc does not describe as devices),
 * cooling_W_per_W the fans' and regulators' draw per watt its devices dissipate above their idle power,
 * and the conversion from the meter's input (the wall, a DC jack) to the rails: efficiency eff[i] at
 * load fraction eff_load[i] of rating_W (linear between points, flat beyond them; one point: a constant).
 * One enclosure holds `devices` devices of a topology (0: every device: the system is one enclosure). */
#define HW_MAX_EFF_POINTS 8
struct hw_enclosure {
    int present;
    double base_W, chassis_idle_W, cooling_W_per_W, rating_W;
    int n_eff;
    double eff_load[HW_MAX_EFF_POINTS], eff[HW_MAX_EFF_POINTS];
    int devices;
};

struct hw_system {
    char name[HW_NAME_LEN];
    char description[256];
    struct hw_thermal thermal;
    struct hw_enclosure encl;
    int clocks_locked; /* clocks pinned at their maximum (jetson_clocks, nvidia-smi -lgc): every device pays its
                          active_W the whole run, not only while its kernels run (hwdesc "clocks_locked") */
    struct hw_mode modes[HW_MAX_MODES];
    int n_modes;
    int mode; /* the mode applied (index into modes), -1: the figures as the devices give them */
    struct hw_mem memories[HW_MAX_MEM];
    int n_memories;
    struct hw_device dev[HW_MAX_DEVICES];
    int n_dev;
    struct hw_link link[HW_MAX_LINKS];
    int n_link;
    struct hw_topology topo;
};

/* Loads and validates a hwdesc file (fname is used in messages). sys is caller-owned. */
int hw_load_file(const char *path, struct hw_system *sys, struct dse_err *e);
int hw_load_buf(const char *buf, unsigned long len, const char *fname, struct hw_system *sys,
                struct dse_err *e);

/* The innermost memory level software places tensors in: 1 when the device has three or more levels
 * (level 0 is its engines' own: accumulators, a register file, an L1), else 0. The cost models' default
 * homes and the stacks' memory planner both start there. */
int hw_first_shared_level(const struct hw_device *d);
/* Whether the device's time terms were fitted to measurements: its own held-out error
 * (efficiency.heldout_mape_pct) or kernel terms from an architecture file (fitted on measured kernels). */
int hw_calibrated(const struct hw_device *d);
/* Sets every efficiency term to its uncalibrated value (factors 1, half-points and floors 0). */
void hw_eff_defaults(struct hw_device *d);
/* The file of architecture `arch` for the hwdesc at path hwdesc: arch/NAME.json beside it, else
 * hwdesc/arch/NAME.json under the working folder or DSE_PATH's folders; 0, or -1 when none is readable. */
int hw_arch_path(const char *hwdesc, const char *arch, char *out, size_t n);
int hw_find_device(const struct hw_system *sys, const char *name); /* index or -1 */
/* Reads a SCALE-Sim configuration (.cfg) as a one-device systolic system (hw_scalesim.c). */
int hw_load_scalesim_cfg(const char *path, struct hw_system *sys, struct dse_err *e);
int hw_load_scalesim_buf(const char *buf, unsigned long len, const char *fname, struct hw_system *sys,
                         struct dse_err *e);
/* Peak FLOP/s of the device for a GEMM (matrix engine, else vector) or a vector op at precision p. */
double hw_gemm_peak(const struct hw_device *d, enum prec p, enum hw_engine *used);
double hw_vector_peak(const struct hw_device *d, enum prec p, enum hw_engine *used);
/* The device's highest peak over all engines and precisions (for listings). */
double hw_max_peak(const struct hw_device *d, enum prec *p);
/* Capacity of the level where tensors live (the last one). */
double hw_main_capacity(const struct hw_device *d);
/* What a workload may allocate of level m: its capacity (capacity_bytes > 0: that one instead, a
 * sweep's memory axis), or util x capacity when util is in (0, 1) (a runtime that takes only a share,
 * vLLM's gpu_memory_utilization, whose budget the CUDA context counts against), less its reserve.
 * <= 0: nothing is left. */
double hw_usable_bytes(const struct hw_mem *m, double capacity_bytes, double util);
/* Devices of the topology (1 without one). */
int hw_topo_devices(const struct hw_system *sys);
/* Index of the link joining devices a and b, or -1. */
int hw_link_between(const struct hw_system *sys, int a, int b);
/* Sets a device's power cap (0: none). The device obeys the lower of its cap and TDP as evaluation
 * finds its power (eval_point throttles it); a cap at or below its idle power, or below the lowest
 * limit the board accepts (power.min_limit_W), disables it, with the reason. */
void hw_apply_power_cap(struct hw_device *d, double cap_W);
/* Puts sys in its mode k (hw_system.modes): each device the mode names to its clock (peaks, active and
 * engine power x f; MAC energies unchanged, as the modes publish no voltages) and its share of units
 * online (peaks, active and engine power x share), each shared memory level to its bandwidth; a device
 * the mode sets obeys the mode's budget as its TDP (a module's power manager limits the module, not a
 * share of it per device). Applied on top of another mode, it sets the same absolute figures. */
void hw_apply_mode(struct hw_system *sys, int k);
/* The index of the mode named name, or -1. */
int hw_mode_find(const struct hw_system *sys, const char *name);
/* The TDP device d of sys obeys in mode k (-1: as it stands): the mode's budget where the mode sets the
 * device (and the budget is above its idle power), else its own tdp_W. */
double hw_mode_tdp_W(const struct hw_system *sys, int k, int d);
/* Runs a device at f times its clock and v2 times its squared voltage: peaks scale with f, MAC
 * energies with v2 (dynamic energy per operation ~ C V^2), active power with f x v2. */
void hw_scale_clock(struct hw_device *d, double f, double v2);
/* Enclosures of sys that hold `devices` devices of its layout (1 without an enclosure or a topology). */
double hw_enclosures(const struct hw_system *sys, double devices);
/* The conversion efficiency of one enclosure whose rails draw dc_W (1 without an enclosure). */
double hw_enclosure_efficiency(const struct hw_enclosure *en, double dc_W);
/* Power at the rails of n enclosures whose devices draw dev_W in all, idle_W of it their idle power:
 * dev_W + n (base_W + chassis_idle_W) + cooling_W_per_W (dev_W - idle_W); dev_W without an enclosure.
 * hw_input_W: that at the meter's input (divided by the efficiency at each enclosure's share). */
double hw_rails_W(const struct hw_system *sys, double n, double dev_W, double idle_W);
double hw_input_W(const struct hw_system *sys, double n, double dev_W, double idle_W);
/* Multiplies every matrix-engine peak of d by ratio (a resized MAC array). */
void hw_scale_matrix(struct hw_device *d, double ratio);
/* Die area: with an area model, fixed + MACs of the largest matrix engine x per_mac + on-chip
 * (register, sram, cache, private) MiB x per_MiB, so it follows hw: changes; else cost.die_area_mm2;
 * else NAN. */
double hw_die_area_mm2(const struct hw_device *d);
/* Default energy per byte of an on-chip memory level of the given kind and size at a node
 * (docs/models.md); 0 for dram and host levels, whose energy comes from their technology. */
double hw_default_mem_J_per_byte(enum hw_mem_kind k, double capacity_bytes, double process_nm);

#endif
