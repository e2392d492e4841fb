/* probe.h -- measuring this host: what /proc and sysfs say about the CPU, micro-benchmarks of peak
 * arithmetic per precision and read bandwidth per memory level (plus STREAM copy and triad), and
 * the hwdesc (hwdesc/README.md) that records both, every figure with its source.
 *
 * Units: rates in FLOP/s (operations/s for int8) and bytes/s (1 GB = 1e9 B), sizes in bytes,
 * times in seconds, frequencies in MHz (0 = unknown). Structs are caller-owned plain data; nothing
 * here prints or exits (cli_probe.c does). The measurement runs OpenMP regions, one thread per
 * physical core unless told otherwise, each pinned to its core unless OMP_PROC_BIND/OMP_PLACES say
 * how to place them. */
#ifndef DSE_PROBE_H
#define DSE_PROBE_H

#include <cjson/cJSON.h>

#include "err.h"

#define PROBE_MAX_CPUS 1024 /* CPUs beyond this number are ignored (bounded parsing) */
#define PROBE_MAX_CACHES 8  /* sysfs cache/index0..7 */
#define PROBE_MAX_RUNS 32
#define PROBE_CURVE_MAX 8 /* sizes at which the last cache level is read */

/* SIMD and matrix features read from /proc/cpuinfo (flags on x86, Features on aarch64). */
enum {
    PROBE_F_AVX2 = 1u << 0,
    PROBE_F_FMA = 1u << 1,
    PROBE_F_AVX512F = 1u << 2,
    PROBE_F_AVX512_BF16 = 1u << 3,
    PROBE_F_AVX512_VNNI = 1u << 4,
    PROBE_F_AVX_VNNI = 1u << 5,
    PROBE_F_AMX_TILE = 1u << 6,
    PROBE_F_AMX_BF16 = 1u << 7,
    PROBE_F_AMX_INT8 = 1u << 8,
    PROBE_F_ASIMD = 1u << 9,
    PROBE_F_ASIMDDP = 1u << 10,
    PROBE_F_BF16 = 1u << 11, /* aarch64 BFDOT/BFMMLA */
    PROBE_F_SVE = 1u << 12,
    PROBE_F_COUNT = 13
};
extern const char *const probe_feature_names[PROBE_F_COUNT + 1]; /* cpuinfo spelling, by bit */

struct probe_cache {
    int level;           /* 1, 2, 3, ... */
    char type[16];       /* "Data", "Instruction", "Unified" */
    double size_bytes;   /* one instance */
    int shared_cpus;     /* logical CPUs sharing one instance (shared_cpu_list) */
    int per_core;        /* shared only by the hardware threads of one core */
    short inst[PROBE_MAX_CPUS]; /* by CPU number: the instance (lowest CPU sharing it), -1 unknown */
};

struct probe_host {
    char arch[16];      /* the build's architecture: x86_64, aarch64 or other */
    char model[128];    /* "unknown" when nothing says */
    int online;         /* online logical CPUs */
    int allowed;        /* of those, CPUs this process may run on (affinity mask) */
    int physical;       /* physical cores among the allowed CPUs */
    int packages;       /* 0 unknown */
    int threads_per_core;
    int pin[PROBE_MAX_CPUS]; /* allowed CPUs, one per physical core first, then their SMT siblings */
    int n_pin;
    unsigned feat;      /* PROBE_F_* bits */
    struct probe_cache cache[PROBE_MAX_CACHES];
    int n_cache;
    double mem_bytes;   /* MemTotal, 0 unknown */
    double cgroup_mem_bytes; /* cgroup v2 memory.max when a number, else 0 */
    char governor[32];  /* "unknown" when cpufreq is absent (common in VMs) */
    double cur_MHz, min_MHz, max_MHz, base_MHz; /* cpufreq (kHz files), 0 unknown */
    double cpuinfo_MHz; /* /proc/cpuinfo "cpu MHz", 0 unknown */
    int rapl_packages;  /* powercap intel-rapl:N package zones found */
    double rapl_tdp_W;  /* sum of constraint_0_max_power_uw (else power_limit_uw), 0 unknown */
    char rapl_zone[8][256]; /* zone directories whose energy_uj could be read */
    int n_rapl_zone;
    char compiler[96];  /* __VERSION__ */
    long openmp;        /* _OPENMP, 0 without OpenMP */
    char omp_proc_bind[48], omp_places[48]; /* "unset" when absent */
};

/* Detects the host from files under root ("" for this machine; a directory with proc/ and sys/ for
 * tests). Missing or odd files leave fields unknown: this never fails on content; it fails only
 * when h is NULL-like misuse or root is too long. */
