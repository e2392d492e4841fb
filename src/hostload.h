/* hostload.h -- how busy this host is: CPU time used by other processes and stolen by the hypervisor
 * over an interval, from /proc/stat (Linux), less this process's own CPU time (getrusage).
 *
 * Measurements of native kernels are only as good as the host is quiet: dse validate and calibrate
 * sample the load before measuring (and warn) and over the measurement (and report it). */
#ifndef DSE_HOSTLOAD_H
#define DSE_HOSTLOAD_H

/* Busy thresholds: steal time or other processes' share of the CPUs at or above these make a host
 * "busy" (measurements then carry that noise). */
#define HOSTLOAD_STEAL_PCT 2.0
#define HOSTLOAD_OTHER_PCT 10.0

struct hostload_mark { /* a snapshot: jiffies from /proc/stat and this process's CPU seconds */
    int ok;
    unsigned long long busy, idle, steal, total;
    double self_s, wall_s;
    long ticks_per_s;
    int cpus;
};

struct hostload {
    int ok;            /* 0: /proc/stat unreadable (not Linux): nothing is known */
    int cpus;
    double seconds;    /* length of the interval */
    double steal_pct;  /* of all CPU time in the interval */
    double other_pct;  /* CPU time of other processes (and the kernel's work for them), of all CPU time */
};

void hostload_mark(struct hostload_mark *m);
/* The load between two marks. */
void hostload_between(const struct hostload_mark *a, const struct hostload_mark *b, struct hostload *out);
/* Marks, sleeps `seconds`, marks again. */
void hostload_sample(double seconds, struct hostload *out);
int hostload_busy(const struct hostload *l);
/* "steal 0.0 %, other processes 3.1 % of 2 CPUs over 0.5 s" (or "unknown (no /proc/stat)"). */
void hostload_format(const struct hostload *l, char *buf, unsigned n);

#endif
