/* outfile.c -- putting output files in place (see outfile.h).
 *
 * The one piece of process state besides the sweep's Ctrl-C flag lives here: the table of temporaries
 * in flight, which a signal handler must be able to reach to remove them. It is only touched from the
 * main thread (every file dse writes is written there) and by the handler, which only reads it. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_SLOTS 8

static char tmp_path[OUT_SLOTS][OUT_PATH_MAX + 32];
static volatile sig_atomic_t tmp_used[OUT_SLOTS];
static int n_used;
static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction old_action[sizeof caught / sizeof caught[0]];

static void on_signal(int sig)
{
    for (int i = 0; i < OUT_SLOTS; i++)
        if (tmp_used[i])
            unlink(tmp_path[i]);
    for (unsigned k = 0; k < sizeof caught / sizeof caught[0]; k++) {
        if (caught[k] != sig)
            continue;
        if (old_action[k].sa_handler == SIG_IGN)
            return;
        if (old_action[k].sa_handler != SIG_DFL && !(old_action[k].sa_flags & SA_SIGINFO)) {
            old_action[k].sa_handler(sig);
            return;
        }
    }
    signal(sig, SIG_DFL); /* die of it, as the caller of dse expects */
    raise(sig);
}

static int slot_take(const char *path)
{
    for (int i = 0; i < OUT_SLOTS; i++) {
        if (tmp_used[i])
            continue;
        dse_strlcpy(tmp_path[i], path, sizeof tmp_path[i]);
        tmp_used[i] = 1;
        if (n_used++ == 0) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sigemptyset(&sa.sa_mask);
            for (unsigned k = 0; k < sizeof caught / sizeof caught[0]; k++)
                sigaction(caught[k], &sa, &old_action[k]);
        }
        return i;
    }
    return -1; /* more than OUT_SLOTS at once: written as before, only not removed on a signal */
}

static void slot_drop(int i)
{
    if (i < 0 || !tmp_used[i])
        return;
    tmp_used[i] = 0;
    if (--n_used == 0)
        for (unsigned k = 0; k < sizeof caught / sizeof caught[0]; k++)
            sigaction(caught[k], &old_action[k], NULL);
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISSOCK(m) ? "a socket" : S_ISBLK(m) ? "a block device" : "not a file";
}

/* Where path's bytes go: o->target and o->through, or a refusal. */
static int resolve(struct out_file *o, const char *path, struct dse_err *e)
{
    struct stat ls, st;
    o->through = 0;
    if (!*path)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "an empty output file name");
    if (strlen(path) >= sizeof o->target)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "output path of %zu bytes: longer than %d", strlen(path),
                           OUT_PATH_MAX - 1);
    if (lstat(path, &ls) != 0) {
        if (errno != ENOENT)
            return dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot write: %s", strerror(errno));
        dse_strlcpy(o->target, path, sizeof o->target); /* a new file */
        return DSE_OK;
    }
    if (stat(path, &st) != 0)
        return dse_err_set(e, DSE_EINPUT, path, NULL, "is a symbolic link to a file that does not exist (%s): "
                           "create it, or name another output", strerror(errno));
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        dse_strlcpy(o->target, path, sizeof o->target);
        o->through = 1;
        return DSE_OK;
    }
    if (!S_ISREG(st.st_mode))
        return dse_err_set(e, DSE_EINPUT, path, NULL, "is %s: expected a file name (a regular file, a FIFO or a "
                           "character device such as /dev/stdout)", kind_of(st.st_mode));
    if (!S_ISLNK(ls.st_mode)) {
        dse_strlcpy(o->target, path, sizeof o->target);
        return DSE_OK;
    }
    /* A link to a regular file: replace the file it names. /proc's links (/dev/stdout redirected to a
     * file) name files that may have no path any more: write through those. */
    char *real = realpath(path, NULL);
    if (!real || strlen(real) >= sizeof o->target || !strncmp(real, "/proc/", 6)) {
        dse_strlcpy(o->target, path, sizeof o->target);
        o->through = 1;
    } else {
        dse_strlcpy(o->target, real, sizeof o->target);
    }
    free(real);
    return DSE_OK;
}

int out_file_begin(struct out_file *o, const char *path, struct dse_err *e)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    o->fd = -1;
    int rc = resolve(o, path, e);
    if (rc)
        return rc;
    int k;
    if (o->through) {
        const char *dir = getenv("TMPDIR");
        k = snprintf(o->tmp, sizeof o->tmp, "%s/dse-out.XXXXXX", dir && *dir ? dir : "/tmp");
    } else {
        const char *slash = strrchr(o->target, '/');
        int dl = slash ? (int)(slash - o->target + 1) : 0;
        k = snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.tmp.XXXXXX", dl, o->target, o->target + dl);
    }
    if (k < 0 || (size_t)k >= sizeof o->tmp)
        return dse_err_set(e, DSE_EINPUT, path, NULL, "output path too long for its temporary file");
    /* The slot holds the name before the file exists: mkstemp fills in the name there, so a signal at
     * any point after it (the moment a watcher sees the file appear) finds the name to remove. */
    o->slot = slot_take(o->tmp);
    char *name = o->slot >= 0 ? tmp_path[o->slot] : o->tmp;
    int fd = mkstemp(name);
    if (fd < 0) {
        int err = errno;
        o->tmp[0] = '\0';
        slot_drop(o->slot);
        o->slot = -1;
        return dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot write%s: %s", o->through ? " a temporary file" : "",
                           strerror(err));
    }
    if (name != o->tmp)
        dse_strlcpy(o->tmp, name, sizeof o->tmp);
    o->fd = fd;
    char probe[32];
    snprintf(probe, sizeof probe, "/dev/fd/%d", fd);
    if (access(probe, W_OK) == 0)
        dse_strlcpy(o->child_path, probe, sizeof o->child_path);
    return DSE_OK;
}

