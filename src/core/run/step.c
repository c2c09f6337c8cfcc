/* SPDX-License-Identifier: BSD-3-Clause */
/* The ranks' agreement on one step, once, before its post and outside every
 * timed region: did every rank build its list, does the deadline stop the
 * pass here, and (collective mode, backends that need it) how many library
 * calls each access takes at most over the ranks. Backends get the answer in
 * acc[i].calls_max and never reduce anything inside put/get/wait.
 *
 * One reduction per step when every rank lists at most STEP_FUSED accesses
 * (every kernel's usual step): the status, the deadline and the per-access
 * calls travel together. A step costs the ranks a meeting they cannot
 * overlap (NetCDF-Bench makes 100 of them between its collective puts), so a
 * second reduction is spent only on longer lists. */
#include <stdlib.h>

#include "core/lib/lib.h"
#include "core/run/run.h"
#include "iokernels/error.h"

/* accesses whose calls and varids fit in the status reduction */
#define STEP_FUSED ((IOK_AGREE_MAX_VALUES - 3) / 3)

/* calls, varid and -varid of accesses [0, n) into w[0..n), w[m..m+n),
 * w[2m..2m+n): MAX gives the most calls and shows a variable that differs
 * between ranks. */
static void
step_fill(const struct iok_reqlist *r, int n, int m, int *w)
{
    for (int i = 0; i < n; i++) {
        w[i] = r->acc[i].calls;
        w[m + i] = r->acc[i].varid;
        w[2 * m + i] = -r->acc[i].varid;
    }
}

/* calls_max from the reduced w; IOK_OK or the kernel bug it shows */
static int
step_take(struct iok_reqlist *r, int m, const int *w)
{
    int rc = IOK_OK;
    for (int i = 0; i < r->n; i++) {
        r->acc[i].calls_max = w[i];
        if (rc == IOK_OK && w[m + i] != -w[2 * m + i])
            rc = iok_error(IOK_EIO,
                           "ranks list different variables at access %d of a step: collective "
                           "transfers need the same access list on every rank (a kernel bug)",
                           i);
    }
    return rc;
}

int
iok_step_agree(const struct iok_run *run, MPI_Comm comm, void *h, int shared, int rc,
               struct iok_reqlist *r, int *stop, int meet)
{
    const struct iok_backend *be = run->backend;
    for (int i = 0; i < r->n; i++)
        r->acc[i].calls = r->acc[i].calls_max = r->acc[i].nsub;
    if (rc == IOK_OK && be->prepare)
        rc = be->prepare(h, r);
    if (!meet) /* --agree-every: no meeting this step (never when calls must agree) */
        return rc;
    /* a file per process is opened on MPI_COMM_SELF: no other rank to meet;
     * `need` is the same on every rank (run-wide settings) */
    int need = shared && run->collective && (be->caps & IOK_CAP_AGREED_CALLS);
    /* with `need`, every rank sends the same count whatever its list holds:
     * the first STEP_FUSED accesses ride along, the rest (if the longest
     * list has more) take a second reduction that all ranks then make */
    int v[IOK_AGREE_MAX_VALUES] = {*stop, r->n, -r->n};
    if (need)
        step_fill(r, r->n < STEP_FUSED ? r->n : STEP_FUSED, STEP_FUSED, v + 3);
    if ((rc = iok_agree_max(comm, rc, v, need ? 3 + 3 * STEP_FUSED : 3)))
        return rc;
    *stop = v[0];
    if (!need)
        return IOK_OK;
    if (v[1] != -v[2])
        return iok_agree(comm, iok_error(IOK_EIO,
                                         "ranks list %d to %d accesses in one step: collective "
                                         "transfers need the same access list on every rank "
                                         "(a kernel bug)",
                                         -v[2], v[1]));
    int n = r->n;
    if (n == 0)
        return IOK_OK;
    if (n <= STEP_FUSED) /* the same n on every rank, checked above */
        return (rc = step_take(r, STEP_FUSED, v + 3)) ? iok_agree(comm, rc) : IOK_OK;
    int *w = malloc(3 * (size_t)n * sizeof *w);
    if (!w)
        return iok_agree(comm, iok_error(IOK_EIO, "out of memory agreeing on a step"));
    step_fill(r, n, n, w);
    MPI_Allreduce(MPI_IN_PLACE, w, 3 * n, MPI_INT, MPI_MAX, comm);
    rc = step_take(r, n, w);
    free(w);
    return rc ? iok_agree(comm, rc) : IOK_OK;
}
