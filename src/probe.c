/* probe.c -- host detection (/proc, sysfs) and measurement kernels for `dse probe`.
 *
 * Detection reads small files with bounded buffers and strict number parsing: a missing or odd file
 * leaves a field unknown, never an error. Measurement runs each figure as one OpenMP region: every
 * thread pinned to its own physical core (unless OMP_PROC_BIND/OMP_PLACES decide), warm-up runs
 * that also size the work to about one run length (100 ms; --quick 20 ms), then 9 (--quick 5) runs
 * timed with CLOCK_MONOTONIC between barriers; the figure is the median rate, min and max its spread.
 *
 * The kernels are written with intrinsics inside functions carrying their own target attribute,
 * chosen at run time (__builtin_cpu_supports on x86, HWCAP on aarch64), so a plain -O2 build reaches
 * peak: 12 independent FMA chains hide the 4-5 cycle FMA latency on two pipes (4 x 2 = 8 needed). */
#define _GNU_SOURCE /* sched_setaffinity and CPU_SET for pinning */

#include "probe.h"

#include "hostload.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__)
#define PROBE_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define PROBE_X86 0
#endif
#if defined(__aarch64__)
#define PROBE_ARM64 1
#include <arm_neon.h>
#include <sys/auxv.h>
#else
#define PROBE_ARM64 0
#endif

const char *const probe_feature_names[PROBE_F_COUNT + 1] = {
    "avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "avx_vnni", "amx_tile",
    "amx_bf16", "amx_int8", "asimd", "asimddp", "bf16", "sve", NULL};
const char *const probe_peak_names[PROBE_NPEAK + 1] = {"fp32", "fp64", "bf16", "int8", NULL};
const char *const probe_level_names[PROBE_NLEVEL + 1] = {"l1", "l2", "l3", "dram", NULL};

#define CHAINS 12
#define READ_VECS 8 /* independent accumulators in the read kernels */
#define PATH_BUF 512
#define CPUINFO_MAX (64u << 10) /* the first processor block is all we read */

/* ------------------------------------------------------------------------------------------------
 * Bounded reading and parsing */

/* Reads at most n-1 bytes of root+path (a regular file) into buf, NUL-terminated, trailing white
 * space removed. Returns the length, or -1 when it cannot be read. */
static int read_text(const char *root, const char *path, char *buf, size_t n)
{
    char full[PATH_BUF];
    int k = snprintf(full, sizeof full, "%s%s", root, path);
    if (n == 0 || k < 0 || (size_t)k >= sizeof full)
        return -1;
    buf[0] = '\0';
    int fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    size_t len = 0;
    while (len + 1 < n) {
        ssize_t r = read(fd, buf + len, n - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            close(fd);
            buf[0] = '\0';
            return -1;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    len = strlen(buf); /* device-tree strings end in NUL */
    while (len > 0 && isspace((unsigned char)buf[len - 1]))
        buf[--len] = '\0';
    return (int)len;
}

/* A whole decimal integer with optional surrounding white space. */
static int parse_ll(const char *s, long long *out)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s) && *s != '-')
        return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

static int read_ll(const char *root, const char *path, long long *out)
{
    char b[64];
    return read_text(root, path, b, sizeof b) > 0 ? parse_ll(b, out) : -1;
}

/* sysfs cache sizes: "48K", "2048K", "260M", "1G" or bytes. */
static int parse_size(const char *s, double *bytes)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || v == 0 || v > (1ull << 40))
        return -1;
    double m = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': m = 1024.0, end++; break;
    case 'M': m = 1024.0 * 1024, end++; break;
    case 'G': m = 1024.0 * 1024 * 1024, end++; break;
    default: break;
    }
    if (toupper((unsigned char)*end) == 'B')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    *bytes = (double)v * m;
    return 0;
}

/* A cpulist ("0-3,8,10-11"): marks CPUs below PROBE_MAX_CPUS in set (may be NULL) and returns how
 * many the list names, or -1 when it is not one. *lo gets the lowest (may be NULL). */
static int cpulist_parse(const char *s, unsigned char *set, int *lo)
{
    int count = 0, low = -1;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return -1;
    while (*s) {
        char *end;
        if (!isdigit((unsigned char)*s))
            return -1;
        long a = strtol(s, &end, 10), b = a;
        s = end;
        if (*s == '-') {
            s++;
            if (!isdigit((unsigned char)*s))
                return -1;
            b = strtol(s, &end, 10);
            s = end;
        }
        if (a < 0 || b < a || b > 1000000 || count > 1000000)
            return -1;
        for (long c = a; c <= b; c++) {
            if (set && c < PROBE_MAX_CPUS)
                set[c] = 1;
            count++;
        }
        if (low < 0 || a < low)
            low = (int)a;
        if (*s == ',')
            s++;
        else if (isspace((unsigned char)*s)) {
            while (isspace((unsigned char)*s))
                s++;
            if (*s)
                return -1;
        } else if (*s)
            return -1;
    }
    if (lo)
        *lo = low;
    return count;
}

/* Copies s[0..len) into dst (n bytes) with control characters made spaces (it goes to JSON and the
 * terminal) and white space trimmed from both ends. */
static void trim_copy(char *dst, size_t n, const char *s, size_t len)
{
    size_t k = 0, start = 0;
    if (len >= n)
        len = n - 1;
    for (size_t i = 0; i < len && s[i]; i++)
        dst[k++] = (unsigned char)s[i] < 0x20 || (unsigned char)s[i] == 0x7f ? ' ' : s[i];
    while (k > 0 && dst[k - 1] == ' ')
        k--;
    while (start < k && dst[start] == ' ')
        start++;
    memmove(dst, dst + start, k - start);
    dst[k - start] = '\0';
}

/* ------------------------------------------------------------------------------------------------
 * Detection */

struct arm_part {
    unsigned impl, part;
    const char *name;
};
/* MIDR implementer and part numbers (Arm TRMs, "Main ID Register"). */
static const struct arm_part arm_parts[] = {
    {0x41, 0xd03, "Arm Cortex-A53"},  {0x41, 0xd04, "Arm Cortex-A35"},   {0x41, 0xd05, "Arm Cortex-A55"},
    {0x41, 0xd07, "Arm Cortex-A57"},  {0x41, 0xd08, "Arm Cortex-A72"},   {0x41, 0xd09, "Arm Cortex-A73"},
    {0x41, 0xd0a, "Arm Cortex-A75"},  {0x41, 0xd0b, "Arm Cortex-A76"},   {0x41, 0xd0c, "Arm Neoverse-N1"},
    {0x41, 0xd0d, "Arm Cortex-A77"},  {0x41, 0xd40, "Arm Neoverse-V1"},  {0x41, 0xd41, "Arm Cortex-A78"},
    {0x41, 0xd44, "Arm Cortex-X1"},   {0x41, 0xd46, "Arm Cortex-A510"},  {0x41, 0xd47, "Arm Cortex-A710"},
    {0x41, 0xd48, "Arm Cortex-X2"},   {0x41, 0xd49, "Arm Neoverse-N2"},  {0x41, 0xd4d, "Arm Cortex-A715"},
    {0x41, 0xd4e, "Arm Cortex-X3"},   {0x41, 0xd4f, "Arm Neoverse-V2"},  {0x41, 0xd80, "Arm Cortex-A520"},
    {0x41, 0xd81, "Arm Cortex-A720"}, {0x41, 0xd82, "Arm Cortex-X4"},    {0x41, 0xd84, "Arm Neoverse-V3"},
    {0x41, 0xd8e, "Arm Neoverse-N3"}, {0x46, 0x001, "Fujitsu A64FX"},
};

static void parse_features(struct probe_host *h, const char *v)
{
    while (*v) {
        while (isspace((unsigned char)*v))
            v++;
        size_t l = 0;
        while (v[l] && !isspace((unsigned char)v[l]))
            l++;
        for (int i = 0; l && i < PROBE_F_COUNT; i++)
            if (strlen(probe_feature_names[i]) == l && !strncmp(v, probe_feature_names[i], l))
                h->feat |= 1u << i;
        v += l;
    }
}

static void detect_cpuinfo(const char *root, struct probe_host *h)
{
    char *buf = malloc(CPUINFO_MAX);
    long long impl = -1, part = -1;
    if (!buf)
        return;
    if (read_text(root, "/proc/cpuinfo", buf, CPUINFO_MAX) > 0) {
        int seen = 0;
        for (char *line = buf; line && *line;) {
            char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            char *colon = memchr(line, ':', len);
            int blank = 1;
            for (size_t i = 0; i < len; i++)
                blank &= isspace((unsigned char)line[i]) != 0;
            if (blank && seen)
                break; /* end of the first processor's block */
            if (colon) {
                char key[32], val[4096];
                seen = 1;
                trim_copy(key, sizeof key, line, (size_t)(colon - line));
                trim_copy(val, sizeof val, colon + 1, len - (size_t)(colon - line) - 1);
                if (!strcmp(key, "model name") && !h->model[0])
                    dse_strlcpy(h->model, val, sizeof h->model);
                else if (!strcmp(key, "flags") || !strcmp(key, "Features"))
                    parse_features(h, val);
                else if (!strcmp(key, "cpu MHz")) {
                    char *end;
                    double f = strtod(val, &end);
                    if (end != val && f > 1 && f < 1e5)
                        h->cpuinfo_MHz = f;
                } else if (!strcmp(key, "CPU implementer") || !strcmp(key, "CPU part")) {
                    char *end;
                    errno = 0;
                    long long x = strtoll(val, &end, 0);
                    if (!errno && end != val && x >= 0 && x < 0x10000)
                        *(key[4] == 'i' ? &impl : &part) = x;
                }
            }
            line = nl ? nl + 1 : NULL;
        }
    }
    if (!h->model[0] && impl >= 0 && part >= 0) {
        char dt[96];
        const char *name = NULL;
        for (size_t i = 0; i < sizeof arm_parts / sizeof arm_parts[0]; i++)
            if (arm_parts[i].impl == (unsigned)impl && arm_parts[i].part == (unsigned)part)
                name = arm_parts[i].name;
        char core[64];
        if (name)
            snprintf(core, sizeof core, "%s", name);
        else
            snprintf(core, sizeof core, "implementer 0x%llx part 0x%llx", impl, part);
        if (read_text(root, "/sys/firmware/devicetree/base/model", dt, sizeof dt) > 0) {
            char tmp[96];
            trim_copy(tmp, sizeof tmp, dt, strlen(dt));
            snprintf(h->model, sizeof h->model, "%.60s (%.60s)", tmp, core);
        } else
            snprintf(h->model, sizeof h->model, "%s", core);
    }
    if (!h->model[0])
        snprintf(h->model, sizeof h->model, "unknown");
    free(buf);
}

