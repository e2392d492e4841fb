/* outfile.h -- every file dse writes goes through here (reports, plots, hwdescs, error bars).
 *
 * A target is put in place whole or not at all, and what its name points at decides how:
 *  - no file yet, or a regular file: a temporary beside it, renamed over it, so a failure leaves the old
 *    file as it was;
 *  - a symbolic link: followed, so the file it points at is replaced and the link stays;
 *  - a FIFO or a character device (/dev/stdout on a pipe or a terminal, /dev/null, /dev/full): written
 *    through, never replaced: the bytes go to it once they are complete (a temporary under $TMPDIR
 *    holds them meanwhile when a writer needs a path, as gnuplot does);
 *  - a directory, a socket, a block device or a link to nothing: refused (DSE_EINPUT).
 * A command refuses an output that is one of its own inputs (out_file_not_input) before it writes.
 * Temporaries in flight are removed when SIGINT, SIGTERM or SIGHUP ends the process. */
#ifndef DSE_OUTFILE_H
#define DSE_OUTFILE_H

#include <stddef.h>

#include "err.h"

#define OUT_PATH_MAX 4096

struct out_file {
    char target[OUT_PATH_MAX];    /* what is replaced (a link's target) or written through */
    char tmp[OUT_PATH_MAX + 32];  /* the temporary the bytes are written to first */
    int through;                  /* 1: target is written through, not replaced */
    int slot;                     /* the temporary's entry in the signal-cleanup table, -1: none */
    int fd;                       /* the temporary, open until commit or abort (-1: closed) */
    char child_path[32];          /* "/dev/fd/N" where the system has it, else tmp: see below */
};

/* Resolves path and creates its temporary (o->tmp, empty, mode 0600 until committed). A child
 * process that writes the temporary (gnuplot) should be told out_file_child_path(o): the temporary's
 * open descriptor, which the child inherits, so that a child outliving a dse killed by a signal writes
 * into the removed file and cannot create it again. */
int out_file_begin(struct out_file *o, const char *path, struct dse_err *e);
const char *out_file_child_path(const struct out_file *o);
/* Puts o->tmp's bytes in place (rename, or a copy written through) and removes the temporary. */
int out_file_commit(struct out_file *o, struct dse_err *e);
/* Removes the temporary; o may be begun or not (a zeroed or committed struct is left alone). */
void out_file_abort(struct out_file *o);

/* len bytes of data to path as above; check(tmp, ctx, e), when given, must accept the complete
 * temporary first (a hwdesc dse would refuse is never written). *through (may be NULL) tells whether
 * the target was written through rather than replaced (it cannot be read back). */
int out_file_write(const char *path, const void *data, size_t len,
                   int (*check)(const char *tmp, void *ctx, struct dse_err *e), void *ctx, int *through,
                   struct dse_err *e);

/* 1 when path is written through (a FIFO or a character device such as /dev/stdout): the command's
 * own "wrote PATH" line then goes to stderr, so that the bytes on stdout are the file's alone. */
int out_file_is_stream(const char *path);

/* DSE_EINPUT when path (given to option opt) is the same file as one of the n inputs (same device and
 * inode, through links), naming it and what[i] ("the sweep database"); inputs that do not exist, and a
 * path that does not exist yet, pass. A database input (db_suffixes) also covers its -wal, -shm and
 * -journal files. */
int out_file_not_input(const char *path, const char *opt, const char *const *inputs, const char *const *what, int n,
                       int db_suffixes, struct dse_err *e);

#endif
