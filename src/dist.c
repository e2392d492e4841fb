/* dist.c -- MPI ranks for the sweep (dist.h). Without HAVE_MPI every call is the one-process identity. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "dist.h"

#ifdef HAVE_MPI
#include <mpi.h>
#endif

/* What launchers put in their processes' environment: Open MPI's mpirun, PMI (MPICH's Hydra, Slurm)
 * and PMIx. Returns 0 when no launcher started this process, the world size it names, or -1 when it
 * names none (PMIx: the size comes from MPI itself). A size of 1 (mpirun -np 1) is a launch too. */
static int launcher_size(void)
{
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS", NULL};
    for (int i = 0; size_vars[i]; i++) {
        const char *v = getenv(size_vars[i]);
        if (v && *v) {
            char *end;
            long x = strtol(v, &end, 10);
            return *end || x < 1 || x > INT_MAX ? -1 : (int)x;
        }
    }
    return getenv("PMIX_RANK") ? -1 : 0;
}

int dist_init(struct dist *d, struct dse_err *e)
{
    d->rank = 0;
    d->size = 1;
    d->active = 0;
    int launched = launcher_size();
#ifdef HAVE_MPI
    if (launched) {
        int provided = 0;
        /* Only the thread that called MPI_Init talks MPI; OpenMP threads only evaluate. */
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "MPI_Init_thread failed");
        d->active = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &d->size);
        /* Errors come back as codes (reported as dse errors), not as an abort of the job. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
#else
    if (launched > 1 || launched < 0) /* one rank needs no MPI */
        return dse_err_set(e, DSE_EINPUT, NULL, NULL,
                           "started by an MPI launcher, but this dse was built without MPI: every rank would run "
                           "the whole sweep and write the same database; rebuild with ./configure --with-mpi");
#endif
    return DSE_OK;
}

void dist_finish(struct dist *d)
{
#ifdef HAVE_MPI
    if (d->active)
        MPI_Finalize();
#endif
    d->active = 0;
}

int dist_owner(const struct dist *d, long long i, int root_permille)
{
    if (d->size == 1)
        return 0;
    long long turn = i / d->size, p = root_permille < 0 ? 0 : root_permille > 1000 ? 1000 : root_permille;
    int r = (int)(i % d->size);
    if (r)
        return r;
    /* rank 0 keeps turn t when floor((t + 1) p / 1000) passes an integer: p of every 1000 turns */
    if ((turn + 1) * p / 1000 > turn * p / 1000)
        return 0;
    return 1 + (int)(turn % (d->size - 1));
}

#ifdef HAVE_MPI
static int mpi_err(int rc, const char *what, struct dse_err *e)
{
    if (rc == MPI_SUCCESS)
        return DSE_OK;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "MPI %s failed: %.*s", what, len, msg);
}
#endif

int dist_gather_bytes(const struct dist *d, const void *mine, size_t n_mine, unsigned char **all, size_t *cap,
                      size_t *n_all, size_t *seg, int to_all, struct dse_err *e)
{
    *n_all = 0;
    if (n_mine > INT_MAX)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "MPI: a share of %zu bytes is too large to gather", n_mine);
#ifdef HAVE_MPI
    if (d && d->size > 1) {
        int *counts = malloc(sizeof *counts * (size_t)d->size), *displs = malloc(sizeof *displs * (size_t)d->size);
        int me = (int)n_mine, rc = DSE_OK, receive = to_all || d->rank == 0;
        size_t total = 0;
        if (!counts || !displs) {
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
            goto out;
        }
        /* every rank learns every share's size, so that every rank sees a batch too large to gather */
        if ((rc = mpi_err(MPI_Allgather(&me, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD), "allgather", e)))
            goto out;
        for (int r = 0; r < d->size; r++) {
            displs[r] = (int)total;
            seg[r] = total;
            total += (size_t)counts[r];
        }
        seg[d->size] = total;
        if (total > INT_MAX) {
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "MPI: a batch of %zu bytes is too large to gather", total);
            goto out;
        }
        if (receive && total > *cap) {
            unsigned char *p = realloc(*all, total);
            if (!p) {
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                goto out;
            }
            *all = p;
            *cap = total;
        }
        rc = to_all ? mpi_err(MPI_Allgatherv(mine, me, MPI_BYTE, *all, counts, displs, MPI_BYTE, MPI_COMM_WORLD),
                              "allgather", e)
                    : mpi_err(MPI_Gatherv(mine, me, MPI_BYTE, receive ? *all : NULL, counts, displs, MPI_BYTE, 0,
                                          MPI_COMM_WORLD),
                              "gather", e);
        *n_all = receive && !rc ? total : 0;
    out:
        free(counts);
        free(displs);
        return rc;
    }
#else
    (void)to_all;
#endif
    (void)d;
    if (n_mine > *cap) {
        unsigned char *p = realloc(*all, n_mine);
        if (!p)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        *all = p;
        *cap = n_mine;
    }
    if (n_mine)
        memcpy(*all, mine, n_mine);
    *n_all = n_mine;
    seg[0] = 0;
    seg[1] = n_mine;
    return DSE_OK;
}

int dist_max(const struct dist *d, int *flags, int n, struct dse_err *e)
{
    if (!d || d->size == 1)
        return DSE_OK;
#ifdef HAVE_MPI
    return mpi_err(MPI_Allreduce(MPI_IN_PLACE, flags, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "allreduce", e);
#else
    (void)flags, (void)n;
    return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "MPI: not built with MPI");
#endif
}

int dist_bcast(const struct dist *d, void *buf, size_t bytes, int root, struct dse_err *e)
{
    if (!d || d->size == 1)
        return DSE_OK;
#ifdef HAVE_MPI
    /* in pieces of at most 1 GiB: MPI counts are ints */
    for (size_t off = 0; off < bytes;) {
        size_t k = bytes - off < (1u << 30) ? bytes - off : (1u << 30);
        int rc = mpi_err(MPI_Bcast((char *)buf + off, (int)k, MPI_BYTE, root, MPI_COMM_WORLD), "broadcast", e);
        if (rc)
            return rc;
        off += k;
    }
    return DSE_OK;
#else
    (void)buf, (void)bytes, (void)root;
    return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "MPI: not built with MPI");
#endif
}

int dist_agree_error(const struct dist *d, int failed, struct dse_err *e)
{
    if (!d || d->size == 1)
        return failed ? (e->code ? e->code : DSE_ERUNTIME) : DSE_OK;
#ifdef HAVE_MPI
    int first = failed ? d->rank : d->size;
    struct dse_err me;
    if (MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "MPI allreduce failed");
    if (first == d->size)
        return DSE_OK;
    if (d->rank == first)
        me = *e;
    if (dist_bcast(d, &me, sizeof me, first, e))
        return DSE_ERUNTIME;
    *e = me;
    return e->code ? e->code : DSE_ERUNTIME;
#else
    (void)failed;
    return DSE_OK;
#endif
}
