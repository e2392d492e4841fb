/* hostload.c -- host load from /proc/stat (see hostload.h). */
#include "hostload.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void hostload_mark(struct hostload_mark *m)
{
    memset(m, 0, sizeof *m);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    m->wall_s = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        m->self_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                    1e-6 * (double)ru.ru_stime.tv_usec;
    m->ticks_per_s = sysconf(_SC_CLK_TCK);
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    char line[512];
    /* cpu  user nice system idle iowait irq softirq steal guest guest_nice (jiffies; guest time is
     * already inside user) */
    unsigned long long v[8] = {0};
    int got = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "cpu ", 4))
            got = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                         &v[5], &v[6], &v[7]);
        else if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9')
            m->cpus++;
    }
    fclose(f);
    if (got < 4 || m->ticks_per_s <= 0 || m->cpus < 1)
        return;
    m->idle = v[3] + (got > 4 ? v[4] : 0);
    m->steal = got > 7 ? v[7] : 0;
    m->busy = v[0] + v[1] + v[2] + (got > 5 ? v[5] : 0) + (got > 6 ? v[6] : 0);
    m->total = m->busy + m->idle + m->steal;
    m->ok = 1;
}

void hostload_between(const struct hostload_mark *a, const struct hostload_mark *b, struct hostload *out)
{
    memset(out, 0, sizeof *out);
    out->seconds = b->wall_s - a->wall_s;
    if (!a->ok || !b->ok || b->total <= a->total)
        return;
    double total = (double)(b->total - a->total), hz = (double)a->ticks_per_s;
    double busy = (double)(b->busy - a->busy) - (b->self_s - a->self_s) * hz; /* less our own */
    out->ok = 1;
    out->cpus = a->cpus;
    out->steal_pct = 100 * (double)(b->steal - a->steal) / total;
    out->other_pct = busy > 0 ? 100 * busy / total : 0;
}

void hostload_sample(double seconds, struct hostload *out)
{
    struct hostload_mark a, b;
    hostload_mark(&a);
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    hostload_mark(&b);
    hostload_between(&a, &b, out);
}

int hostload_busy(const struct hostload *l)
{
    return l->ok && (l->steal_pct >= HOSTLOAD_STEAL_PCT || l->other_pct >= HOSTLOAD_OTHER_PCT);
}

void hostload_format(const struct hostload *l, char *buf, unsigned n)
{
    if (!l->ok)
        snprintf(buf, n, "unknown (no /proc/stat)");
    else
        snprintf(buf, n, "steal %.1f %%, other processes %.1f %% of %d CPUs over %.1f s", l->steal_pct, l->other_pct,
                 l->cpus, l->seconds);
}