static void detect_topology(const char *root, struct probe_host *h)
{
    unsigned char *online = calloc(4, PROBE_MAX_CPUS);
    int *group = malloc(sizeof *group * PROBE_MAX_CPUS);
    char b[4096], p[PATH_BUF];
    if (!online || !group) {
        free(online);
        free(group);
        return;
    }
    unsigned char *allowed = online + PROBE_MAX_CPUS, *group_seen = online + 2 * PROBE_MAX_CPUS,
                  *pkg_seen = online + 3 * PROBE_MAX_CPUS;
    int n = -1;
    if (read_text(root, "/sys/devices/system/cpu/online", b, sizeof b) > 0)
        n = cpulist_parse(b, online, NULL);
    if (n <= 0) {
        memset(online, 0, PROBE_MAX_CPUS);
        long c = !root[0] ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
        if (c < 1)
            c = 1;
        for (long i = 0; i < c && i < PROBE_MAX_CPUS; i++)
            online[i] = 1;
    }
    memcpy(allowed, online, PROBE_MAX_CPUS);
    if (!root[0]) { /* this process's affinity mask (taskset, cgroup cpusets) */
        cpu_set_t mask;
        if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
#if defined(_OPENMP) && _OPENMP >= 201511
            /* With OMP_PLACES or OMP_PROC_BIND set, libgomp has already bound this thread to the first
             * place: the process may use every CPU of every place. */
            int np = omp_get_num_places();
            for (int pl = 0; pl < np; pl++) {
                int ids[256], k = omp_get_place_num_procs(pl);
                if (k <= 0 || k > 256)
                    continue;
                omp_get_place_proc_ids(pl, ids);
                for (int i = 0; i < k; i++)
                    if (ids[i] >= 0 && ids[i] < CPU_SETSIZE)
                        CPU_SET(ids[i], &mask);
            }
#endif
            int any = 0;
            for (int c = 0; c < PROBE_MAX_CPUS && c < CPU_SETSIZE; c++)
                any |= online[c] && CPU_ISSET(c, &mask);
            for (int c = 0; any && c < PROBE_MAX_CPUS; c++)
                allowed[c] = online[c] && c < CPU_SETSIZE && CPU_ISSET(c, &mask);
        }
    }
    int tpc = 1;
    for (int c = 0; c < PROBE_MAX_CPUS; c++) {
        if (!online[c])
            continue;
        h->online++;
        if (!allowed[c])
            continue;
        h->allowed++;
        int lo = c, k = -1;
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
        if (read_text(root, p, b, sizeof b) > 0)
            k = cpulist_parse(b, NULL, &lo);
        if (k <= 0 || lo < 0 || lo >= PROBE_MAX_CPUS)
            lo = c, k = 1;
        if (k > tpc)
            tpc = k;
        group[c] = lo;
        long long pkg;
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        if (read_ll(root, p, &pkg) == 0 && pkg >= 0 && pkg < PROBE_MAX_CPUS && !pkg_seen[pkg]) {
            pkg_seen[pkg] = 1;
            h->packages++;
        }
    }
    h->threads_per_core = tpc;
    /* Pin order: the lowest allowed CPU of each physical core, then the remaining SMT siblings. */
    for (int c = 0; c < PROBE_MAX_CPUS; c++)
        if (allowed[c] && !group_seen[group[c]]) {
            group_seen[group[c]] = 1;
            h->pin[h->n_pin++] = c;
        }
    h->physical = h->n_pin;
    for (int c = 0; c < PROBE_MAX_CPUS; c++) {
        int dup = 0;
        for (int i = 0; i < h->physical && !dup; i++)
            dup = h->pin[i] == c;
        if (allowed[c] && !dup)
            h->pin[h->n_pin++] = c;
    }
    if (h->n_pin == 0) { /* nothing usable was found: run on whatever the scheduler gives */
        h->pin[0] = 0;
        h->n_pin = h->physical = h->allowed = h->online = 1;
    }
    free(online);
    free(group);
}

static void detect_caches(const char *root, struct probe_host *h)
{
    char b[4096], p[PATH_BUF], base[96];
    int ref = h->pin[0];
    int ref_siblings = 1;
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", ref);
    if (read_text(root, p, b, sizeof b) > 0 && cpulist_parse(b, NULL, NULL) > 0)
        ref_siblings = cpulist_parse(b, NULL, NULL);
    for (int k = 0; k < PROBE_MAX_CACHES; k++) {
        struct probe_cache *c = &h->cache[h->n_cache];
        long long level;
        double size;
        snprintf(base, sizeof base, "/sys/devices/system/cpu/cpu%d/cache/index%d/", ref, k);
        snprintf(p, sizeof p, "%slevel", base);
        if (read_ll(root, p, &level) || level < 1 || level > 9)
            continue;
        snprintf(p, sizeof p, "%ssize", base);
        if (read_text(root, p, b, sizeof b) <= 0 || parse_size(b, &size))
            continue;
        memset(c, 0, sizeof *c);
        c->level = (int)level;
        c->size_bytes = size;
        snprintf(p, sizeof p, "%stype", base);
        if (read_text(root, p, b, sizeof b) > 0)
            trim_copy(c->type, sizeof c->type, b, strlen(b));
        else
            snprintf(c->type, sizeof c->type, "Unified");
        snprintf(p, sizeof p, "%sshared_cpu_list", base);
        int shared = read_text(root, p, b, sizeof b) > 0 ? cpulist_parse(b, NULL, NULL) : -1;
        c->shared_cpus = shared > 0 ? shared : 0;
        c->per_core = shared > 0 ? shared <= ref_siblings : level <= 2; /* unknown: L1/L2 usually are */
        for (int i = 0; i < PROBE_MAX_CPUS; i++)
            c->inst[i] = -1;
        for (int i = 0; i < h->n_pin; i++) {
            int cpu = h->pin[i], lo = -1;
            snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, k);
            if (read_text(root, p, b, sizeof b) > 0 && cpulist_parse(b, NULL, &lo) > 0 && lo >= 0 &&
                lo < PROBE_MAX_CPUS)
                c->inst[cpu] = (short)lo;
        }
        h->n_cache++;
    }
}

static void detect_power(const char *root, struct probe_host *h)
{
    char dir[PATH_BUF], p[PATH_BUF], b[256];
    snprintf(dir, sizeof dir, "%s/sys/class/powercap", root);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        if (strncmp(nm, "intel-rapl:", 11) || strchr(nm + 11, ':') || strlen(nm) > 40)
            continue; /* packages only: intel-rapl:N; intel-rapl:N:M are its sub-zones */
        snprintf(p, sizeof p, "/sys/class/powercap/%s/name", nm);
        if (read_text(root, p, b, sizeof b) > 0 && strncmp(b, "package", 7))
            continue; /* psys (platform) zones are not a package */
        h->rapl_packages++;
        long long uw = 0;
        snprintf(p, sizeof p, "/sys/class/powercap/%s/constraint_0_max_power_uw", nm);
        if (read_ll(root, p, &uw) || uw <= 0) {
            snprintf(p, sizeof p, "/sys/class/powercap/%s/constraint_0_power_limit_uw", nm);
            if (read_ll(root, p, &uw))
                uw = 0;
        }
        if (uw > 0 && uw < 100000000000LL)
            h->rapl_tdp_W += uw / 1e6;
        long long en;
        snprintf(p, sizeof p, "/sys/class/powercap/%s/energy_uj", nm);
        if (h->n_rapl_zone < 8 && read_ll(root, p, &en) == 0 && en >= 0)
            snprintf(h->rapl_zone[h->n_rapl_zone++], sizeof h->rapl_zone[0], "%s/sys/class/powercap/%.40s", root,
                     nm);
    }
    closedir(d);
}

int probe_detect(const char *root, struct probe_host *h, struct dse_err *e)
{
    char b[256], p[PATH_BUF];
    if (!root)
        root = "";
    memset(h, 0, sizeof *h);
    if (strlen(root) > 200)
        return dse_err_set(e, DSE_EINPUT, root, NULL, "probe root path too long");
    snprintf(h->arch, sizeof h->arch, "%s", PROBE_X86 ? "x86_64" : PROBE_ARM64 ? "aarch64" : "other");
    detect_cpuinfo(root, h);
    detect_topology(root, h);
    detect_caches(root, h);
    detect_power(root, h);

    if (read_text(root, "/proc/meminfo", b, sizeof b) > 0) {
        const char *m = strstr(b, "MemTotal:");
        long long kb;
        char num[32];
        if (m) {
            m += 9;
            size_t l = strcspn(m, "\n");
            trim_copy(num, sizeof num, m, l);
            char *kbs = strstr(num, "kB");
            if (kbs)
                *kbs = '\0';
            if (parse_ll(num, &kb) == 0 && kb > 0)
                h->mem_bytes = kb * 1024.0;
        }
    }
    if (h->mem_bytes == 0 && !root[0]) {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        if (pages > 0 && psz > 0)
            h->mem_bytes = (double)pages * (double)psz;
    }
    long long lim;
    if (read_ll(root, "/sys/fs/cgroup/memory.max", &lim) == 0 && lim > 0 && (h->mem_bytes == 0 || lim < h->mem_bytes))
        h->cgroup_mem_bytes = (double)lim;

    int ref = h->pin[0];
    snprintf(h->governor, sizeof h->governor, "unknown");
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", ref);
    if (read_text(root, p, b, sizeof b) > 0)
        trim_copy(h->governor, sizeof h->governor, b, strlen(b));
    static const char *const fq[] = {"scaling_cur_freq", "cpuinfo_min_freq", "cpuinfo_max_freq", "base_frequency"};
    double *fv[] = {&h->cur_MHz, &h->min_MHz, &h->max_MHz, &h->base_MHz};
    for (int i = 0; i < 4; i++) {
        long long khz;
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/cpufreq/%s", ref, fq[i]);
        if (read_ll(root, p, &khz) == 0 && khz >= 1000 && khz < 100000000)
            *fv[i] = khz / 1000.0;
    }

#if defined(__clang__)
    snprintf(h->compiler, sizeof h->compiler, "%s", __VERSION__);
#elif defined(__GNUC__)
    snprintf(h->compiler, sizeof h->compiler, "GCC %s", __VERSION__);
#else
    snprintf(h->compiler, sizeof h->compiler, "unknown");
#endif
#ifdef _OPENMP
    h->openmp = _OPENMP;
#endif
    const char *pb = getenv("OMP_PROC_BIND"), *pl = getenv("OMP_PLACES");
    trim_copy(h->omp_proc_bind, sizeof h->omp_proc_bind, pb && *pb ? pb : "unset", strlen(pb && *pb ? pb : "unset"));
    trim_copy(h->omp_places, sizeof h->omp_places, pl && *pl ? pl : "unset", strlen(pl && *pl ? pl : "unset"));
    return DSE_OK;
}

