/* SPDX-License-Identifier: BSD-3-Clause */
/* The ranks' agreement on one step, once, before its post and outside every
 * timed region: did every rank build its list, does the deadline stop the
 * pass here, and (collective mode, backends that need it) how many library
 * calls each access takes at most over the ranks. Backends get the answer in
 * acc[i].calls_max and never reduce anything inside put/get/wait. */
#include <stdlib.h>

#include "core.h"
#include "iokernels/error.h"

int
iok_step_agree(const struct iok_run *run, MPI_Comm comm, void *h, int shared, int rc,
               struct iok_reqlist *r, int *stop)
{
    const struct iok_backend *be = run->backend;
    for (int i = 0; i < r->n; i++)
        r->acc[i].calls = r->acc[i].calls_max = r->acc[i].nsub;
    if (rc == IOK_OK && be->prepare)
        rc = be->prepare(h, r);
    /* a file per process is opened on MPI_COMM_SELF: no other rank to meet */
    int need = shared && run->collective && (be->caps & IOK_CAP_AGREED_CALLS);
    int v[3] = {*stop, r->n, -r->n};
    if ((rc = iok_agree_max(comm, rc, v, 3)))
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
    /* calls, varid and -varid of every access: MAX gives the most calls and
     * shows a variable that differs between ranks */
    int *w = malloc(3 * (size_t)n * sizeof *w);
    if (!w)
        return iok_agree(comm, iok_error(IOK_EIO, "out of memory agreeing on a step"));
    for (int i = 0; i < n; i++) {
        w[i] = r->acc[i].calls;
        w[n + i] = r->acc[i].varid;
        w[2 * n + i] = -r->acc[i].varid;
    }
    MPI_Allreduce(MPI_IN_PLACE, w, 3 * n, MPI_INT, MPI_MAX, comm);
    rc = IOK_OK;
    for (int i = 0; i < n; i++) {
        r->acc[i].calls_max = w[i];
        if (rc == IOK_OK && w[n + i] != -w[2 * n + i])
            rc = iok_error(IOK_EIO,
                           "ranks list different variables at access %d of a step: collective "
                           "transfers need the same access list on every rank (a kernel bug)",
                           i);
    }
    free(w);
    return rc ? iok_agree(comm, rc) : IOK_OK;
}
