/* csvu.c -- the CSV tables dse reads (see csvu.h). */
#include "csvu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonu.h"

/* The records of a CSV table after its header (csvu.h). */
int pcsv_rows_doc(const char *text, size_t len, const char *path, const char *const *cols, int ncols, const char *what,
                  const char *readme, int (*row)(char **f, int line, void *ctx, struct dse_err *e), void *ctx,
                  struct dse_err *e)
{
    int rc;
    if (ncols > PCSV_MAX_COLS)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "%d columns: more than %d", ncols, PCSV_MAX_COLS);
    if ((rc = ju_text_check(text, len, path, e)))
        return rc;
    char *buf = malloc(len + 1);
    if (!buf)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    memcpy(buf, text, len);
    buf[len] = '\0';
    int line = 0, header = 0;
    for (char *l = buf, *nl; l && *l && !rc; l = nl) { /* line by line, blank ones counted */
        nl = strchr(l, '\n');
        if (nl)
            *nl++ = '\0';
        line++;
        size_t ll = strlen(l);
        if (ll && l[ll - 1] == '\r')
            l[--ll] = '\0';
        if (l[0] == '#' || !l[0])
            continue;
        char *f[PCSV_MAX_COLS + 1], where[32];
        int nf = pcsv_record(l, f, ncols + 1);
        snprintf(where, sizeof where, "line %d", line);
        if (!header) {
            header = 1;
            for (int i = 0; i < ncols && nf == ncols; i++)
                if (strcmp(f[i], cols[i]))
                    nf = -1;
            if (nf != ncols)
                rc = dse_err_set(e, DSE_EINPUT, path, where, "expected the header %s,%s,%s,... of "
                                 "%s (%s)", cols[0], cols[1], cols[2], readme, what);
            continue;
        }
        if (nf < 0)
            rc = dse_err_set(e, DSE_EINPUT, path, where, "expected %d fields: an unterminated quote or more fields",
                             ncols);
        else if (nf != ncols)
            rc = dse_err_set(e, DSE_EINPUT, path, where, "expected %d fields, got %d", ncols, nf);
        else
            rc = row(f, line, ctx, e);
    }
    free(buf);
    if (!rc && !header)
        rc = dse_err_set(e, DSE_EINPUT, path, NULL, "empty: no header (%s)", what);
    return rc;
}

int pcsv_rows(const char *text, size_t len, const char *path, const char *const *cols, int ncols, const char *what,
              int (*row)(char **f, int line, void *ctx, struct dse_err *e), void *ctx, struct dse_err *e)
{
    return pcsv_rows_doc(text, len, path, cols, ncols, what, "validate/published/README.md", row, ctx, e);
}

/* Collects a corpus's rows into an array of `size`-byte cases (validate.h); each case begins with its
 * id string, which no two rows may share. */
struct ptable {
    char *c;
    int cap, cnt;
    size_t size;
    const char *path;
    int (*load)(char **f, const char *path, int line, void *c, struct dse_err *e);
};

static int ptable_row(char **f, int line, void *ctx, struct dse_err *e)
{
    struct ptable *t = ctx;
    if (t->cnt == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        char *nc = cap <= PCSV_MAX_CASES ? realloc(t->c, t->size * (size_t)cap) : NULL;
        if (!nc && cap > PCSV_MAX_CASES)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "more than %d cases", PCSV_MAX_CASES);
        if (!nc)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        t->c = nc;
        t->cap = cap;
    }
    const char *id = t->c + t->size * (size_t)t->cnt;
    int rc = t->load(f, t->path, line, t->c + t->size * (size_t)t->cnt, e);
    for (int k = 0; k < t->cnt && !rc; k++)
        if (!strcmp(t->c + t->size * (size_t)k, id))
            rc = dse_err_set(e, DSE_EINPUT, t->path, NULL, "id '%s' given twice", id);
    t->cnt += !rc;
    return rc;
}

int pcsv_table(const char *text, size_t len, const char *path, const char *const *cols, int ncols, const char *what,
               size_t size, int (*load)(char **f, const char *path, int line, void *c, struct dse_err *e),
               void **out, int *n, struct dse_err *e)
{
    struct ptable t = {NULL, 0, 0, size, path, load};
    int rc = pcsv_rows(text, len, path, cols, ncols, what, ptable_row, &t, e);
    if (rc) {
        free(t.c);
        return rc;
    }
    *out = t.c;
    *n = t.cnt;
    return DSE_OK;
}

/* RFC 4180 quoting: "a, b" and "" for a quote inside one. */
int pcsv_record(char *l, char **f, int max)
{
    int n = 0;
    char *r = l, *w = l;
    for (;;) {
        if (n == max)
            return -1;
        f[n++] = w;
        if (*r == '"') {
            r++;
            for (;;) {
                if (!*r)
                    return -1;
                if (*r == '"' && r[1] == '"') {
                    *w++ = '"';
                    r += 2;
                } else if (*r == '"') {
                    r++;
                    break;
                } else {
                    *w++ = *r++;
                }
            }
            if (*r && *r != ',')
                return -1;
        } else {
            while (*r && *r != ',')
                *w++ = *r++;
        }
        if (!*r) {
            *w = '\0';
            break;
        }
        *w++ = '\0';
        r++;
    }
    size_t len = strlen(f[n - 1]);
    if (len && f[n - 1][len - 1] == '\r')
        f[n - 1][len - 1] = '\0';
    return n;
}

int pcsv_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}