const struct probe_cache *probe_data_cache(const struct probe_host *h, int level)
{
    for (int i = 0; i < h->n_cache; i++)
        if (h->cache[i].level == level && strcmp(h->cache[i].type, "Instruction") != 0)
            return &h->cache[i];
    return NULL;
}

int probe_cache_instances(const struct probe_host *h, const struct probe_cache *c, int n)
{
    unsigned char seen[PROBE_MAX_CPUS];
    int count = 0, unknown = 0;
    memset(seen, 0, sizeof seen);
    if (n > h->n_pin)
        n = h->n_pin;
    for (int i = 0; i < n; i++) {
        int id = c->inst[h->pin[i]];
        if (id < 0)
            unknown++;
        else if (!seen[id]) {
            seen[id] = 1;
            count++;
        }
    }
    /* Unknown sharing: a private level has one instance per core used, a shared one is one more. */
    if (unknown)
        count += c->per_core ? (unknown < h->physical ? unknown : h->physical) : 1;
    return count > 0 ? count : 1;
}

/* ------------------------------------------------------------------------------------------------
 * Kernels. Each FMA kernel runs n iterations of CHAINS independent a = a * b + c chains (b just
 * below 1, so every chain converges to c / (1 - b) = 1: no overflow, no denormals) and returns a
 * checksum so nothing is optimized away. Every chain starts from its own value, and none at the
 * fixed point: GCC merges identical chains into one (it did, for the dot-product kernels) and
 * folds a chain that starts at 1.0 into a constant (it did, in the portable kernel). Read kernels
 * sum n floats `passes` times into READ_VECS accumulators; copy and triad are STREAM's c = a and
 * a = b + q c. Buffers are 4 KiB aligned and a whole number of 1024 floats. */

#define REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define REP8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

/* FMA(a, b, c) = a * b + c in every kernel set. */
#define DEF_FMA(NAME, ATTR, VT, ET, SET1, FMA, ADD)                                                            \
    ATTR static double NAME(long n)                                                                            \
    {                                                                                                          \
        const VT b = SET1((ET)0.999999), c = SET1((ET)1e-6);                                                   \
        REP12(FMA_DECL_##NAME)                                                                                 \
        for (long k = 0; k < n; k++) {                                                                         \
            REP12(FMA_STEP_##NAME)                                                                             \
        }                                                                                                      \
        VT s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));                              \
        s = ADD(s, ADD(ADD(a8, a9), ADD(a10, a11)));                                                           \
        ET out[sizeof(VT) / sizeof(ET)];                                                                       \
        memcpy(out, &s, sizeof out);                                                                           \
        double t = 0;                                                                                          \
        for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)                                                \
            t += (double)out[i];                                                                               \
        return t;                                                                                              \
    }

#define DEF_READ(NAME, ATTR, VT, LOAD, ADD, ZERO)                                                              \
    ATTR static double NAME(const float *p, size_t n, long passes)                                             \
    {                                                                                                          \
        const size_t w = sizeof(VT) / sizeof(float);                                                           \
        REP8(READ_DECL_##NAME)                                                                                 \
        for (long r = 0; r < passes; r++)                                                                      \
            for (size_t i = 0; i + READ_VECS * w <= n; i += READ_VECS * w) {                                   \
                REP8(READ_STEP_##NAME)                                                                         \
            }                                                                                                  \
        VT s = ADD(ADD(ADD(s0, s1), ADD(s2, s3)), ADD(ADD(s4, s5), ADD(s6, s7)));                              \
        float out[sizeof(VT) / sizeof(float)];                                                                 \
        memcpy(out, &s, sizeof out);                                                                           \
        double t = 0;                                                                                          \
        for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)                                                \
            t += out[i];                                                                                       \
        return t;                                                                                              \
    }

#define DEF_STREAM(COPY, TRIAD, ATTR, VT, LOAD, STORE, SET1, FMA)                                              \
    ATTR static void COPY(float *restrict d, const float *restrict s, size_t n)                                \
    {                                                                                                          \
        const size_t w = sizeof(VT) / sizeof(float);                                                           \
        for (size_t i = 0; i + 4 * w <= n; i += 4 * w) {                                                       \
            VT x0 = LOAD(s + i), x1 = LOAD(s + i + w), x2 = LOAD(s + i + 2 * w), x3 = LOAD(s + i + 3 * w);    \
            STORE(d + i, x0);                                                                                  \
            STORE(d + i + w, x1);                                                                              \
            STORE(d + i + 2 * w, x2);                                                                          \
            STORE(d + i + 3 * w, x3);                                                                          \
        }                                                                                                      \
    }                                                                                                          \
    ATTR static void TRIAD(float *restrict a, const float *restrict b, const float *restrict c, float q,       \
                           size_t n)                                                                           \
    {                                                                                                          \
        const size_t w = sizeof(VT) / sizeof(float);                                                           \
        const VT qv = SET1(q);                                                                                 \
        for (size_t i = 0; i + 2 * w <= n; i += 2 * w) {                                                       \
            VT x0 = FMA(qv, LOAD(c + i), LOAD(b + i)), x1 = FMA(qv, LOAD(c + i + w), LOAD(b + i + w));         \
            STORE(a + i, x0);                                                                                  \
            STORE(a + i + w, x1);                                                                              \
        }                                                                                                      \
    }

/* Portable C vectors (GCC vector extensions: SSE2 on x86-64, NEON on aarch64): mul + add, since an
 * ISO C build does not contract them into FMAs. */
typedef float pf32 __attribute__((vector_size(16), may_alias, aligned(16)));
typedef double pf64 __attribute__((vector_size(16), may_alias, aligned(16)));
#define P32_SET1(x) ((pf32){(x), (x), (x), (x)})
#define P64_SET1(x) ((pf64){(x), (x)})
#define P_FMA(a, b, c) ((a) * (b) + (c))
#define P_ADD(a, b) ((a) + (b))
#define P_LOAD(p) (*(const pf32 *)(const void *)(p))
#define P_STORE(p, x) (*(pf32 *)(void *)(p) = (x))
#define NOATTR

#define FMA_DECL_fma32_port(i) pf32 a##i = P32_SET1(1.01f + 0.01f * (i));
#define FMA_STEP_fma32_port(i) a##i = P_FMA(a##i, b, c);
#define FMA_DECL_fma64_port(i) pf64 a##i = P64_SET1(1.01 + 0.01 * (i));
#define FMA_STEP_fma64_port(i) a##i = P_FMA(a##i, b, c);
#define READ_DECL_read_port(u) pf32 s##u = P32_SET1(0.0f);
#define READ_STEP_read_port(u) s##u = P_ADD(s##u, P_LOAD(p + i + (u) * w));
DEF_FMA(fma32_port, NOATTR, pf32, float, P32_SET1, P_FMA, P_ADD)
DEF_FMA(fma64_port, NOATTR, pf64, double, P64_SET1, P_FMA, P_ADD)
DEF_READ(read_port, NOATTR, pf32, P_LOAD, P_ADD, P32_SET1(0.0f))
DEF_STREAM(copy_port, triad_port, NOATTR, pf32, P_LOAD, P_STORE, P32_SET1, P_FMA)

static int usable_always(void)
{
    return 1;
}

#if PROBE_X86
#define T_AVX512 __attribute__((target("avx512f")))
#define T_AVX2 __attribute__((target("avx2,fma")))

#define FMA_DECL_fma32_avx512(i) __m512 a##i = _mm512_set1_ps(1.01f + 0.01f * (i));
#define FMA_STEP_fma32_avx512(i) a##i = _mm512_fmadd_ps(a##i, b, c);
#define FMA_DECL_fma64_avx512(i) __m512d a##i = _mm512_set1_pd(1.01 + 0.01 * (i));
#define FMA_STEP_fma64_avx512(i) a##i = _mm512_fmadd_pd(a##i, b, c);
#define READ_DECL_read_avx512(u) __m512 s##u = _mm512_setzero_ps();
#define READ_STEP_read_avx512(u) s##u = _mm512_add_ps(s##u, _mm512_load_ps(p + i + (u) * w));
DEF_FMA(fma32_avx512, T_AVX512, __m512, float, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps)
DEF_FMA(fma64_avx512, T_AVX512, __m512d, double, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd)
DEF_READ(read_avx512, T_AVX512, __m512, _mm512_load_ps, _mm512_add_ps, _mm512_setzero_ps())
DEF_STREAM(copy_avx512, triad_avx512, T_AVX512, __m512, _mm512_load_ps, _mm512_store_ps, _mm512_set1_ps,
           _mm512_fmadd_ps)

#define FMA_DECL_fma32_avx2(i) __m256 a##i = _mm256_set1_ps(1.01f + 0.01f * (i));
#define FMA_STEP_fma32_avx2(i) a##i = _mm256_fmadd_ps(a##i, b, c);
#define FMA_DECL_fma64_avx2(i) __m256d a##i = _mm256_set1_pd(1.01 + 0.01 * (i));
#define FMA_STEP_fma64_avx2(i) a##i = _mm256_fmadd_pd(a##i, b, c);
#define READ_DECL_read_avx2(u) __m256 s##u = _mm256_setzero_ps();
#define READ_STEP_read_avx2(u) s##u = _mm256_add_ps(s##u, _mm256_load_ps(p + i + (u) * w));
DEF_FMA(fma32_avx2, T_AVX2, __m256, float, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps)
DEF_FMA(fma64_avx2, T_AVX2, __m256d, double, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd)
DEF_READ(read_avx2, T_AVX2, __m256, _mm256_load_ps, _mm256_add_ps, _mm256_setzero_ps())
DEF_STREAM(copy_avx2, triad_avx2, T_AVX2, __m256, _mm256_load_ps, _mm256_store_ps, _mm256_set1_ps,
           _mm256_fmadd_ps)

/* VDPBF16PS: each fp32 lane += two bf16 products (1.0 x 2^-24: the sums stay normal). */
__attribute__((target("avx512f,avx512bf16"))) static double bf16_avx512(long n)
{
    const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3380);
#define BF_DECL(i) __m512 a##i = _mm512_set1_ps(0.001f * (i));
#define BF_STEP(i) a##i = _mm512_dpbf16_ps(a##i, x, y);
#define BF_SUM(i) s = _mm512_add_ps(s, a##i);
    REP12(BF_DECL)
    for (long k = 0; k < n; k++) {
        REP12(BF_STEP)
    }
    __m512 s = _mm512_setzero_ps();
    REP12(BF_SUM)
    return _mm512_reduce_add_ps(s);
}

