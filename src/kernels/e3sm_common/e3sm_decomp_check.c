/* SPDX-License-Identifier: BSD-3-Clause */
/* Across ranks, the runs of one decomposition must be disjoint: each
 * element written by one rank (a map whose ranks overlap writes an element
 * twice, and the last writer is the file's). Each rank checks its own runs
 * when it builds them; this is the check between ranks, in parse time: the
 * element range is cut into one block per rank, every rank sends each block
 * owner the pieces of its runs inside that block (one MPI_Alltoallv, as many
 * bytes as the runs themselves), and each owner sorts what it received and
 * looks for two pieces that intersect. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e3sm_decomp.h"

struct piece {
    int64_t off, len, rank;
};

static int
cmp_piece(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Calls f(dest, off, len) for each piece of [off, off + len) in a block. */
#define FOR_PIECES(r, block, body)                                                                 \
    for (int64_t i_ = 0; i_ < (r)->n; i_++) {                                                      \
        int64_t o_ = (r)->off[i_], left_ = (r)->len[i_];                                           \
        while (left_ > 0) {                                                                        \
            int dest = (int)(o_ / (block));                                                        \
            int64_t take = (dest + 1) * (block)-o_;                                                \
            if (take > left_)                                                                      \
                take = left_;                                                                      \
            int64_t poff = o_, plen = take;                                                        \
            body;                                                                                  \
            o_ += take;                                                                            \
            left_ -= take;                                                                         \
        }                                                                                          \
    }

int
e3sm_runs_check_disjoint(const struct e3sm_runs *r, int64_t total, MPI_Comm comm, char *err,
                         size_t errlen)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    err[0] = '\0';
    if (nprocs == 1 || total < 1)
        return 0; /* one rank: e3sm_runs_build saw every overlap */
    int64_t block = total / nprocs + 1;
    int *scount = calloc((size_t)nprocs, sizeof *scount),
        *rcount = calloc((size_t)nprocs, sizeof *rcount);
    int *sdisp = calloc((size_t)nprocs, sizeof *sdisp),
        *rdisp = calloc((size_t)nprocs, sizeof *rdisp);
    int64_t nsend = 0, nrecv = 0;
    int ok = scount && rcount && sdisp && rdisp;
    if (ok)
        FOR_PIECES(r, block, {
            (void)poff;
            (void)plen;
            scount[dest] += 3;
            nsend++;
        });
    /* counts of int64 values; MPI's counts are int */
    ok = ok && nsend <= INT_MAX / 3;
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        free(scount), free(rcount), free(sdisp), free(rdisp);
        snprintf(err, errlen, "too many requests on a rank to check them against the others'");
        return -1;
    }
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm);
    for (int p = 0; p < nprocs; p++) {
        sdisp[p] = p ? sdisp[p - 1] + scount[p - 1] : 0;
        rdisp[p] = p ? rdisp[p - 1] + rcount[p - 1] : 0;
        nrecv += rcount[p];
    }
    int64_t *send = malloc((size_t)(3 * nsend + 1) * sizeof *send);
    struct piece *recv = malloc((size_t)(nrecv / 3 + 1) * sizeof *recv);
    int *at = malloc((size_t)nprocs * sizeof *at);
    ok = send && recv && at && nrecv <= INT_MAX;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    int bad = 0;
    if (all_ok) {
        memcpy(at, sdisp, (size_t)nprocs * sizeof *at);
        FOR_PIECES(r, block, {
            int64_t *s = send + at[dest];
            s[0] = poff;
            s[1] = plen;
            s[2] = rank;
            at[dest] += 3;
        });
        MPI_Alltoallv(send, scount, sdisp, MPI_INT64_T, recv, rcount, rdisp, MPI_INT64_T, comm);
        int64_t n = nrecv / 3;
        qsort(recv, (size_t)n, sizeof *recv, cmp_piece);
        for (int64_t i = 1; i < n && !bad; i++)
            if (recv[i].off < recv[i - 1].off + recv[i - 1].len) {
                snprintf(err, errlen,
                         "the requests of ranks %lld and %lld overlap at element %lld (of %lld): "
                         "a decomposition gives each element to one rank",
                         (long long)recv[i - 1].rank, (long long)recv[i].rank,
                         (long long)recv[i].off, (long long)total);
                bad = 1;
            }
    } else {
        snprintf(err, errlen, "out of memory checking the requests against the other ranks'");
        bad = 1;
    }
    free(send), free(recv), free(at);
    free(scount), free(rcount), free(sdisp), free(rdisp);
    return bad ? -1 : 0;
}
