/* SPDX-License-Identifier: BSD-3-Clause */
/* The box rearranger's mapping (collective setup; the per-step data
 * exchange is in e3sm_exchange.c). */
#include "e3sm_box.h"

#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

int
e3sm_box_io_ranks(MPI_Comm comm, int stride, int nio, int *io)
{
    int rank, nprocs, n = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    if (stride > 1) {
        for (int r = 0; r < nprocs; r += stride)
            io[n++] = r;
    } else if (nio > 0) {
        if (nio > nprocs)
            nio = nprocs;
        for (int i = 0; i < nio; i++)
            io[n++] = (int)((int64_t)i * nprocs / nio);
    } else { /* one per node: the lowest rank of each shared-memory domain */
        MPI_Comm node;
        int nrank, *first = malloc((size_t)nprocs * sizeof *first);
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &nrank);
        int mine = nrank == 0;
        MPI_Allgather(&mine, 1, MPI_INT, first, 1, MPI_INT, comm);
        for (int r = 0; r < nprocs; r++)
            if (first[r])
                io[n++] = r;
        free(first);
        MPI_Comm_free(&node);
    }
    return n;
}

int
e3sm_range_boxes(int64_t a, int64_t b, const int64_t *dims, int nd, int64_t *st, int64_t *ct)
{
    if (a >= b)
        return 0;
    if (nd == 1) {
        st[0] = a;
        ct[0] = b - a;
        return 1;
    }
    int64_t inner = 1;
    for (int k = 1; k < nd; k++)
        inner *= dims[k];
    int64_t first = a / inner, last = (b - 1) / inner;
    int n = 0;
    if (first == last) { /* within one slab of the outermost dimension */
        int m = e3sm_range_boxes(a - first * inner, b - first * inner, dims + 1, nd - 1, st + 1,
                                 ct + 1);
        /* the sub-boxes were written with stride nd - 1: spread them to nd */
        int64_t tst[64], tct[64];
        memcpy(tst, st + 1, (size_t)m * (nd - 1) * sizeof *st);
        memcpy(tct, ct + 1, (size_t)m * (nd - 1) * sizeof *ct);
        for (int i = 0; i < m; i++) {
            st[i * nd] = first;
            ct[i * nd] = 1;
            memcpy(st + i * nd + 1, tst + i * (nd - 1), (size_t)(nd - 1) * sizeof *st);
            memcpy(ct + i * nd + 1, tct + i * (nd - 1), (size_t)(nd - 1) * sizeof *ct);
        }
        return m;
    }
    if (a % inner) { /* the partial first slab */
        n += e3sm_range_boxes(a, (first + 1) * inner, dims, nd, st, ct);
        first++;
    }
    int64_t end = b / inner; /* slabs [first, end) are whole */
    if (end > first) {
        st[n * nd] = first;
        ct[n * nd] = end - first;
        for (int k = 1; k < nd; k++) {
            st[n * nd + k] = 0;
            ct[n * nd + k] = dims[k];
        }
        n++;
    }
    if (b % inner)
        n += e3sm_range_boxes(end * inner, b, dims, nd, st + n * nd, ct + n * nd);
    return n;
}

struct piece {
    int64_t off, len, recv;
};