/* VPDPBUSD: each int32 lane += four u8 x s8 products (wrapping is harmless). */
__attribute__((target("avx512f,avx512vnni"))) static double int8_avx512(long n)
{
    const __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(3);
#define VN_DECL(i) __m512i a##i = _mm512_set1_epi32(i);
#define VN_STEP(i) a##i = _mm512_dpbusd_epi32(a##i, x, y);
#define VN_SUM(i) s = _mm512_add_epi32(s, a##i);
    REP12(VN_DECL)
    for (long k = 0; k < n; k++) {
        REP12(VN_STEP)
    }
    __m512i s = _mm512_setzero_si512();
    REP12(VN_SUM)
    int out[16]; /* not _mm512_reduce_add_epi32: its scalar int additions may overflow */
    memcpy(out, &s, sizeof out);
    double t = 0;
    for (int i = 0; i < 16; i++)
        t += out[i];
    return t;
}

/* Without VNNI, int8 runs as dse's own GEMM runs it (kern_gemm.c): bytes widened to int16 pairs,
 * VPMADDWD multiplying 16 pairs (256-bit) or 32 (512-bit) and adding each pair into an int32 lane, then
 * VPADDD into the accumulator: one multiply-add per int8 product, half the rate VNNI's VPDPBUSD has. */
__attribute__((target("avx2"))) static double int8_avx2(long n)
{
    const __m256i y = _mm256_set1_epi16(3);
#define MW_DECL(i) __m256i a##i = _mm256_set1_epi32(i);
#define MW_STEP(i) a##i = _mm256_add_epi32(a##i, _mm256_madd_epi16(a##i, y)); /* on the chain: not hoisted */
#define MW_SUM(i) s = _mm256_add_epi32(s, a##i);
    REP12(MW_DECL)
    for (long k = 0; k < n; k++) {
        REP12(MW_STEP)
    }
    __m256i s = _mm256_setzero_si256();
    REP12(MW_SUM)
    int out[8];
    memcpy(out, &s, sizeof out);
    double t = 0;
    for (int i = 0; i < 8; i++)
        t += out[i];
    return t;
}

__attribute__((target("avx512f,avx512bw"))) static double int8_avx512bw(long n)
{
    const __m512i y = _mm512_set1_epi16(3);
#define MZ_DECL(i) __m512i a##i = _mm512_set1_epi32(i);
#define MZ_STEP(i) a##i = _mm512_add_epi32(a##i, _mm512_madd_epi16(a##i, y));
#define MZ_SUM(i) s = _mm512_add_epi32(s, a##i);
    REP12(MZ_DECL)
    for (long k = 0; k < n; k++) {
        REP12(MZ_STEP)
    }
    __m512i s = _mm512_setzero_si512();
    REP12(MZ_SUM)
    int out[16];
    memcpy(out, &s, sizeof out);
    double t = 0;
    for (int i = 0; i < 16; i++)
        t += out[i];
    return t;
}

__attribute__((target("avx2,avxvnni"))) static double int8_avxvnni(long n)
{
    const __m256i x = _mm256_set1_epi8(1), y = _mm256_set1_epi8(3);
#define AV_DECL(i) __m256i a##i = _mm256_set1_epi32(i);
#define AV_STEP(i) a##i = _mm256_dpbusd_avx_epi32(a##i, x, y);
#define AV_SUM(i) s = _mm256_add_epi32(s, a##i);
    REP12(AV_DECL)
    for (long k = 0; k < n; k++) {
        REP12(AV_STEP)
    }
    __m256i s = _mm256_setzero_si256();
    REP12(AV_SUM)
    int out[8];
    memcpy(out, &s, sizeof out);
    double t = 0;
    for (int i = 0; i < 8; i++)
        t += out[i];
    return t;
}

static int usable_avx512(void)
{
    return __builtin_cpu_supports("avx512f");
}
static int usable_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
static int usable_avx512bw(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}
static int usable_avx512bf16(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
}
static int usable_avx512vnni(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni");
}
/* CPUID.(EAX=7, ECX=1):EAX bit 4 (not every compiler's __builtin_cpu_supports knows "avxvnni"). */
static int usable_avxvnni(void)
{
    unsigned a, b, c, d;
    return __builtin_cpu_supports("avx2") && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
}

/* Dependent register-register adds run at one per cycle: 100 per asm statement give the core clock.
 * (Not add-immediate: Golden Cove's renamer folds chains of small immediate adds.) */
#define ADD1 "add %1, %0\n\t"
#define ADD10 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1
#define HAVE_CLOCK_CHAIN 1
#endif /* PROBE_X86 */

#if PROBE_ARM64
#define N_FMA32(a, b, c) vfmaq_f32((c), (a), (b))
#define N_FMA64(a, b, c) vfmaq_f64((c), (a), (b))
/* FMLA overwrites its addend, so the chain accumulates (a += b c, growing by ~1e-6 a step: fp32
 * stalls near 16, never overflows) instead of a = a b + c, which costs two moves per FMLA. */
#define FMA_DECL_fma32_neon(i) float32x4_t a##i = vdupq_n_f32(1.01f + 0.01f * (i));
#define FMA_STEP_fma32_neon(i) a##i = vfmaq_f32(a##i, b, c);
#define FMA_DECL_fma64_neon(i) float64x2_t a##i = vdupq_n_f64(1.01 + 0.01 * (i));
#define FMA_STEP_fma64_neon(i) a##i = vfmaq_f64(a##i, b, c);
#define READ_DECL_read_neon(u) float32x4_t s##u = vdupq_n_f32(0.0f);
#define READ_STEP_read_neon(u) s##u = vaddq_f32(s##u, vld1q_f32(p + i + (u) * w));
DEF_FMA(fma32_neon, NOATTR, float32x4_t, float, vdupq_n_f32, N_FMA32, vaddq_f32)
DEF_FMA(fma64_neon, NOATTR, float64x2_t, double, vdupq_n_f64, N_FMA64, vaddq_f64)
DEF_READ(read_neon, NOATTR, float32x4_t, vld1q_f32, vaddq_f32, vdupq_n_f32(0.0f))
DEF_STREAM(copy_neon, triad_neon, NOATTR, float32x4_t, vld1q_f32, vst1q_f32, vdupq_n_f32, N_FMA32)

#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20)
#endif
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1UL << 14)
#endif

/* GCC's arm_neon.h declares these intrinsics under "arch=armv8.2-a+..." and inlines them only into
 * functions of that target; clang before 16 gates them on -march instead. */
#if defined(__clang__)
#define T_DOTPROD
#define T_BF16
#if defined(__ARM_FEATURE_DOTPROD)
#define PROBE_ARM_DOTPROD 1
#endif
#if defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
#define PROBE_ARM_BF16 1
#endif
#else
#define T_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#define T_BF16 __attribute__((target("arch=armv8.2-a+bf16")))
#define PROBE_ARM_DOTPROD 1
#define PROBE_ARM_BF16 1
#endif

#ifdef PROBE_ARM_DOTPROD
static int usable_dotprod(void)
{
    return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
}

/* SDOT: each int32 lane += four s8 x s8 products. */
T_DOTPROD static double int8_neon(long n)
{
    const int8x16_t x = vdupq_n_s8(1), y = vdupq_n_s8(3);
#define SD_DECL(i) int32x4_t a##i = vdupq_n_s32(i);
#define SD_STEP(i) a##i = vdotq_s32(a##i, x, y);
#define SD_SUM(i) s = vaddq_s32(s, a##i);
    REP12(SD_DECL)
    for (long k = 0; k < n; k++) {
        REP12(SD_STEP)
    }
    int32x4_t s = vdupq_n_s32(0);
    REP12(SD_SUM)
    return (double)vaddvq_s32(s);
}

#endif

#ifdef PROBE_ARM_BF16
static int usable_arm_bf16(void)
{
    return (getauxval(AT_HWCAP2) & HWCAP2_BF16) != 0;
}

