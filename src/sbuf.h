/* sbuf.h -- a growable string: SQL naming columns (store.c), messages listing them (plot.c), the HTML
 * page (report.c). The caller owns the struct (zero it to start, free(b.s) to end). Running out of
 * memory sets oom and makes every later call a no-op, so a writer checks once at the end. */
#ifndef DSE_SBUF_H
#define DSE_SBUF_H

#include <stddef.h>

struct sb {
    char *s; /* NUL-terminated once anything was added */
    size_t len, cap;
    int oom;
};

void sb_add(struct sb *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends n bytes of p. */
void sb_put(struct sb *b, const char *p, size_t n);
/* The text so far ("" when empty or out of memory). */
const char *sb_str(const struct sb *b);

#endif