int probe_detect(const char *root, struct probe_host *h, struct dse_err *e);
/* Looks up a cache of the given level that holds data (type Data or Unified); NULL if none. */
const struct probe_cache *probe_data_cache(const struct probe_host *h, int level);
/* Distinct instances of cache c among the first n CPUs of h->pin (the CPUs a run uses). */
int probe_cache_instances(const struct probe_host *h, const struct probe_cache *c, int n);

struct probe_stat {
    double median, min, max; /* of the timed runs' rates */
    int runs;                /* 0: not measured */
};

enum probe_peak { PROBE_FP32, PROBE_FP64, PROBE_BF16, PROBE_INT8, PROBE_NPEAK };
enum probe_level { PROBE_L1, PROBE_L2, PROBE_L3, PROBE_DRAM, PROBE_NLEVEL };
extern const char *const probe_peak_names[PROBE_NPEAK + 1];  /* fp32 fp64 bf16 int8 */
extern const char *const probe_level_names[PROBE_NLEVEL + 1]; /* l1 l2 l3 dram */

struct probe_opts {
    int threads;     /* 0: one per allowed physical core */
    int quick;       /* shorter runs (the whole probe well under 20 s on 2 cores) */
    const char *isa; /* kernel set by name (avx512, avx2, neon, portable); NULL: the best usable */
};

/* Writes the names of the kernel sets this CPU can run, best first ("avx512, avx2, portable"). */
void probe_isa_list(char *buf, unsigned n);

struct probe_meas {
    int threads;               /* OpenMP threads that ran */
    int pinned;                /* 1: pinned by the probe; 0: placement left to OpenMP */
    int runs;                  /* timed runs per figure */
    double run_s;              /* target length of one timed run */
    char isa[16];              /* kernels used: avx512, avx2, neon, portable */
    char isa_label[48];        /* "AVX-512", "AVX2+FMA", ... */
    int mr, nr;                /* register micro-kernel shape for the hwdesc cpu object (not measured) */
    char mk_src[96];           /* where mr x nr comes from */
    struct probe_stat peak[PROBE_NPEAK]; /* FLOP/s or op/s, all threads */
    char peak_how[PROBE_NPEAK][128];     /* "12 FMA chains of AVX-512 (16 fp32 lanes)" */
    double peak_per_iter[PROBE_NPEAK];
    struct probe_stat read[PROBE_NLEVEL]; /* B/s, all threads */
    double buf_bytes[PROBE_NLEVEL];       /* per thread */
    double cache_bytes;                   /* data caches the threads reach (sizes the DRAM arrays) */
    double eff_cap_bytes[PROBE_NLEVEL];   /* > 0: the level's capacity as measured (all threads), where
                                           * the sysfs size read slower than smaller ones (a shared L3 in a VM) */
    int dropped[PROBE_NLEVEL];            /* 1: no size above the level below read 1.25x DRAM */
    int curve_level;                      /* the last cache level, read at halving sizes: */
    int n_curve;
    double curve_bytes[PROBE_CURVE_MAX];  /* per-thread buffer, the sysfs half-share first */
    double curve_Bps[PROBE_CURVE_MAX];    /* median read rate, all threads */
    struct probe_stat copy, triad;        /* STREAM on the DRAM arrays, B/s (STREAM byte counts) */
    double stream_fraction;               /* triad / DRAM read, capped at 1 */
    struct probe_stat clock_MHz;          /* dependent integer adds, per thread; runs 0 if unsupported */
    double idle_W;                        /* RAPL package power while idle; < 0 unknown */
    double steal_pct, other_pct;          /* of all CPU time during the run (/proc/stat): stolen by the
                                           * hypervisor, busy outside this process; < 0 unknown */
    double seconds;                       /* wall time of probe_measure */
    double peaks_s, caches_s, dram_s;     /* of which: clock and peaks, cache levels, DRAM and STREAM */
};

/* Runs every measurement. Fails with DSE_EINPUT for an unknown or unusable o->isa (before measuring
 * anything) and DSE_ERUNTIME when memory cannot be had. */
int probe_measure(const struct probe_host *h, const struct probe_opts *o, struct probe_meas *m, struct dse_err *e);

/* The clock the per-cycle figures are stated at: cpufreq max, else /proc/cpuinfo MHz, else the
 * measured dependent-add clock; what it came from goes to src (may be NULL). 0 if nothing. */
double probe_clock_MHz(const struct probe_host *h, const struct probe_meas *m, char *src, unsigned n);

/* Builds the hwdesc of this host: system name, date "YYYY-MM-DD". Returns NULL when out of memory. */
cJSON *probe_hwdesc(const struct probe_host *h, const struct probe_meas *m, const char *name, const char *date);

/* dse probe [--out FILE] [--quick] [--threads N] [--json] [--force] */
int cmd_probe(int argc, char **argv);

#endif