/* BFDOT: each fp32 lane += two bf16 products. */
T_BF16 static double bf16_neon(long n)
{
    /* The bits come through volatiles: GCC 12 emits a bf16 vector constant of 1.0 as the fp16
     * immediate "fmov v.8h, 1.0" (wrong bits, and rejected by the assembler without +fp16). */
    volatile uint16_t one = 0x3f80, tiny = 0x3380;
    const bfloat16x8_t x = vreinterpretq_bf16_u16(vdupq_n_u16(one)), y = vreinterpretq_bf16_u16(vdupq_n_u16(tiny));
#define BD_DECL(i) float32x4_t a##i = vdupq_n_f32(0.001f * (i));
#define BD_STEP(i) a##i = vbfdotq_f32(a##i, x, y);
#define BD_SUM(i) s = vaddq_f32(s, a##i);
    REP12(BD_DECL)
    for (long k = 0; k < n; k++) {
        REP12(BD_STEP)
    }
    float32x4_t s = vdupq_n_f32(0.0f);
    REP12(BD_SUM)
    return (double)vaddvq_f32(s);
}
#endif


#define ADD1 "add %0, %0, %1\n\t"
#define ADD10 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1
#define HAVE_CLOCK_CHAIN 1
#endif /* PROBE_ARM64 */

#ifdef HAVE_CLOCK_CHAIN
static double clock_chain(long n)
{
    unsigned long x = 0, one = 1;
    for (long i = 0; i < n; i++)
        __asm__ volatile(ADD10 ADD10 ADD10 ADD10 ADD10 ADD10 ADD10 ADD10 ADD10 ADD10 : "+r"(x) : "r"(one));
    return (double)x;
}
#endif

/* A kernel set: FP32/FP64 FMA peaks and the memory kernels of one instruction set. */
struct isa {
    const char *name, *label;
    int (*usable)(void);
    double (*fma32)(long), (*fma64)(long);
    int lanes32, lanes64;
    double (*read)(const float *, size_t, long);
    void (*copy)(float *restrict, const float *restrict, size_t);
    void (*triad)(float *restrict, const float *restrict, const float *restrict, float, size_t);
    int mr, nr;
    const char *mk_src;
};

static const struct isa isas[] = {
#if PROBE_X86
    {"avx512", "AVX-512", usable_avx512, fma32_avx512, fma64_avx512, 16, 8, read_avx512, copy_avx512, triad_avx512,
     32, 12, "BLIS skx sgemm micro-kernel 32x12 (AVX-512)"},
    {"avx2", "AVX2+FMA", usable_avx2, fma32_avx2, fma64_avx2, 8, 4, read_avx2, copy_avx2, triad_avx2, 6, 16,
     "BLIS haswell sgemm micro-kernel 6x16 (AVX2)"},
#endif
#if PROBE_ARM64
    {"neon", "NEON", usable_always, fma32_neon, fma64_neon, 4, 2, read_neon, copy_neon, triad_neon, 8, 12,
     "BLIS armv8a sgemm micro-kernel 8x12 (NEON)"},
#endif
    {"portable", "portable C vectors (128-bit, mul+add)", usable_always, fma32_port, fma64_port, 4, 2, read_port,
     copy_port, triad_port, 4, 8, "assumption: a 4x8 register tile (no SIMD FMA kernel for this CPU)"},
};

/* Low-precision dot-product kernels; the first usable one per precision runs. */
struct lowp {
    enum probe_peak prec;
    const char *needs; /* kernel sets it goes with */
    const char *how;
    int (*usable)(void);
    double (*run)(long);
    double ops_per_iter;
};

static const struct lowp lowps[] = {
#if PROBE_X86
    {PROBE_BF16, "avx512", "12 VDPBF16PS chains of AVX-512 (16 fp32 lanes x 2 bf16 products)", usable_avx512bf16,
     bf16_avx512, CHAINS * 16 * 2 * 2},
    {PROBE_INT8, "avx512", "12 VPDPBUSD chains of AVX-512 VNNI (64 int8 MACs each)", usable_avx512vnni, int8_avx512,
     CHAINS * 64 * 2},
    {PROBE_INT8, "avx512 avx2", "12 VPDPBUSD chains of AVX-VNNI (256-bit, 32 int8 MACs each)", usable_avxvnni,
     int8_avxvnni, CHAINS * 32 * 2},
    /* no VNNI: the int16-pair path dse's GEMM takes */
    {PROBE_INT8, "avx512", "12 VPMADDWD+VPADDD chains of AVX-512BW (int8 as int16 pairs, 32 MACs each)",
     usable_avx512bw, int8_avx512bw, CHAINS * 32 * 2},
    {PROBE_INT8, "avx2", "12 VPMADDWD+VPADDD chains of AVX2 (int8 as int16 pairs, 16 MACs each)", usable_avx2,
     int8_avx2, CHAINS * 16 * 2},
#endif
#ifdef PROBE_ARM_BF16
    {PROBE_BF16, "neon", "12 BFDOT chains of NEON (4 fp32 lanes x 2 bf16 products)", usable_arm_bf16, bf16_neon,
     CHAINS * 4 * 2 * 2},
#endif
#ifdef PROBE_ARM_DOTPROD
    {PROBE_INT8, "neon", "12 SDOT chains of NEON (16 int8 MACs each)", usable_dotprod, int8_neon, CHAINS * 16 * 2},
#endif
    {PROBE_NPEAK, NULL, NULL, NULL, NULL, 0},
};

void probe_isa_list(char *buf, unsigned n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
        if (isas[i].usable() && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "", isas[i].name);
}

/* ------------------------------------------------------------------------------------------------
 * The timed loop: every thread of a region calls it; thread 0 times between barriers. */

enum job_kind { J_FLOPS, J_READ, J_READ3, J_COPY, J_TRIAD, J_CLOCK };

struct job {
    enum job_kind kind;
    double (*flops)(long);
    long reps0;
    double units;      /* FLOPs, bytes or adds per rep per thread */
    int per_thread;    /* the figure is per thread (the clock), not summed */
    struct probe_stat *out;
};

struct bufs {
    float *a, *b, *c;
    size_t n; /* floats per array */
};