static int
cmp_piece(const void *x, const void *y)
{
    const struct piece *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

int
e3sm_box_setup(const struct e3sm_decomp *d, MPI_Comm comm, const int *io, int nio,
               struct e3sm_box *b)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    memset(b, 0, sizeof *b);
    size_t np = (size_t)nprocs;
    b->scount = calloc(np, sizeof(int));
    b->sdispl = calloc(np, sizeof(int));
    b->rcount = calloc(np, sizeof(int));
    b->rdispl = calloc(np, sizeof(int));
    int *spieces = calloc(np, sizeof(int)), *rpieces = calloc(np, sizeof(int));
    int *sdp = calloc(np, sizeof(int)), *rdp = calloc(np, sizeof(int));

    /* my runs cut at the box boundaries: box i is [T*i/nio, T*(i+1)/nio) */
    const struct e3sm_runs *r = &d->runs;
    int64_t cap = r->n + nio + 1, n = 0;
    int64_t *send = malloc((size_t)cap * 2 * sizeof *send); /* (off, len) per piece */
    int *dest = malloc((size_t)cap * sizeof *dest);
    int box = 0;
    for (int64_t j = 0; j < r->n; j++) {
        int64_t o = r->off[j], left = r->len[j];
        while (left > 0) {
            while ((int64_t)((__int128)d->total * (box + 1) / nio) <= o)
                box++;
            int64_t end = (int64_t)((__int128)d->total * (box + 1) / nio);
            int64_t take = end - o < left ? end - o : left;
            if (n == cap) {
                cap *= 2;
                send = realloc(send, (size_t)cap * 2 * sizeof *send);
                dest = realloc(dest, (size_t)cap * sizeof *dest);
            }
            send[2 * n] = o;
            send[2 * n + 1] = take;
            dest[n++] = io[box];
            b->scount[io[box]] += (int)take;
            spieces[io[box]] += 2;
            o += take;
            left -= take;
        }
    }
    for (int p = 1; p < nprocs; p++) {
        b->sdispl[p] = b->sdispl[p - 1] + b->scount[p - 1];
        sdp[p] = sdp[p - 1] + spieces[p - 1];
    }
    MPI_Alltoall(b->scount, 1, MPI_INT, b->rcount, 1, MPI_INT, comm);
    MPI_Alltoall(spieces, 1, MPI_INT, rpieces, 1, MPI_INT, comm);
    for (int p = 1; p < nprocs; p++) {
        b->rdispl[p] = b->rdispl[p - 1] + b->rcount[p - 1];
        rdp[p] = rdp[p - 1] + rpieces[p - 1];
    }
    int64_t nrecv = (rdp[nprocs - 1] + rpieces[nprocs - 1]) / 2;
    int64_t *recv = malloc((size_t)(2 * nrecv + 2) * sizeof *recv);
    /* pieces go to ascending boxes, so `send` is grouped by destination */
    MPI_Alltoallv(send, spieces, sdp, MPI_INT64_T, recv, rpieces, rdp, MPI_INT64_T, comm);
    free(send);
    free(dest);
    free(spieces);
    free(rpieces);
    free(sdp);
    free(rdp);

    /* I/O side: the received pieces in canonical order, where each lies in
     * the receive buffer, and where in this rank's I/O buffer */
    struct piece *pc = malloc((size_t)(nrecv + 1) * sizeof *pc);
    int64_t at = 0;
    for (int64_t i = 0; i < nrecv; i++) {
        pc[i] = (struct piece){recv[2 * i], recv[2 * i + 1], at};
        at += recv[2 * i + 1];
    }
    free(recv);
    qsort(pc, (size_t)nrecv, sizeof *pc, cmp_piece);
    int rc = IOK_OK;
    b->npieces = nrecv;
    b->p_recv = malloc((size_t)(nrecv + 1) * sizeof(int64_t));
    b->p_io = malloc((size_t)(nrecv + 1) * sizeof(int64_t));
    b->p_len = malloc((size_t)(nrecv + 1) * sizeof(int64_t));
    int64_t io_at = 0, nruns = 0;
    int64_t *ro = malloc((size_t)(nrecv + 1) * sizeof *ro),
            *rl = malloc((size_t)(nrecv + 1) * sizeof *rl);
    for (int64_t i = 0; i < nrecv; i++) {
        if (i > 0 && pc[i].off < pc[i - 1].off + pc[i - 1].len && rc == IOK_OK)
            rc = iok_error(IOK_EUSAGE,
                           "decomposition elements %lld..%lld belong to two ranks: the box "
                           "rearranger needs each element written once",
                           (long long)pc[i].off, (long long)(pc[i - 1].off + pc[i - 1].len - 1));
        b->p_recv[i] = pc[i].recv;
        b->p_io[i] = io_at;
        b->p_len[i] = pc[i].len;
        io_at += pc[i].len;
        if (nruns && ro[nruns - 1] + rl[nruns - 1] == pc[i].off)
            rl[nruns - 1] += pc[i].len;
        else {
            ro[nruns] = pc[i].off;
            rl[nruns++] = pc[i].len;
        }
    }
    free(pc);
    b->io_elems = io_at;
    /* each merged run as at most 2*ndims - 1 subarrays */
    int nd = d->ndims;
    b->st = malloc((size_t)(nruns * (2 * nd - 1) * nd + 1) * sizeof *b->st);
    b->ct = malloc((size_t)(nruns * (2 * nd - 1) * nd + 1) * sizeof *b->ct);
    for (int64_t i = 0; i < nruns; i++)
        b->nsub += e3sm_range_boxes(ro[i], ro[i] + rl[i], d->dims, nd, b->st + b->nsub * nd,
                                    b->ct + b->nsub * nd);
    free(ro);
    free(rl);
    return rc;
}

void
e3sm_box_free(struct e3sm_box *b)
{
    free(b->scount);
    free(b->sdispl);
    free(b->rcount);
    free(b->rdispl);
    free(b->p_recv);
    free(b->p_io);
    free(b->p_len);
    free(b->st);
    free(b->ct);
    memset(b, 0, sizeof *b);
}
