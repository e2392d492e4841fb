/* jsonu.c -- bounded file reading and validated access to cJSON trees. */
#include "jsonu.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbuf.h"

int ju_read_file(const char *path, size_t max_bytes, char **buf, size_t *len, struct dse_err *e)
{
    struct stat st;
    *buf = NULL;
    *len = 0;
    if (dse_path_check(path, NULL, e))
        return DSE_EINPUT;
    if (stat(path, &st) != 0)
        return dse_err_set(e, DSE_EINPUT, path, NULL, "cannot open: %s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return dse_err_set(e, DSE_EINPUT, path, NULL, "is a directory, expected a file");
    if (!S_ISREG(st.st_mode)) /* a FIFO or device could block or never end */
        return dse_err_set(e, DSE_EINPUT, path, NULL, "is not a regular file");
    FILE *f = fopen(path, "rb");
    if (!f)
        return dse_err_set(e, DSE_EINPUT, path, NULL, "cannot open: %s", strerror(errno));
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    int rc = DSE_OK;
    if (!b) {
        rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "out of memory");
        goto out;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > max_bytes) {
                rc = dse_err_set(e, DSE_EINPUT, path, NULL, "larger than the %zu byte limit", max_bytes);
                goto out;
            }
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "out of memory");
                goto out;
            }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = dse_err_set(e, DSE_EINPUT, path, NULL, "read error");
            break;
        }
    }
    if (rc == DSE_OK && n > max_bytes)
        rc = dse_err_set(e, DSE_EINPUT, path, NULL, "larger than the %zu byte limit", max_bytes);
out:
    fclose(f);
    if (rc != DSE_OK) {
        free(b);
        return rc;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return DSE_OK;
}