struct ctx {
    const struct probe_host *h;
    const struct isa *isa;
    int threads, pin, runs;
    double tau; /* target seconds per timed run */
    /* shared state of the region now running (written by thread 0 between barriers) */
    int nt, stop, calibrated, ncal, timed, fail;
    long reps;
    double t0, secs[PROBE_MAX_RUNS];
    double *sink;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static int num_threads(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

static void pin_self(const struct ctx *cx, int tid)
{
    if (!cx->pin)
        return;
    cpu_set_t s;
    int cpu = cx->h->pin[tid % cx->h->n_pin];
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    (void)sched_setaffinity(0, sizeof s, &s); /* a refusal leaves the thread where it is */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void make_stat(const double *rates, int n, struct probe_stat *st)
{
    double s[PROBE_MAX_RUNS];
    memcpy(s, rates, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    st->runs = n;
    st->min = s[0];
    st->max = s[n - 1];
    st->median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static double do_work(const struct ctx *cx, const struct job *jb, struct bufs *b, long reps)
{
    double sum = 0;
    switch (jb->kind) {
    case J_FLOPS:
        return jb->flops(reps);
    case J_READ:
        return cx->isa->read(b->a, b->n, reps);
    case J_READ3: /* the three STREAM arrays in turn: no array is reread before 2 others pass */
        for (long r = 0; r < reps; r++)
            sum += cx->isa->read(b->a, b->n, 1) + cx->isa->read(b->b, b->n, 1) + cx->isa->read(b->c, b->n, 1);
        return sum;
    case J_COPY:
        for (long r = 0; r < reps; r++)
            cx->isa->copy(b->c, b->a, b->n);
        return b->c[b->n - 1];
    case J_TRIAD:
        for (long r = 0; r < reps; r++)
            cx->isa->triad(b->a, b->b, b->c, 3.0f, b->n);
        return b->a[b->n - 1];
    case J_CLOCK:
#ifdef HAVE_CLOCK_CHAIN
        return clock_chain(reps);
#else
        return 0;
#endif
    }
    return 0;
}

/* Thread 0, after a run of dt seconds: warm-up runs grow the work until a run lasts at least half
 * of tau, then it is set to about tau and `runs` timed runs follow. */
static void loop_update(struct ctx *cx, const struct job *jb, double dt)
{
    if (!cx->calibrated) {
        cx->ncal++;
        if (dt >= 0.5 * cx->tau || cx->ncal >= 24 || cx->reps > (1L << 40)) {
            double f = dt > 0 ? cx->tau / dt : 1;
            long r = (long)((double)cx->reps * f + 0.5);
            cx->reps = r > 0 ? r : 1;
            cx->calibrated = 1;
        } else {
            double f = dt > 0 ? 1.2 * cx->tau / dt : 1000;
            cx->reps = (long)((double)cx->reps * (f < 2 ? 2 : f > 1000 ? 1000 : f));
        }
        return;
    }
    cx->secs[cx->timed++] = dt > 1e-9 ? dt : 1e-9;
    if (cx->timed < cx->runs)
        return;
    double rates[PROBE_MAX_RUNS];
    for (int i = 0; i < cx->timed; i++)
        rates[i] = jb->units * (double)cx->reps * (jb->per_thread ? 1 : cx->nt) / cx->secs[i];
    make_stat(rates, cx->timed, jb->out);
    cx->stop = 1;
}

static void timed_loop(struct ctx *cx, const struct job *jb, struct bufs *b, int tid)
{
    /* Every thread has left the previous loop (read its stop flag) before thread 0 resets it. */
#pragma omp barrier
    if (tid == 0) {
        cx->reps = jb->reps0 > 0 ? jb->reps0 : 1;
        cx->stop = cx->calibrated = cx->ncal = cx->timed = 0;
    }
#pragma omp barrier
    for (;;) {
        long reps = cx->reps;
        if (cx->stop)
            break;
        if (tid == 0)
            cx->t0 = now_s();
        cx->sink[tid] += do_work(cx, jb, b, reps);
#pragma omp barrier
        if (tid == 0)
            loop_update(cx, jb, now_s() - cx->t0);
#pragma omp barrier
    }
}

/* A region with no buffers: an arithmetic peak or the clock. */
static void run_compute(struct ctx *cx, const struct job *jb)
{
#pragma omp parallel num_threads(cx->threads)
    {
        int tid = thread_num();
        if (tid == 0)
            cx->nt = num_threads();
        pin_self(cx, tid);
        timed_loop(cx, jb, NULL, tid);
    }
}

/* Page-aligned buffers. No MADV_HUGEPAGE: in a KVM guest it made the first touch of 1 GiB 3-8x
 * slower (1.4-4.5 s against 0.53 s), and the streaming kernels do not need it. */
static float *buf_alloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes))
        return NULL;
    return p;
}

static void buf_fill(float *p, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        p[i] = v;
}

/* Read bandwidth with per-thread buffers of n floats (first touched by their own thread). */
static int run_read(struct ctx *cx, size_t n, struct probe_stat *out)
{
    struct job jb = {J_READ, NULL, 0, 4.0 * (double)n, 0, out};
    long r0 = (long)((1u << 20) / (4 * n));
    jb.reps0 = r0 > 0 ? r0 : 1;
    cx->fail = 0;
#pragma omp parallel num_threads(cx->threads)
    {
        int tid = thread_num();
        struct bufs b = {buf_alloc(4 * n), NULL, NULL, n};
        if (tid == 0)
            cx->nt = num_threads();
        pin_self(cx, tid);
        if (b.a)
            buf_fill(b.a, n, 1.0f);
        else {
#pragma omp atomic write
            cx->fail = 1;
        }
#pragma omp barrier
        if (!cx->fail)
            timed_loop(cx, &jb, &b, tid);
        free(b.a);
    }
    return cx->fail ? -1 : 0;
}

/* DRAM: read (all three arrays), STREAM copy (c = a: 8 bytes per float) and triad (a = b + q c: 12
 * bytes per float). */
static int run_dram(struct ctx *cx, size_t n, struct probe_meas *m)
{
    struct job rd = {J_READ3, NULL, 1, 12.0 * (double)n, 0, &m->read[PROBE_DRAM]};
    struct job cp = {J_COPY, NULL, 1, 8.0 * (double)n, 0, &m->copy};
    struct job tr = {J_TRIAD, NULL, 1, 12.0 * (double)n, 0, &m->triad};
    cx->fail = 0;
#pragma omp parallel num_threads(cx->threads)
    {
        int tid = thread_num();
        struct bufs b = {buf_alloc(4 * n), buf_alloc(4 * n), buf_alloc(4 * n), n};
        if (tid == 0)
            cx->nt = num_threads();
        pin_self(cx, tid);
        if (b.a && b.b && b.c) {
            buf_fill(b.a, n, 1.0f);
            buf_fill(b.b, n, 2.0f);
            buf_fill(b.c, n, 0.0f);
        } else {
#pragma omp atomic write
            cx->fail = 1;
        }
#pragma omp barrier
        if (!cx->fail) {
            timed_loop(cx, &rd, &b, tid);
            timed_loop(cx, &cp, &b, tid);
            timed_loop(cx, &tr, &b, tid);
        }
        free(b.a);
        free(b.b);
        free(b.c);
    }
    return cx->fail ? -1 : 0;
}

/* Package power over a short sleep, from the RAPL energy counters; < 0 when unreadable. */
static double rapl_idle_W(const struct probe_host *h, double secs)
{
    long long e0[8], e1[8], range;
    char p[PATH_BUF];
    if (h->n_rapl_zone == 0)
        return -1;
    for (int i = 0; i < h->n_rapl_zone; i++) {
        snprintf(p, sizeof p, "%s/energy_uj", h->rapl_zone[i]);
        if (read_ll("", p, &e0[i]))
            return -1;
    }
    double t0 = now_s();
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    double dt = now_s() - t0, uj = 0;
    for (int i = 0; i < h->n_rapl_zone; i++) {
        snprintf(p, sizeof p, "%s/energy_uj", h->rapl_zone[i]);
        if (read_ll("", p, &e1[i]))
            return -1;
        long long d = e1[i] - e0[i];
        snprintf(p, sizeof p, "%s/max_energy_range_uj", h->rapl_zone[i]);
        if (d < 0 && read_ll("", p, &range) == 0 && range > 0)
            d += range; /* the counter wrapped */
        if (d < 0)
            return -1;
        uj += (double)d;
    }
    return dt > 0 ? uj / 1e6 / dt : -1;
}

static size_t round_floats(double bytes)
{
    size_t n = (size_t)(bytes / 4.0) / 1024 * 1024;
    return n >= 1024 ? n : 1024;
}

int probe_measure(const struct probe_host *h, const struct probe_opts *o, struct probe_meas *m, struct dse_err *e)
{
    struct ctx cx;
    const struct isa *isa = NULL;
    double t_start = now_s();
    memset(m, 0, sizeof *m);
    memset(&cx, 0, sizeof cx);
    for (size_t i = 0; i < sizeof isas / sizeof isas[0] && !isa; i++)
        if ((!o->isa || !strcmp(o->isa, isas[i].name)) && isas[i].usable())
            isa = &isas[i];
    if (!isa) {
        char list[128];
        probe_isa_list(list, sizeof list);
        return dse_err_set(e, DSE_EINPUT, NULL, "--isa", "'%s' is not a kernel set this CPU runs (expected one of: %s)",
                           o->isa, list);
    }
    snprintf(m->isa, sizeof m->isa, "%s", isa->name);
    snprintf(m->isa_label, sizeof m->isa_label, "%s", isa->label);
    m->mr = isa->mr;
    m->nr = isa->nr;
    snprintf(m->mk_src, sizeof m->mk_src, "%s", isa->mk_src);
    cx.h = h;
    cx.isa = isa;
    cx.threads = o->threads > 0 ? o->threads : (h->physical > 0 ? h->physical : 1);
    cx.runs = o->quick ? 5 : 9;
    cx.tau = o->quick ? 0.02 : 0.1;
    /* Pin unless the user told OpenMP where to place threads. */
    const char *pb = getenv("OMP_PROC_BIND"), *pl = getenv("OMP_PLACES"), *ga = getenv("GOMP_CPU_AFFINITY");
    cx.pin = !(pb && *pb) && !(pl && *pl) && !(ga && *ga) && h->n_pin > 0;
    cx.sink = calloc((size_t)cx.threads, sizeof *cx.sink);
    if (!cx.sink)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    m->pinned = cx.pin;
    m->runs = cx.runs;
    m->run_s = cx.tau;
    m->idle_W = rapl_idle_W(h, o->quick ? 0.2 : 0.5); /* first, while nothing of ours runs */
    struct hostload_mark load0, load1; /* what else ran meanwhile (steal, other processes) */
    hostload_mark(&load0);
    double wall0 = now_s();

    cpu_set_t saved;
    int have_saved = sched_getaffinity(0, sizeof saved, &saved) == 0;

    struct job clk = {J_CLOCK, NULL, 2000, 100, 1, &m->clock_MHz};
#ifdef HAVE_CLOCK_CHAIN
    run_compute(&cx, &clk);
    m->clock_MHz.median /= 1e6, m->clock_MHz.min /= 1e6, m->clock_MHz.max /= 1e6;
#else
    (void)clk;
#endif

    /* Peaks: FP32 and FP64 FMA chains, then bf16 and int8 dot products where the CPU has them. */
    struct job fj = {J_FLOPS, isa->fma32, 20000, 2.0 * CHAINS * isa->lanes32, 0, &m->peak[PROBE_FP32]};
    run_compute(&cx, &fj);
    m->threads = cx.nt;
    m->peak_per_iter[PROBE_FP32] = fj.units;
    snprintf(m->peak_how[PROBE_FP32], sizeof m->peak_how[0], "%d FMA chains of %s (%d fp32 lanes)", CHAINS,
             isa->label, isa->lanes32);
    fj = (struct job){J_FLOPS, isa->fma64, 20000, 2.0 * CHAINS * isa->lanes64, 0, &m->peak[PROBE_FP64]};
    run_compute(&cx, &fj);
    m->peak_per_iter[PROBE_FP64] = fj.units;
    snprintf(m->peak_how[PROBE_FP64], sizeof m->peak_how[0], "%d FMA chains of %s (%d fp64 lanes)", CHAINS,
             isa->label, isa->lanes64);
    for (const struct lowp *lp = lowps; lp->run; lp++) {
        if (m->peak[lp->prec].runs || !strstr(lp->needs, isa->name) || !lp->usable())
            continue;
        fj = (struct job){J_FLOPS, lp->run, 20000, lp->ops_per_iter, 0, &m->peak[lp->prec]};
        run_compute(&cx, &fj);
        m->peak_per_iter[lp->prec] = lp->ops_per_iter;
        snprintf(m->peak_how[lp->prec], sizeof m->peak_how[0], "%s", lp->how);
    }

    /* Caches: per-thread buffers of half a thread's share of each level. */
    int rc = DSE_OK;
    double t_phase = now_s();
    m->peaks_s = t_phase - wall0;
    m->cache_bytes = 0;
    for (int lv = 1; lv <= 3; lv++) {
        const struct probe_cache *c = probe_data_cache(h, lv);
        if (!c)
            continue;
        double agg = c->size_bytes * probe_cache_instances(h, c, cx.threads);
        m->cache_bytes += agg;
        size_t n = round_floats(agg / 2 / cx.threads);
        m->buf_bytes[lv - 1] = 4.0 * (double)n;
        if (run_read(&cx, n, &m->read[lv - 1])) {
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory for the %s buffers (%zu bytes per thread)",
                             probe_level_names[lv - 1], 4 * n);
            goto out;
        }
    }
    for (int i = 0; i < h->n_cache; i++) /* levels beyond 3 still size the DRAM arrays */
        if (h->cache[i].level > 3 && strcmp(h->cache[i].type, "Instruction") != 0)
            m->cache_bytes += h->cache[i].size_bytes * probe_cache_instances(h, &h->cache[i], cx.threads);

    /* DRAM: each of the three STREAM arrays >= 4x all caches (at least 512 MiB; --quick: 2x, 256 MiB,
     * since first touching gigabytes can take seconds in a VM), all three within a quarter of memory
     * (or of the cgroup limit). */
    double mem = h->mem_bytes;
    if (h->cgroup_mem_bytes > 0 && (mem == 0 || h->cgroup_mem_bytes < mem))
        mem = h->cgroup_mem_bytes;
    m->caches_s = now_s() - t_phase;
    t_phase = now_s();
    double per_array = o->quick ? fmax(2 * m->cache_bytes, 256.0 * (1 << 20))
                                : fmax(4 * m->cache_bytes, 512.0 * (1 << 20));
    if (mem > 0 && 3 * per_array > mem / 4)
        per_array = mem / 12;
    size_t n = round_floats(per_array / cx.threads);
    m->buf_bytes[PROBE_DRAM] = 4.0 * (double)n;
    if (run_dram(&cx, n, m)) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory for the DRAM arrays (3 x %zu bytes per thread)",
                         4 * n);
        goto out;
    }
    m->dram_s = now_s() - t_phase;

    /* The last cache level's sysfs size need not be what this process gets (a VM is shown the host's
     * whole L3, shared with other tenants). Its buffer is halved down to twice the level below's
     * share, reading at each size; the largest size that reads at least 3/4 of the best rate sets the
     * level's capacity and bandwidth. If even the best is under 1.25x DRAM the level is no cache for
     * this process and is left out of the hwdesc. */
    double dram_bw = m->read[PROBE_DRAM].runs ? m->read[PROBE_DRAM].median : 0;
    int lv = PROBE_L3;
    while (lv > PROBE_L1 && !m->read[lv].runs)
        lv--;
    if (lv > PROBE_L1 && dram_bw > 0) {
        double floor_bytes = 4 * m->buf_bytes[lv - 1]; /* twice the level below's per-thread share */
        struct probe_stat st[PROBE_CURVE_MAX];
        m->curve_level = lv;
        m->curve_bytes[0] = m->buf_bytes[lv];
        st[0] = m->read[lv];
        m->n_curve = 1;
        size_t nn = (size_t)(m->buf_bytes[lv] / 4);
        while (m->n_curve < PROBE_CURVE_MAX && 2.0 * (double)nn >= floor_bytes) {
            nn = round_floats(2.0 * (double)nn); /* half of nn floats (4 nn bytes) */
            if (run_read(&cx, nn, &st[m->n_curve])) {
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory for the %s buffers",
                                 probe_level_names[lv]);
                goto out;
            }
            m->curve_bytes[m->n_curve++] = 4.0 * (double)nn;
        }
        double best = 0;
        for (int i = 0; i < m->n_curve; i++) {
            m->curve_Bps[i] = st[i].median;
            best = fmax(best, st[i].median);
        }
        int pick = 0;
        while (pick < m->n_curve - 1 && st[pick].median < 0.75 * best)
            pick++;
        if (best < 1.25 * dram_bw) {
            m->dropped[lv] = 1;
            m->read[lv].runs = 0;
        } else if (pick > 0) {
            m->read[lv] = st[pick];
            m->buf_bytes[lv] = m->curve_bytes[pick];
            m->eff_cap_bytes[lv] = 2 * m->curve_bytes[pick] * cx.threads;
        }
    }
    m->caches_s += now_s() - t_phase - m->dram_s;
    m->stream_fraction = 1;
    if (m->read[PROBE_DRAM].runs && m->triad.runs && m->read[PROBE_DRAM].median > 0)
        m->stream_fraction = fmin(1.0, m->triad.median / m->read[PROBE_DRAM].median);
