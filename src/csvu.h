/* csvu.h -- the CSV tables dse reads: the published corpora (validate/published) and the published
 * quality table (validate/quality). RFC 4180 records, a fixed header, '#' comments and blank lines
 * skipped, every error naming the file and its line. The text is never modified; rows are handed out as
 * NUL-terminated fields of a private copy, valid during the callback. */
#ifndef DSE_CSVU_H
#define DSE_CSVU_H

#include <stddef.h>

#include "err.h"

/* Splits one CSV record of line l in place into at most max fields, RFC 4180 quoting; the count, or -1
 * (an unterminated quote, too many fields). */
int pcsv_record(char *l, char **f, int max);
/* A CSV field read as a whole decimal integer in [lo, hi] into *out; -1 when it is not one (then *out is
 * untouched). */
int pcsv_int(const char *s, long long lo, long long hi, long long *out);
/* Calls row(f, line, ctx, e) for each record of text (named path) after its header, which must be
 * cols[0..ncols) in order; '#' and blank lines are skipped, a record of another field count is refused
 * naming its line, the first error stops the walk. what names the corpus in messages. */
#define PCSV_MAX_COLS 40
int pcsv_rows(const char *text, size_t len, const char *path, const char *const *cols, int ncols, const char *what,
              int (*row)(char **f, int line, void *ctx, struct dse_err *e), void *ctx, struct dse_err *e);
/* The same for a table documented elsewhere: a wrong header names readme (pcsv_rows: the published
 * corpora's validate/published/README.md). */
int pcsv_rows_doc(const char *text, size_t len, const char *path, const char *const *cols, int ncols, const char *what,
                  const char *readme, int (*row)(char **f, int line, void *ctx, struct dse_err *e), void *ctx,
                  struct dse_err *e);
/* The same rows read by load into a fresh array of size-byte cases, each beginning with a char id[]
 * that no two rows share; at most PCSV_MAX_CASES of them. */
#define PCSV_MAX_CASES 4096
int pcsv_table(const char *text, size_t len, const char *path, const char *const *cols, int ncols, const char *what,
               size_t size, int (*load)(char **f, const char *path, int line, void *c, struct dse_err *e),
               void **out, int *n, struct dse_err *e);

#endif