const char *out_file_child_path(const struct out_file *o) { return o->child_path[0] ? o->child_path : o->tmp; }

void out_file_abort(struct out_file *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = '\0';
    slot_drop(o->slot);
    o->slot = -1;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Copies the temporary into the target, which is opened as it is (a FIFO waits for its reader). */
static int copy_through(const struct out_file *o, struct dse_err *e)
{
    int in = open(o->tmp, O_RDONLY);
    if (in < 0)
        return dse_err_set(e, DSE_ERUNTIME, o->tmp, NULL, "cannot read back: %s", strerror(errno));
    struct stat st;
    int trunc = stat(o->target, &st) == 0 && S_ISREG(st.st_mode);
    int out = open(o->target, O_WRONLY | (trunc ? O_TRUNC : 0));
    int rc = DSE_OK;
    if (out < 0) {
        rc = dse_err_set(e, DSE_ERUNTIME, o->target, NULL, "cannot write: %s", strerror(errno));
        close(in);
        return rc;
    }
    char buf[65536];
    for (;;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = dse_err_set(e, DSE_ERUNTIME, o->tmp, NULL, "cannot read back: %s", strerror(errno));
            break;
        }
        if (r == 0)
            break;
        if (write_all(out, buf, (size_t)r)) {
            rc = dse_err_set(e, DSE_ERUNTIME, o->target, NULL, "cannot write: %s", strerror(errno));
            break;
        }
    }
    if (close(out) != 0 && !rc)
        rc = dse_err_set(e, DSE_ERUNTIME, o->target, NULL, "cannot write: %s", strerror(errno));
    close(in);
    return rc;
}

int out_file_commit(struct out_file *o, struct dse_err *e)
{
    int rc = DSE_OK;
    if (o->fd >= 0 && close(o->fd) != 0)
        rc = dse_err_set(e, DSE_ERUNTIME, o->target, NULL, "cannot write: %s", strerror(errno));
    o->fd = -1;
    if (rc) {
        out_file_abort(o);
        return rc;
    }
    if (o->through) {
        rc = copy_through(o, e);
    } else {
        struct stat st; /* the replaced file's permissions are kept; a new file gets 0644 */
        mode_t mode = stat(o->target, &st) == 0 ? (st.st_mode & 07777) : 0644;
        if (chmod(o->tmp, mode) != 0 || rename(o->tmp, o->target) != 0)
            rc = dse_err_set(e, DSE_ERUNTIME, o->target, NULL, "cannot put %s in place: %s", o->tmp, strerror(errno));
        else
            o->tmp[0] = '\0';
    }
    out_file_abort(o);
    return rc;
}

int out_file_write(const char *path, const void *data, size_t len,
                   int (*check)(const char *tmp, void *ctx, struct dse_err *e), void *ctx, int *through,
                   struct dse_err *e)
{
    struct out_file o;
    int rc = out_file_begin(&o, path, e);
    if (rc)
        return rc;
    if (through)
        *through = o.through;
    if (write_all(o.fd, data, len))
        rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot write: %s", strerror(errno));
    if (!rc && !o.through && fsync(o.fd) != 0)
        rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot finish writing: %s", strerror(errno));
    if (close(o.fd) != 0 && !rc)
        rc = dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot write: %s", strerror(errno));
    o.fd = -1;
    if (!rc && check)
        rc = check(o.tmp, ctx, e);
    if (!rc)
        return out_file_commit(&o, e);
    out_file_abort(&o);
    return rc;
}

int out_file_is_stream(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

static int same_file(const struct stat *a, const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_dev == a->st_dev && st.st_ino == a->st_ino;
}

int out_file_not_input(const char *path, const char *opt, const char *const *inputs, const char *const *what, int n,
                       int db_suffixes, struct dse_err *e)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return DSE_OK; /* new, or written through: nothing of an input is replaced */
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < n; i++) {
        if (!inputs[i])
            continue;
        for (int s = 0; s < (db_suffixes ? 4 : 1); s++) {
            char p[OUT_PATH_MAX + 16];
            if (snprintf(p, sizeof p, "%s%s", inputs[i], sfx[s]) >= (int)sizeof p || !same_file(&st, p))
                continue;
            const char *w = what && what[i] ? what[i] : "an input";
            if (!*sfx[s])
                return dse_err_set(e, DSE_EINPUT, path, opt, "is one of this command's inputs, %s ('%s'): "
                                   "writing it would destroy it; name another output file", w, inputs[i]);
            return dse_err_set(e, DSE_EINPUT, path, opt, "is the %s file of one of this command's inputs, %s ('%s'): "
                               "writing it would destroy it; name another output file", sfx[s] + 1, w, inputs[i]);
        }
    }
    return DSE_OK;
}