out:
    hostload_mark(&load1);
    struct hostload load;
    hostload_between(&load0, &load1, &load);
    m->steal_pct = load.ok ? load.steal_pct : -1;
    m->other_pct = load.ok ? load.other_pct : -1;
    if (have_saved)
        (void)sched_setaffinity(0, sizeof saved, &saved);
    free(cx.sink);
    m->seconds = now_s() - t_start;
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * The hwdesc */

double probe_clock_MHz(const struct probe_host *h, const struct probe_meas *m, char *src, unsigned n)
{
    char tmp[96];
    if (!src)
        src = tmp, n = sizeof tmp;
    if (h->max_MHz > 0) {
        snprintf(src, n, "cpufreq cpuinfo_max_freq");
        return h->max_MHz;
    }
    /* Without cpufreq, the clock measured in the same run as the peaks: /proc/cpuinfo's figure is
     * the nominal clock, which turbo exceeds (a VM here ran at 2.88 GHz under a stated 2.3, making
     * the per-cycle rate 72 fp32 FLOP where AVX-512 allows 64). Used when its runs agree within 20 %. */
    if (m && m->clock_MHz.runs && m->clock_MHz.median > 0 &&
        m->clock_MHz.max - m->clock_MHz.min <= 0.2 * m->clock_MHz.median) {
        snprintf(src, n, "the measured dependent-add clock (no cpufreq on this host)");
        return m->clock_MHz.median;
    }
    if (h->cpuinfo_MHz > 0) {
        snprintf(src, n, "/proc/cpuinfo cpu MHz (no cpufreq on this host)");
        return h->cpuinfo_MHz;
    }
    if (m && m->clock_MHz.runs && m->clock_MHz.median > 0) {
        snprintf(src, n, "the measured dependent-add clock (no cpufreq, no cpu MHz)");
        return m->clock_MHz.median;
    }
    snprintf(src, n, "nothing: no cpufreq, cpu MHz or measured clock");
    return 0;
}

/* Four significant digits: figures measured to about 1% need no more. */
static double sig4(double x)
{
    char b[40];
    snprintf(b, sizeof b, "%.4g", x);
    return strtod(b, NULL);
}

static void size_str(double bytes, char *buf, size_t n)
{
    if (bytes >= 1024.0 * 1024 * 1024 && fmod(bytes, 1024.0 * 1024 * 1024) == 0)
        snprintf(buf, n, "%.0f GiB", bytes / (1024.0 * 1024 * 1024));
    else if (bytes >= 1024.0 * 1024 && fmod(bytes, 1024.0 * 1024) == 0)
        snprintf(buf, n, "%.0f MiB", bytes / (1024.0 * 1024));
    else if (bytes >= 1024.0 * 1024)
        snprintf(buf, n, "%.1f MiB", bytes / (1024.0 * 1024));
    else
        snprintf(buf, n, "%.0f KiB", bytes / 1024);
}

static double spread_pct(const struct probe_stat *s)
{
    return s->median > 0 ? 100 * (s->max - s->min) / s->median : 0;
}

static void cpus_str(const struct probe_host *h, int n, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    if (n > h->n_pin)
        n = h->n_pin;
    for (int i = 0; i < n && k + 16 < len; i++) {
        int j = i;
        while (j + 1 < n && h->pin[j + 1] == h->pin[j] + 1)
            j++;
        if (j > i + 1)
            k += (size_t)snprintf(buf + k, len - k, "%s%d-%d", k ? "," : "", h->pin[i], h->pin[j]);
        else {
            k += (size_t)snprintf(buf + k, len - k, "%s%d", k ? "," : "", h->pin[i]);
            j = i;
        }
        i = j;
    }
}

static void add_str(cJSON *o, const char *k, const char *v)
{
    cJSON_AddStringToObject(o, k, v);
}