/* Nesting depth of arrays and objects at position end (strings skipped). */
static int depth_at(const char *buf, const char *end)
{
    int depth = 0, in_str = 0;
    for (const char *p = buf; p < end; p++) {
        if (in_str) {
            if (*p == '\\' && p + 1 < end)
                p++;
            else if (*p == '"')
                in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if ((*p == '}' || *p == ']') && depth > 0) {
            depth--;
        }
    }
    return depth;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, surrogates or code points above
 * U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, min = 0x10000;
    else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    unsigned cp = c & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

size_t ju_utf8_check(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t n = *p ? utf8_len(p, end) : 0;
        if (!n)
            return (size_t)(p - (const unsigned char *)s);
        p += n;
    }
    return len;
}

int ju_text_check(const char *buf, size_t len, const char *file, struct dse_err *e)
{
    size_t bad = ju_utf8_check(buf, len);
    if (bad == len)
        return DSE_OK;
    int line = 1, col = 1;
    for (size_t i = 0; i < bad; i++) {
        if (buf[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    char where[48];
    snprintf(where, sizeof where, "line %d, column %d", line, col);
    return dse_err_set(e, DSE_EINPUT, file, where, "%s", buf[bad] ? "bytes that are not valid UTF-8" : "a NUL byte (not a text file)");
}

/* After a successful parse: every string and key is valid UTF-8 and holds no NUL (cJSON decodes
 * \u0000 into a terminator, silently cutting the string short). Walks the text as a JSON tokenizer
 * to name the path of the offending string. Returns 1 when clean, else 0 with e set. */
#define SCAN_DEPTH 64 /* path levels kept for messages; deeper levels are still checked */
static int scan_strings(const char *buf, const char *end, const char *file, struct dse_err *e)
{
    struct {
        int arr, idx;
        const char *key;
        size_t key_len;
    } st[SCAN_DEPTH];
    int depth = 0, want_key = 0;
    const unsigned char *p = (const unsigned char *)buf, *q = (const unsigned char *)end;
    while (p < q) {
        unsigned c = *p;
        if (c == '{' || c == '[') {
            if (depth < SCAN_DEPTH) {
                st[depth].arr = c == '[';
                st[depth].idx = 0;
                st[depth].key = NULL;
                st[depth].key_len = 0;
            }
            depth++;
            want_key = c == '{';
            p++;
        } else if (c == '}' || c == ']') {
            depth--;
            want_key = 0;
            p++;
        } else if (c == ',') {
            if (depth > 0 && depth <= SCAN_DEPTH) {
                if (st[depth - 1].arr)
                    st[depth - 1].idx++;
                else
                    want_key = 1;
            } else if (depth > SCAN_DEPTH) {
                want_key = 0; /* not tracked this deep; keys are still scanned as strings */
            }
            p++;
        } else if (c == '"') {
            const unsigned char *s = ++p;
            const char *bad = NULL;
            while (p < q && *p != '"') {
                if (*p == '\\') {
                    if (p + 5 < q && p[1] == 'u' && p[2] == '0' && p[3] == '0' && p[4] == '0' && p[5] == '0')
                        bad = bad ? bad : "\\u0000 (a NUL character, which would cut the string short)";
                    p += 2;
                    continue;
                }
                size_t n = utf8_len(p, q);
                if (!n) {
                    bad = bad ? bad : "bytes that are not valid UTF-8";
                    n = 1;
                }
                p += n;
            }
            int is_key = want_key && depth > 0;
            if (is_key && depth <= SCAN_DEPTH) {
                st[depth - 1].key = (const char *)s;
                st[depth - 1].key_len = (size_t)(p - s);
            }
            want_key = 0;
            if (bad) {
                char path[512];
                size_t at = 0;
                int lim = depth < SCAN_DEPTH ? depth : SCAN_DEPTH;
                path[0] = '\0';
                for (int d = 0; d < lim && at < sizeof path - 1; d++) {
                    int w;
                    if (st[d].arr)
                        w = snprintf(path + at, sizeof path - at, "[%d]", st[d].idx);
                    else if (st[d].key && !(is_key && d == depth - 1))
                        w = snprintf(path + at, sizeof path - at, "%s%.*s", at ? "." : "",
                                     (int)(st[d].key_len > 64 ? 64 : st[d].key_len), st[d].key);
                    else
                        w = 0;
                    if (w < 0)
                        break;
                    at += (size_t)w < sizeof path - at ? (size_t)w : sizeof path - at - 1;
                }
                /* The path may quote the offending bytes: keep only printable ASCII in it. */
                for (char *z = path; *z; z++)
                    if ((unsigned char)*z < 0x20 || (unsigned char)*z >= 0x7F)
                        *z = '?';
                dse_err_set(e, DSE_EINPUT, file, path[0] ? path : NULL, "%s %s", is_key ? "a field name holds" : "a string holds", bad);
                return 0;
            }
            p++; /* closing quote */
        } else {
            p++;
        }
    }
    return 1;
}

int ju_parse(const char *buf, size_t len, const char *file, cJSON **root, struct dse_err *e)
{
    const char *end = NULL;
    size_t i = 0;
    *root = NULL;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
        i++;
    if (i == len)
        return dse_err_set(e, DSE_EINPUT, file, NULL, "empty file, expected a JSON object");
    cJSON *r = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    if (!r) {
        if (!end || end < buf || end > buf + len)
            end = buf + len;
        /* Nothing but whitespace left: the text stopped early. */
        const char *q = end;
        while (q < buf + len && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
            q++;
        int at_end = q >= buf + len;
        if (at_end) {
            end = buf + len;
        } else if (end > buf && end[-1] != '"' && end[-1] != ' ' && end[-1] != '\t' && end[-1] != '\n' &&
                   end[-1] != '\r') {
            /* cJSON reports a missing object key one character late: back up to it. */
            const char *k = end - 2;
            while (k >= buf && (*k == ' ' || *k == '\t' || *k == '\n' || *k == '\r'))
                k--;
            if (k >= buf && (*k == ',' || *k == '{'))
                end--;
        }
        int line = 1, col = 1;
        for (const char *p = buf; p < end; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        if (depth_at(buf, end) >= CJSON_NESTING_LIMIT)
            return dse_err_set(e, DSE_EINPUT, file, NULL,
                               "line %d, column %d: arrays and objects nested more than %d deep (the limit)", line,
                               col, CJSON_NESTING_LIMIT);
        if (at_end)
            return dse_err_set(e, DSE_EINPUT, file, NULL,
                               "line %d, column %d: JSON syntax error: unexpected end of input", line, col);
        int near = 0; /* the snippet stops at the end of its line */
        while (near < 12 && end + near < buf + len && end[near] != '\n' && end[near] != '\r')
            near++;
        return dse_err_set(e, DSE_EINPUT, file, NULL, "line %d, column %d: JSON syntax error near '%.*s'", line,
                           col, near, end);
    }
    if (!scan_strings(buf, end, file, e)) {
        cJSON_Delete(r);
        return DSE_EINPUT;
    }
    /* Trailing garbage after the value is an error too. */
    const char *p = end;
    while (p < buf + len && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    if (p < buf + len && *p != '\0') {
        int line = 1, col = 1;
        for (const char *q = buf; q < p; q++) {
            if (*q == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        cJSON_Delete(r);
        return dse_err_set(e, DSE_EINPUT, file, NULL, "line %d, column %d: unexpected text after the JSON value",
                           line, col);
    }
    *root = r;
    return DSE_OK;
}

void ju_init(struct ju *j, const char *file, struct dse_err *e)
{
    j->file = file;
    j->e = e;
    j->path[0] = '\0';
    j->len = 0;
    j->collect = 0;
    j->n_err = 0;
}

size_t ju_key(struct ju *j, const char *key)
{
    size_t old = j->len;
    int n = snprintf(j->path + j->len, sizeof j->path - j->len, "%s%s", j->len ? "." : "", key);
    if (n > 0)
        j->len += (size_t)n < sizeof j->path - j->len ? (size_t)n : sizeof j->path - j->len - 1;
    return old;
}

size_t ju_idx(struct ju *j, int i)
{
    size_t old = j->len;
    int n = snprintf(j->path + j->len, sizeof j->path - j->len, "[%d]", i);
    if (n > 0)
        j->len += (size_t)n < sizeof j->path - j->len ? (size_t)n : sizeof j->path - j->len - 1;
    return old;
}

void ju_pop(struct ju *j, size_t old)
{
    j->len = old;
    j->path[old] = '\0';
}

int ju_fail(struct ju *j, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    j->n_err++;
    if (j->collect)
        return dse_err_add(j->e, DSE_EINPUT, j->file, j->path[0] ? j->path : NULL, "%s", msg);
    return dse_err_set(j->e, DSE_EINPUT, j->file, j->path[0] ? j->path : NULL, "%s", msg);
}

static const char *type_name(const cJSON *v)
{
    if (!v)
        return "nothing";
    if (cJSON_IsObject(v))
        return "an object";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    return "an invalid value";
}

int ju_lookup(const char *const *names, const char *s)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

void ju_list_names(const char *const *names, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; names[i] && at < n; i++) {
        int w = snprintf(buf + at, n - at, "%s%s", i ? ", " : "", names[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

int ju_object(struct ju *j, const cJSON *obj, const char *const *allowed)
{
    if (!cJSON_IsObject(obj))
        return ju_fail(j, "expected an object, got %s", type_name(obj));
    for (const cJSON *c = obj->child; c; c = c->next) {
        if (!c->string)
            return ju_fail(j, "object member without a name");
        if (allowed && ju_lookup(allowed, c->string) < 0) {
            char names[400];
            ju_list_names(allowed, names, sizeof names);
            size_t old = ju_key(j, c->string);
            int rc = ju_fail(j, "unknown field (known: %s)", names);
            ju_pop(j, old);
            return rc;
        }
        for (const cJSON *d = obj->child; d != c; d = d->next) {
            if (d->string && strcmp(d->string, c->string) == 0) {
                size_t old = ju_key(j, c->string);
                int rc = ju_fail(j, "field given twice");
                ju_pop(j, old);
                return rc;
            }
        }
    }
    return DSE_OK;
}

static const cJSON *member(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

int ju_num(struct ju *j, const cJSON *obj, const char *key, int flags, double max, double *out)
{
    const cJSON *v = member(obj, key);
    size_t old = ju_key(j, key);
    int rc = DSE_OK;
    if (!v) {
        if (!(flags & JU_OPT))
            rc = ju_fail(j, "missing (expected a number)");
        goto out;
    }
    if (!cJSON_IsNumber(v)) {
        rc = ju_fail(j, "expected a number, got %s", type_name(v));
        goto out;
    }
    double x = v->valuedouble;
    const char *what = (flags & JU_POS) ? "a positive number" : (flags & JU_NONNEG) ? "a non-negative number"
                                                                                     : "a number";
    char xs[32], ms[32]; /* exact: "expected at most 1e+07, got 1e+07" said nothing */
    int bad = !isfinite(x) ? 1 : (flags & JU_POS) && !(x > 0) ? 2 : (flags & JU_POS) && x < JU_MIN_POSITIVE ? 3
            : (flags & JU_NONNEG) && !(x >= 0) ? 4 : (flags & JU_INT) && x != floor(x) ? 5 : max > 0 && x > max ? 6 : 0;
    if (bad > 1) {
        ju_shortest(xs, sizeof xs, x);
        ju_shortest(ms, sizeof ms, max);
    }
    if (bad == 1)
        rc = ju_fail(j, "expected %s, got a non-finite value", what);
    else if (bad == 2)
        rc = ju_fail(j, "expected a positive number, got %s", xs);
    else if (bad == 3)
        rc = ju_fail(j, "expected a positive number of at least %g, got %s", JU_MIN_POSITIVE, xs);
    else if (bad == 4)
        rc = ju_fail(j, "expected a non-negative number, got %s", xs);
    else if (bad == 5)
        rc = ju_fail(j, "expected an integer, got %s", xs);
    else if (bad == 6)
        rc = ju_fail(j, "expected at most %s, got %s", ms, xs);
    else
        *out = x;
out:
    ju_pop(j, old);
    return rc;
}

int ju_int(struct ju *j, const cJSON *obj, const char *key, int flags, long long min, long long max,
           long long *out)
{
    const cJSON *v = member(obj, key);
    size_t old = ju_key(j, key);
    int rc = DSE_OK;
    if (!v) {
        if (!(flags & JU_OPT))
            rc = ju_fail(j, "missing (expected an integer)");
        goto out;
    }
    if (!cJSON_IsNumber(v)) {
        rc = ju_fail(j, "expected an integer, got %s", type_name(v));
        goto out;
    }
    double x = v->valuedouble;
    char xs[32] = "a non-finite value";
    if (isfinite(x) && (x != floor(x) || x < (double)min || x > (double)max))
        ju_shortest(xs, sizeof xs, x);
    if (!isfinite(x) || x != floor(x))
        rc = ju_fail(j, "expected an integer, got %s", xs);
    else if (x < (double)min || x > (double)max)
        rc = ju_fail(j, "expected an integer in [%lld, %lld], got %s", min, max, xs);
    else
        *out = (long long)x;
out:
    ju_pop(j, old);
    return rc;
}

int ju_str(struct ju *j, const cJSON *obj, const char *key, int flags, char *out, size_t n)
{
    const cJSON *v = member(obj, key);
    size_t old = ju_key(j, key);
    int rc = DSE_OK;
    if (!v) {
        if (!(flags & JU_OPT))
            rc = ju_fail(j, "missing (expected a string)");
        goto out;
    }
    if (!cJSON_IsString(v) || !v->valuestring) {
        rc = ju_fail(j, "expected a string, got %s", type_name(v));
        goto out;
    }
    size_t l = strlen(v->valuestring);
    if (l == 0)
        rc = ju_fail(j, "expected a non-empty string");
    else if (l >= n)
        rc = ju_fail(j, "string longer than %zu characters", n - 1);
    else
        memcpy(out, v->valuestring, l + 1);
out:
    ju_pop(j, old);
    return rc;
}

int ju_array(struct ju *j, const cJSON *obj, const char *key, int flags, int max, const cJSON **arr,
             int *count)
{
    const cJSON *v = member(obj, key);
    size_t old = ju_key(j, key);
    int rc = DSE_OK;
    *arr = NULL;
    *count = 0;
    if (!v) {
        if (!(flags & JU_OPT))
            rc = ju_fail(j, "missing (expected an array)");
        goto out;
    }
    if (!cJSON_IsArray(v)) {
        rc = ju_fail(j, "expected an array, got %s", type_name(v));
        goto out;
    }
    int c = cJSON_GetArraySize(v);
    if (c > max)
        rc = ju_fail(j, "array of %d entries, at most %d allowed", c, max);
    else {
        *arr = v;
        *count = c;
    }
out:
    ju_pop(j, old);
    return rc;
}

int ju_enum(struct ju *j, const cJSON *obj, const char *key, int flags, const char *const *names, int *out)
{
    char s[64];
    if ((flags & JU_OPT) && !member(obj, key))
        return DSE_OK;
    int rc = ju_str(j, obj, key, 0, s, sizeof s);
    if (rc)
        return rc;
    int i = ju_lookup(names, s);
    if (i < 0) {
        char list[256];
        ju_list_names(names, list, sizeof list);
        size_t old = ju_key(j, key);
        rc = ju_fail(j, "unknown value '%s' (expected one of: %s)", s, list);
        ju_pop(j, old);
        return rc;
    }
    *out = i;
    return DSE_OK;
}

#ifndef DSE_DATADIR
#define DSE_DATADIR "/usr/local/share/dse"
#endif

int ju_data_path_check(struct dse_err *e)
{
    const char *p = getenv("DSE_PATH");
    int k = 0;
    size_t bytes = 0;
    for (; p && *p; p += strcspn(p, ":") + (p[strcspn(p, ":")] == ':')) {
        size_t len = strcspn(p, ":");
        if (!len)
            continue;
        if (len >= DSE_PATH_LEN)
            return dse_err_set(e, DSE_EINPUT, NULL, "DSE_PATH", "folder %d is %zu bytes long: at most %d", k + 1, len,
                               DSE_PATH_LEN - 1);
        k++;
        bytes += len + 1;
    }
    if (k > JU_MAX_DATA_DIRS - 1)
        return dse_err_set(e, DSE_EINPUT, NULL, "DSE_PATH", "%d folders: dse searches at most %d (join some, or "
                           "install the data with make install)", k, JU_MAX_DATA_DIRS - 1);
    if (bytes > JU_DATA_DIRS_BYTES)
        return dse_err_set(e, DSE_EINPUT, NULL, "DSE_PATH", "%zu bytes of folders: at most %d", bytes - 1,
                           JU_DATA_DIRS_BYTES - 1);
    return DSE_OK;
}

int ju_data_dirs(const char **bases, int max, char *buf, size_t n)
{
    const char *p = getenv("DSE_PATH");
    int k = 0;
    size_t at = 0;
    while (p && *p && k < max - 1) {
        size_t len = strcspn(p, ":");
        if (len && at + len + 1 <= n) {
            memcpy(buf + at, p, len);
            buf[at + len] = '\0';
            bases[k++] = buf + at;
            at += len + 1;
        }
        p += len + (p[len] == ':');
    }
    if (k < max)
        bases[k++] = DSE_DATADIR;
    return k;
}

/* ---- exact printing (ju_print): cJSON's layout, exact numbers ---- */

char *ju_shortest(char *buf, size_t n, double v)
{
    /* %.15g already drops trailing zeros, so a shorter form that reads back is found at 15 */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

static void put_string(struct sb *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        const char *esc = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\b' ? "\\b" : *p == '\f' ? "\\f"
                        : *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : *p == '\t' ? "\\t" : NULL;
        if (esc)
            sb_put(b, esc, 2);
        else if (*p < 32)
            sb_add(b, "\\u%04x", *p);
        else
            sb_put(b, (const char *)p, 1);
    }
    sb_put(b, "\"", 1);
}

static void put_number(struct sb *b, const cJSON *item)
{
    double d = item->valuedouble;
    char buf[40];
    if (isnan(d) || isinf(d)) {
        sb_put(b, "null", 4);
        return;
    }
    if (d == (double)item->valueint) { /* cJSON's integers */
        sb_add(b, "%d", item->valueint);
        return;
    }
    sb_add(b, "%s", ju_shortest(buf, sizeof buf, d));
}

static void tabs(struct sb *b, int n)
{
    for (int i = 0; i < n; i++)
        sb_put(b, "\t", 1);
}

/* item at nesting depth (cJSON's: objects and arrays entered so far); 0 when cJSON would fail (a raw
 * item without text, an unknown type). Nesting is bounded by cJSON's parser (CJSON_NESTING_LIMIT) for
 * parsed trees; trees dse builds are a few levels deep. */
static int put_value(struct sb *b, const cJSON *item, int fmt, int depth)
{
    switch (item->type & 0xFF) {
    case cJSON_NULL: sb_put(b, "null", 4); return 1;
    case cJSON_False: sb_put(b, "false", 5); return 1;
    case cJSON_True: sb_put(b, "true", 4); return 1;
    case cJSON_Number: put_number(b, item); return 1;
    case cJSON_Raw:
        if (!item->valuestring)
            return 0;
        sb_add(b, "%s", item->valuestring);
        return 1;
    case cJSON_String: put_string(b, item->valuestring); return 1;
    case cJSON_Array:
        sb_put(b, "[", 1);
        for (const cJSON *c = item->child; c; c = c->next) {
            if (!put_value(b, c, fmt, depth + 1))
                return 0;
            if (c->next)
                sb_put(b, ", ", fmt ? 2 : 1);
        }
        sb_put(b, "]", 1);
        return 1;
    case cJSON_Object:
        sb_put(b, "{\n", fmt ? 2 : 1);
        for (const cJSON *c = item->child; c; c = c->next) {
            if (fmt)
                tabs(b, depth + 1);
            put_string(b, c->string);
            sb_put(b, ":\t", fmt ? 2 : 1);
            if (!put_value(b, c, fmt, depth + 1))
                return 0;
            if (c->next)
                sb_put(b, ",", 1);
            if (fmt)
                sb_put(b, "\n", 1);
        }
        if (fmt)
            tabs(b, depth);
        sb_put(b, "}", 1);
        return 1;
    default: return 0;
    }
}

char *ju_print(const cJSON *item, int formatted)
{
    struct sb b = {0};
    if (!item || !put_value(&b, item, formatted, 0) || b.oom) {
        free(b.s);
        return NULL;
    }
    if (!b.s) /* nothing added: cannot happen for a valid item */
        return strdup("");
    return b.s;
}
