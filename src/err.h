/* err.h -- error reporting shared by every dse module.
 *
 * A function that can fail returns an int status (DSE_OK or one of the codes below) and fills a
 * caller-owned struct dse_err with "FILE: JSON.PATH: what is wrong". Only main() decides to exit.
 * The status values double as process exit codes. */
#ifndef DSE_ERR_H
#define DSE_ERR_H

#include <stddef.h>
#include <stdio.h>

enum {
    DSE_OK = 0,
    DSE_ERUNTIME = 1, /* runtime failure: I/O, out of memory, a tool missing */
    DSE_EINPUT = 2    /* usage or input error: bad option, bad file */
};

struct dse_err {
    int code;
    char msg[768];
    /* Further problems found in the same input (a loader that keeps going after an error): one per
     * line, each "file: path: message"; n_more counts them, shown or not. */
    char more[2048];
    int n_more;
};

void dse_err_clear(struct dse_err *e);
/* Formats "file: path: message" (file or path may be NULL or "") and returns code. */
int dse_err_set(struct dse_err *e, int code, const char *file, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Records another problem: the first becomes msg (as dse_err_set), later ones go to more. */
int dse_err_add(struct dse_err *e, int code, const char *file, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Prints "dse: msg" and a "dse: ..." line per further problem to f. */
void dse_err_print(FILE *f, const struct dse_err *e);

/* The longest path dse takes, its terminating NUL included. A longer one is refused (dse_path_check),
 * never cut: a cut path names another file. */
#define DSE_PATH_LEN 1024
/* DSE_EINPUT naming what (an option, a JSON path; may be NULL) when path has DSE_PATH_LEN bytes or more. */
int dse_path_check(const char *path, const char *what, struct dse_err *e);

/* Bounded snprintf into a fixed buffer; never fails, truncates. */
void dse_strlcpy(char *dst, const char *src, size_t n);
/* FNV-1a 64 of n bytes (offset basis 14695981039346656037, prime 1099511628211): the hashes of the
 * inputs a run records (docs/sweep-db.md) and of names in tables. */
unsigned long long dse_fnv1a64(const void *p, size_t n);

#endif
