/* dist.h -- a sweep spread over MPI ranks (./configure --with-mpi; docs/mpi.md).
 *
 * Every rank runs the same search: the same spec, the same seed, so the same batches of points in
 * the same order. A batch's items are dealt to the ranks (dist_owner); each rank evaluates its
 * items with OpenMP and the rows are gathered (to rank 0, or to every rank where the search needs
 * every result, as NSGA-II does) and put back in place, so rank 0 sees the rows in the order one
 * process would make them and writes the one database. Rows travel as bytes: the ranks must run the same dse binary on
 * machines of one architecture.
 *
 * MPI starts only when a launcher started the process (mpirun's environment); a build with MPI run
 * on its own is one process, and so is a build without it: struct dist then says rank 0 of 1 and
 * every call below is the identity. */
#ifndef DSE_DIST_H
#define DSE_DIST_H

#include <stddef.h>

#include "err.h"

struct dist {
    int rank, size;
    int active; /* MPI_Init was called (and MPI_Finalize is due) */
};

/* Starts MPI when a launcher started this process, else sets rank 0 of 1. */
int dist_init(struct dist *d, struct dse_err *e);
void dist_finish(struct dist *d);

/* The rank that evaluates item i of a batch. Items are dealt round-robin, so that every rank's share
 * looks like the whole batch (costs vary along a batch: a placement a device lacks fails at once);
 * rank 0 keeps root_permille thousandths of its turns (it also writes the results: dse sweep makes
 * its share smaller), the others taking its remaining turns in rotation. */
int dist_owner(const struct dist *d, long long i, int root_permille);
/* Each rank's mine[0..n_mine) bytes concatenated in rank order into *all (grown with realloc as
 * needed, *cap its size; the caller frees it), *n_all bytes, at rank 0 (to_all: at every rank);
 * there rank r's bytes are [seg[r], seg[r + 1]) (seg: size + 1 entries). */
int dist_gather_bytes(const struct dist *d, const void *mine, size_t n_mine, unsigned char **all, size_t *cap,
                      size_t *n_all, size_t *seg, int to_all, struct dse_err *e);
/* flags[0..n) replaced by their maximum over the ranks (a collective: every rank calls it). */
int dist_max(const struct dist *d, int *flags, int n, struct dse_err *e);
/* bytes of buf copied from rank root to every rank. */
int dist_bcast(const struct dist *d, void *buf, size_t bytes, int root, struct dse_err *e);
/* An error of any rank made every rank's: failed says whether this rank's e holds one; returns
 * DSE_OK when no rank failed, else the error of the lowest failing rank, copied into e on every
 * rank. */
int dist_agree_error(const struct dist *d, int failed, struct dse_err *e);

#endif
