/* progress.h -- the progress of a long command's phase on a terminal: a bar on stderr, redrawn at
 * most five times a second, with the count, the rate and the time left, erased when the phase ends.
 * Nothing is drawn when stderr is not a terminal: the command's own report then says what each
 * phase did (one line each). A struct per phase; no global state. */
#ifndef DSE_PROGRESS_H
#define DSE_PROGRESS_H

struct progress {
    char what[64];    /* "validate: serving cases" */
    const char *unit; /* "cases", "requests", "points" */
    long long total;
    double t0, last;
    int on, drawn;
};

/* Starts a phase of total units (on: draw only when stderr is a terminal and on is set). */
void progress_begin(struct progress *p, int on, const char *what, const char *unit, long long total);
void progress_step(struct progress *p, long long done);
/* Erases the bar (a terminal keeps the finished line with its rate and time instead when keep). */
void progress_end(struct progress *p, int keep);

#endif
