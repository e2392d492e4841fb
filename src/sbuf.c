/* sbuf.c -- a growable string (sbuf.h). */
#include "sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for need more bytes and the NUL, doubling; 0 when out of memory. */
static int reserve(struct sb *b, size_t need)
{
    if (b->oom)
        return 0;
    if (b->s && b->len + need < b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + need + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return 0;
    }
    b->s = s;
    b->cap = cap;
    return 1;
}

void sb_add(struct sb *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (k < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)k < sizeof small) { /* the common case: one format, one copy */
        sb_put(b, small, (size_t)k);
        return;
    }
    if (!reserve(b, (size_t)k))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)k;
}

void sb_put(struct sb *b, const char *p, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

const char *sb_str(const struct sb *b) { return b->s && !b->oom ? b->s : ""; }
