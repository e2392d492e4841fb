/* progress.c -- progress bars of long commands on a terminal (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void progress_begin(struct progress *p, int on, const char *what, const char *unit, long long total)
{
    memset(p, 0, sizeof *p);
    dse_strlcpy(p->what, what, sizeof p->what);
    p->unit = unit;
    p->total = total > 0 ? total : 0;
    p->on = on && isatty(STDERR_FILENO);
    p->t0 = p->last = now_s();
}

static void draw(struct progress *p, long long done, double t)
{
    double el = t - p->t0 > 1e-9 ? t - p->t0 : 1e-9, rate = done / el, frac = p->total ? (double)done / p->total : 1;
    int w = 30, fill = (int)(frac * w);
    if (fill > w)
        fill = w;
    fprintf(stderr, rate >= 100 ? "\r%s [%.*s%*s] %5.1f%% %lld/%lld %s  %.0f %s/s  ETA %.0f s   "
                                : "\r%s [%.*s%*s] %5.1f%% %lld/%lld %s  %.3g %s/s  ETA %.0f s   ",
            p->what, fill, "##############################", w - fill, "", 100 * frac, done, p->total, p->unit, rate,
            p->unit, rate > 0 && done < p->total ? (p->total - done) / rate : 0);
    p->drawn = 1;
}

void progress_step(struct progress *p, long long done)
{
    if (!p->on)
        return;
    double t = now_s();
    if (t - p->last < 0.2 && done < p->total)
        return;
    p->last = t;
    draw(p, done, t);
}

void progress_end(struct progress *p, int keep)
{
    if (!p->on || !p->drawn)
        return;
    if (keep) {
        draw(p, p->total, now_s());
        fputc('\n', stderr);
    } else {
        fprintf(stderr, "\r%*s\r", 110, "");
    }
    p->drawn = 0;
}
