/* jsonu.h -- bounded file reading and validated access to cJSON trees.
 *
 * Every getter reports errors as "FILE: PATH: expected ..., got ..." through the struct dse_err held
 * in a struct ju cursor, which also tracks the JSON path (devices[1].memory[0].bandwidth_GBps).
 * Nothing here keeps global state; cJSON's own global error pointer is never consulted. */
#ifndef DSE_JSONU_H
#define DSE_JSONU_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "err.h"

#define JU_MAX_FILE_BYTES (16u << 20) /* no description we ship is near this; fuzzers stay bounded */
#define JU_MIN_POSITIVE 1e-9           /* smaller "positive" figures are unit slips and overflow rates */

struct ju {
    const char *file;
    struct dse_err *e;
    char path[512];
    size_t len;
    int collect; /* ju_fail records every problem (dse_err_add), for loaders that keep going */
    int n_err;   /* problems recorded so far */
};

/* Number constraints for ju_num(). */
enum {
    JU_OPT = 1 << 0,    /* absent is fine: *out is left untouched */
    JU_POS = 1 << 1,    /* >= JU_MIN_POSITIVE */
    JU_NONNEG = 1 << 2, /* >= 0 */
    JU_INT = 1 << 3     /* integral */
};

/* Reads a whole regular file (not a directory), at most max_bytes, NUL-terminated. */
int ju_read_file(const char *path, size_t max_bytes, char **buf, size_t *len, struct dse_err *e);
/* The folders shipped names (hwdesc/, models/, sweeps/, software/, validate/) are looked up in after a
 * caller's own (the current directory, a spec's tree): each folder of the DSE_PATH environment variable
 * (colon-separated), then the data directory make install fills. bases[] points into buf (n bytes);
 * returns how many (at most max, the data directory always last). */
#define JU_MAX_DATA_DIRS 9
#define JU_DATA_DIRS_BYTES 2048 /* the buf callers give ju_data_dirs */
int ju_data_dirs(const char **bases, int max, char *buf, size_t n);
/* DSE_EINPUT when DSE_PATH holds more folders than ju_data_dirs searches (JU_MAX_DATA_DIRS - 1) or more
 * bytes than its buffer: a folder past the limit would be skipped while a message says DSE_PATH was
 * searched. Empty entries ("a::b") are skipped, as the current directory is searched first anyway. */
int ju_data_path_check(struct dse_err *e);
/* The text of cJSON_Print (formatted) or cJSON_PrintUnformatted, byte for byte, except that every
 * number is exact: the shortest of 15, 16 and 17 significant digits that reads back as the same
 * double. cJSON prints 15 digits whenever they read back within DBL_EPSILON of the value, which is
 * a unit in the last place off (0.1 + 0.2 printed as 0.3). Every JSON dse prints or writes goes
 * through it. malloc'd; NULL when out of memory. */
char *ju_print(const cJSON *item, int formatted);
/* A finite v as the shortest of %.15g, %.16g and %.17g that reads back as v (102.4, not
 * 102.40000000000001; 0.30000000000000004, not 0.3) into buf (n >= 32); returns buf. */
char *ju_shortest(char *buf, size_t n, double v);
/* Parses len bytes of JSON; a syntax error reports line and column. */
int ju_parse(const char *buf, size_t len, const char *file, cJSON **root, struct dse_err *e);

void ju_init(struct ju *j, const char *file, struct dse_err *e);
size_t ju_key(struct ju *j, const char *key); /* appends .key, returns the old length for ju_pop */
size_t ju_idx(struct ju *j, int i);           /* appends [i] */
void ju_pop(struct ju *j, size_t old);
int ju_fail(struct ju *j, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Checks that obj is an object whose keys are all in the NULL-terminated list and not repeated. */
int ju_object(struct ju *j, const cJSON *obj, const char *const *allowed);
int ju_num(struct ju *j, const cJSON *obj, const char *key, int flags, double max, double *out);
int ju_int(struct ju *j, const cJSON *obj, const char *key, int flags, long long min, long long max,
           long long *out);
/* Copies a non-empty string of at most n-1 bytes. */
int ju_str(struct ju *j, const cJSON *obj, const char *key, int flags, char *out, size_t n);
/* A string that must be one of the NULL-terminated names: its index in *out (absent with JU_OPT:
 * *out untouched); any other value is "unknown value 'x' (expected one of: a, b, c)". */
int ju_enum(struct ju *j, const cJSON *obj, const char *key, int flags, const char *const *names, int *out);
/* Array member: returns its element count in *count (0..max); absent with JU_OPT gives NULL. */
int ju_array(struct ju *j, const cJSON *obj, const char *key, int flags, int max, const cJSON **arr,
             int *count);
/* Offset of the first byte of s[0..len) that is NUL or not part of valid UTF-8, or len when clean.
 * (ju_parse applies the same rule to every JSON string and key.) */
size_t ju_utf8_check(const char *s, size_t len);
/* The same for a whole text file (CSV): an error naming the line and column of the first bad byte. */
int ju_text_check(const char *buf, size_t len, const char *file, struct dse_err *e);
/* Finds s in a NULL-terminated table of names; returns the index or -1. */
int ju_lookup(const char *const *names, const char *s);
/* Writes "a, b, c" of a NULL-terminated table into buf (for "expected one of ..." messages). */
void ju_list_names(const char *const *names, char *buf, size_t n);

#endif
