/* err.c -- formatting of dse errors. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void dse_err_clear(struct dse_err *e)
{
    if (!e)
        return;
    e->code = DSE_OK;
    e->msg[0] = '\0';
    e->more[0] = '\0';
    e->n_more = 0;
}

/* "file: path: message" into buf, on one line and free of terminal escapes. */
static void format(char *buf, size_t cap, const char *file, const char *path, const char *fmt, va_list ap)
{
    size_t n = 0;
    buf[0] = '\0';
    if (file && *file)
        n += (size_t)snprintf(buf + n, cap - n, "%s: ", file);
    if (n < cap && path && *path)
        n += (size_t)snprintf(buf + n, cap - n, "%s: ", path);
    if (n < cap)
        vsnprintf(buf + n, cap - n, fmt, ap);
    /* Messages quote user input: keep them on one line and free of terminal escapes. */
    for (unsigned char *p = (unsigned char *)buf; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = '?';
}

int dse_err_set(struct dse_err *e, int code, const char *file, const char *path, const char *fmt, ...)
{
    if (!e)
        return code;
    e->code = code;
    e->more[0] = '\0';
    e->n_more = 0;
    va_list ap;
    va_start(ap, fmt);
    format(e->msg, sizeof e->msg, file, path, fmt, ap);
    va_end(ap);
    return code;
}

int dse_err_add(struct dse_err *e, int code, const char *file, const char *path, const char *fmt, ...)
{
    if (!e)
        return code;
    va_list ap;
    va_start(ap, fmt);
    if (e->code == DSE_OK) {
        e->code = code;
        e->more[0] = '\0';
        e->n_more = 0;
        format(e->msg, sizeof e->msg, file, path, fmt, ap);
    } else {
        char line[768];
        format(line, sizeof line, file, path, fmt, ap);
        size_t at = strlen(e->more);
        if (at + strlen(line) + 2 < sizeof e->more)
            snprintf(e->more + at, sizeof e->more - at, "%s\n", line);
        e->n_more++;
    }
    va_end(ap);
    return code;
}

void dse_err_print(FILE *f, const struct dse_err *e)
{
    fprintf(f, "dse: %s\n", e->msg);
    int shown = 0;
    for (const char *p = e->more; *p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(f, "dse: %.*s\n", len, p);
        shown++;
        p += len + (nl != NULL);
    }
    if (e->n_more > shown)
        fprintf(f, "dse: ... and %d more problem%s\n", e->n_more - shown, e->n_more - shown == 1 ? "" : "s");
}

int dse_path_check(const char *path, const char *what, struct dse_err *e)
{
    size_t n = strlen(path);
    if (n < DSE_PATH_LEN)
        return DSE_OK;
    return dse_err_set(e, DSE_EINPUT, NULL, what, "a path of %zu bytes ('%.40s...'): dse takes paths of at most %d bytes",
                       n, path, DSE_PATH_LEN - 1);
}

void dse_strlcpy(char *dst, const char *src, size_t n)
{
    if (n == 0)
        return;
    if (!src)
        src = "";
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

unsigned long long dse_fnv1a64(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned long long h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}
