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
}

int dse_err_set(struct dse_err *e, int code, const char *file, const char *path, const char *fmt, ...)
{
    if (!e)
        return code;
    size_t n = 0;
    e->code = code;
    e->msg[0] = '\0';
    if (file && *file)
        n += (size_t)snprintf(e->msg + n, sizeof e->msg - n, "%s: ", file);
    if (n < sizeof e->msg && path && *path)
        n += (size_t)snprintf(e->msg + n, sizeof e->msg - n, "%s: ", path);
    if (n < sizeof e->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg + n, sizeof e->msg - n, fmt, ap);
        va_end(ap);
    }
    /* Messages quote user input: keep them on one line and free of terminal escapes. */
    for (unsigned char *p = (unsigned char *)e->msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = '?';
    return code;
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