cJSON *probe_hwdesc(const struct probe_host *h, const struct probe_meas *m, const char *name, const char *date)
{
    char src[1000], how[160], model[104], clk_src[96], cpus[160];
    int T = m->threads > 0 ? m->threads : 1;
    const char *unit_kind = T > h->physical ? "hardware thread" : "core";
    const char *units_word = T > h->physical ? "threads" : "cores";
    double clock = probe_clock_MHz(h, m, clk_src, sizeof clk_src);
    int clock_assumed = clock <= 0;
    if (clock_assumed)
        clock = 1000;
    dse_strlcpy(model, h->model, sizeof model);
    cpus_str(h, T, cpus, sizeof cpus);

    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    add_str(root, "schema", "dse-hwdesc-1");
    add_str(root, "name", name);
    snprintf(src, sizeof src, "This host: %s, %d %s, %s (measured by dse probe %s)", model, T, units_word,
             m->isa_label, date);
    add_str(root, "description", src);
    char env[1200];
    snprintf(env, sizeof env,
             "written by dse probe on %s; environment: CPU %s (%s, %d online / %d allowed logical CPUs, %d physical "
             "cores, %d package%s); governor %s; cpufreq cur %.0f / max %.0f / base %.0f MHz (0 = unknown); "
             "/proc/cpuinfo %.0f MHz; dependent-add clock %.0f MHz; compiler %s, OpenMP %ld; %d threads %s "
             "(CPUs %s); OMP_PROC_BIND=%s, OMP_PLACES=%s; %s kernels; median of %d runs of about %.0f ms; during "
             "the run %.1f%% of CPU time was stolen by the hypervisor and %.1f%% used by other processes (/proc/stat, "
             "-1 = unknown)",
             date, h->model, h->arch, h->online, h->allowed, h->physical, h->packages, h->packages == 1 ? "" : "s",
             h->governor, h->cur_MHz, h->max_MHz, h->base_MHz, h->cpuinfo_MHz,
             m->clock_MHz.runs ? m->clock_MHz.median : 0, h->compiler, h->openmp, T,
             m->pinned ? "pinned by dse probe (sched_setaffinity), one per physical core first"
                       : "placed by OpenMP (OMP_PROC_BIND/OMP_PLACES set)",
             cpus, h->omp_proc_bind, h->omp_places, m->isa_label, m->runs, 1000 * m->run_s, m->steal_pct,
             m->other_pct);
    add_str(root, "note", env);

    cJSON *devs = cJSON_AddArrayToObject(root, "devices"), *d = cJSON_CreateObject();
    cJSON_AddItemToArray(devs, d);
    add_str(d, "name", "cpu");
    add_str(d, "class", "cpu");
    add_str(d, "model", model);

    cJSON *ck = cJSON_AddObjectToObject(d, "clock");
    /* Base is informational: cpufreq base_frequency, else (no cpufreq, as in most VMs) the nominal
     * /proc/cpuinfo MHz; on bare metal with cpufreq, cpu MHz is the current clock, so not that. */
    double base = clock;
    const char *base_src = "as boost (no base_frequency)";
    if (h->base_MHz > 0)
        base = h->base_MHz, base_src = "cpufreq base_frequency";
    else if (h->max_MHz <= 0 && h->cpuinfo_MHz > 0)
        base = h->cpuinfo_MHz, base_src = "/proc/cpuinfo cpu MHz";
    if (base > clock)
        base = clock;
    cJSON_AddNumberToObject(ck, "base_MHz", sig4(base));
    cJSON_AddNumberToObject(ck, "boost_MHz", sig4(clock));
    char meas[160];
    if (m->clock_MHz.runs)
        snprintf(meas, sizeof meas,
                 "; measured by dse probe %s: a dependent-add chain ran at %.0f MHz per thread on %d threads "
                 "(median of %d, spread %.1f%%)",
                 date, m->clock_MHz.median, T, m->clock_MHz.runs, spread_pct(&m->clock_MHz));
    else
        snprintf(meas, sizeof meas, "; the core clock was not measured (no dependent-add kernel for %s)", h->arch);
    if (clock_assumed)
        snprintf(src, sizeof src, "assumed 1000 MHz: %s; per-cycle figures are per 1 GHz%s", clk_src, meas);
    else
        snprintf(src, sizeof src, "boost: %s %.0f MHz; base: %s%s", clk_src, clock, base_src, meas);
    add_str(ck, "source", src);

    cJSON *comp = cJSON_AddArrayToObject(d, "compute");
    for (int p = 0; p < PROBE_NPEAK; p++) {
        const struct probe_stat *s = &m->peak[p];
        if (!s->runs || s->median <= 0)
            continue;
        cJSON *c = cJSON_CreateObject();
        add_str(c, "engine", "vector");
        add_str(c, "precision", probe_peak_names[p]);
        cJSON_AddNumberToObject(c, "units", T);
        snprintf(how, sizeof how, "%s (%s, measured)", unit_kind,
                 p == PROBE_BF16 ? "bf16 dot products" : p == PROBE_INT8 ? "int8 dot products" : m->isa_label);
        add_str(c, "unit", how);
        cJSON_AddNumberToObject(c, "flops_per_cycle_per_unit", sig4(s->median / (T * clock * 1e6)));
        cJSON_AddNumberToObject(c, "clock_MHz", sig4(clock));
        snprintf(src, sizeof src,
                 "measured by dse probe %s: %s on %d threads, median of %d: %.1f G%s/s (spread %.1f%%); "
                 "flops_per_cycle_per_unit = rate / (%d %s x %.0f MHz%s)",
                 date, m->peak_how[p], T, s->runs, s->median / 1e9, p == PROBE_INT8 ? "OP" : "FLOP", spread_pct(s), T,
                 units_word, clock, clock_assumed ? ", assumed" : "");
        add_str(c, "source", src);
        cJSON_AddItemToArray(comp, c);
    }

    cJSON *mem = cJSON_AddArrayToObject(d, "memory");
    char dropped[160] = "";
    for (int lv = 0; lv < PROBE_DRAM; lv++)
        if (m->dropped[lv]) {
            size_t k = strlen(dropped);
            snprintf(dropped + k, sizeof dropped - k, "%s%s", k ? ", " : "", probe_level_names[lv]);
        }
    for (int lv = 0; lv < PROBE_NLEVEL; lv++) {
        const struct probe_stat *s = &m->read[lv];
        if (!s->runs || s->median <= 0)
            continue;
        cJSON *l = cJSON_CreateObject();
        char one[32], buf[32];
        add_str(l, "name", probe_level_names[lv]);
        add_str(l, "kind", lv == PROBE_DRAM ? "dram" : "cache");
        if (lv == PROBE_DRAM) /* sets its energy per byte (hw_memtech.c); the probe cannot see the DRAM type */
            add_str(l, "technology", "ddr4");
        size_str(m->buf_bytes[lv], buf, sizeof buf);
        if (lv == PROBE_DRAM) {
            double gib = h->mem_bytes / (1024.0 * 1024 * 1024);
            cJSON_AddNumberToObject(l, "capacity_GiB", gib > 0 ? sig4(gib) : 1);
            cJSON_AddNumberToObject(l, "bandwidth_GBps", sig4(s->median / 1e9));
            char tot[32], cache[32];
            size_str(m->buf_bytes[lv] * T, tot, sizeof tot);
            size_str(m->cache_bytes, cache, sizeof cache);
            snprintf(src, sizeof src,
                     "measured by dse probe %s: %s vectorized sum over the three STREAM arrays of %s per thread "
                     "(each %s in all, against %s of caches) on %d threads, median of %d (spread %.1f%%); capacity: %s",
                     date, m->isa_label, buf, tot, cache, T, s->runs, spread_pct(s),
                     h->mem_bytes > 0 ? "/proc/meminfo MemTotal" : "unknown (1 GiB placeholder)");
            dse_strlcpy(src + strlen(src), "; technology: assumed ddr4 (not measured: edit it to this host's DRAM)",
                        sizeof src - strlen(src));
            if (dropped[0]) {
                size_t k = strlen(src);
                snprintf(src + k, sizeof src - k,
                         "; left out: %s (no buffer above the level below read at least 1.25x DRAM)", dropped);
            }
        } else {
            const struct probe_cache *c = probe_data_cache(h, lv + 1);
            int inst = c ? probe_cache_instances(h, c, T) : 1;
            double cap = c ? c->size_bytes * inst : m->buf_bytes[lv] * 2 * T;
            if (m->eff_cap_bytes[lv] > 0)
                cap = m->eff_cap_bytes[lv];
            cJSON_AddNumberToObject(l, "capacity_KiB", round(cap / 1024)); /* exact: sizes are whole KiB */
            cJSON_AddNumberToObject(l, "bandwidth_GBps", sig4(s->median / 1e9));
            size_str(c ? c->size_bytes : 0, one, sizeof one);
            int k = snprintf(src, sizeof src,
                             "measured by dse probe %s: %s vectorized sum over %s per thread (half a thread's share of "
                             "the level) on %d threads, median of %d (spread %.1f%%); capacity: ",
                             date, m->isa_label, buf, T, s->runs, spread_pct(s));
            if (k > 0 && (unsigned)k < sizeof src) {
                if (m->eff_cap_bytes[lv] > 0) {
                    k += snprintf(src + k, sizeof src - (size_t)k,
                                  "measured (sysfs says %s x %d, but per thread", one, inst);
                    for (int i = 0; i < m->n_curve && k > 0 && (unsigned)k < sizeof src; i++) {
                        char sb[32];
                        size_str(m->curve_bytes[i], sb, sizeof sb);
                        k += snprintf(src + k, sizeof src - (size_t)k, "%s %s read at %.1f GB/s", i ? "," : "", sb,
                                      m->curve_Bps[i] / 1e9);
                    }
                    if (k > 0 && (unsigned)k < sizeof src)
                        snprintf(src + k, sizeof src - (size_t)k,
                                 ": twice the largest buffer within 3/4 of the best rate, times %d threads)", T);
                } else
                    snprintf(src + k, sizeof src - (size_t)k, "sysfs cache, %s x %d %s", one, inst,
                             c && c->per_core ? "(per core)" : "(shared)");
            }
        }
        add_str(l, "source", src);
        cJSON_AddItemToArray(mem, l);
    }

    cJSON *pw = cJSON_AddObjectToObject(d, "power");
    if (h->rapl_tdp_W > 0) {
        double idle = m->idle_W >= 0 && m->idle_W < h->rapl_tdp_W ? m->idle_W : 0.2 * h->rapl_tdp_W;
        cJSON_AddNumberToObject(pw, "idle_W", sig4(idle));
        cJSON_AddNumberToObject(pw, "tdp_W", sig4(h->rapl_tdp_W));
        snprintf(src, sizeof src,
                 "tdp: RAPL constraint_0_max_power_uw summed over %d package%s (powercap intel-rapl); idle: %s", 
                 h->rapl_packages, h->rapl_packages == 1 ? "" : "s",
                 m->idle_W >= 0 && m->idle_W < h->rapl_tdp_W
                     ? "measured by dse probe from the RAPL energy counters while it slept (whole package, other load "
                       "included)"
                     : "estimate 20% of TDP (RAPL energy counters unreadable)");
    } else {
        double cores = h->physical > 0 ? h->physical : T;
        cJSON_AddNumberToObject(pw, "idle_W", 5);
        cJSON_AddNumberToObject(pw, "tdp_W", 5 + 10 * cores);
        snprintf(src, sizeof src, "estimate: no RAPL on this host; 5 W idle + 10 W per core (%.0f cores)", cores);
    }
    add_str(pw, "source", src);

    cJSON *cp = cJSON_AddObjectToObject(d, "cpu");
    cJSON_AddNumberToObject(cp, "mr", m->mr);
    cJSON_AddNumberToObject(cp, "nr", m->nr);
    cJSON_AddNumberToObject(cp, "stream_fraction", sig4(m->stream_fraction > 0 ? m->stream_fraction : 1));
    if (m->triad.runs && m->read[PROBE_DRAM].runs)
        snprintf(src, sizeof src,
                 "mr x nr: %s, not measured; stream_fraction measured by dse probe %s: STREAM triad %.1f GB/s / DRAM "
                 "read %.1f GB/s%s (triad counts 12 bytes per element, regular stores)",
                 m->mk_src, date, m->triad.median / 1e9, m->read[PROBE_DRAM].median / 1e9,
                 m->triad.median > m->read[PROBE_DRAM].median ? ", capped at 1" : "");
    else
        snprintf(src, sizeof src, "mr x nr: %s, not measured; stream_fraction 1: cannot tell (STREAM not measured)",
                 m->mk_src);
    add_str(cp, "source", src);
    return root;
}
