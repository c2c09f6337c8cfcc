/* SPDX-License-Identifier: BSD-3-Clause */
/* The request log (iokernels/reqlog.h): each logged call's subarrays as the
 * byte rows of the raw layout the mpiio backend writes (variables one after
 * another in schema order, each row-major with its full extent), gathered
 * on rank 0 once the passes are over. */
#include <stdlib.h>
#include <string.h>

#include "core/lib/lib.h"
#include "iokernels/error.h"
#include "iokernels/grow.h"
#include "iokernels/reqlog.h"

struct iok_reqlog *iok_log;

void
iok_reqlog_start(struct iok_reqlog *log, MPI_Comm comm)
{
    memset(log, 0, sizeof *log);
    MPI_Barrier(comm);
    log->t0 = iok_now(); /* the job's clock, as the times logged (engine_step.c) */
}

void
iok_reqlog_free(struct iok_reqlog *log)
{
    free(log->ops);
    free(log->segs);
    memset(log, 0, sizeof *log);
}

int64_t
iok_raw_var_offset(const struct iok_schema *s, int v)
{
    int64_t off = 0;
    for (int i = 0; i < v; i++)
        off += iok_var_total_elems(s, i) * (int64_t)iok_type_size(s->vars[i].type);
    return off;
}

static int
add_seg(struct iok_reqlog *log, int64_t off, int64_t len)
{
    if (iok_grow((void **)&log->segs, &log->segs_cap, log->nsegs + 1, sizeof *log->segs))
        return iok_error(IOK_EIO, "out of memory for the request log");
    log->segs[log->nsegs++] = (struct iok_logseg){off, len};
    return IOK_OK;
}

/* The rows of one subarray, merged where contiguous. */
static int
add_subarray(struct iok_reqlog *log, const struct iok_schema *s, int v, int64_t base,
             const int64_t *st, const int64_t *ct)
{
    int nd = s->vars[v].ndims;
    int64_t es = (int64_t)iok_type_size(s->vars[v].type), len[IOK_MAX_DIMS], rows = 1;
    for (int k = 0; k < nd; k++) {
        len[k] = iok_var_dim_len(s, v, k);
        if (ct[k] == 0)
            return IOK_OK;
    }
    int inner = nd ? nd - 1 : 0;
    int64_t row = nd ? ct[nd - 1] : 1;
    while (inner > 0 && ct[inner] == len[inner])
        row *= ct[--inner];
    for (int k = 0; k < inner; k++)
        rows *= ct[k];
    int64_t idx[IOK_MAX_DIMS] = {0}, first = log->nsegs;
    for (int64_t r = 0; r < rows; r++) {
        int64_t lin = 0;
        for (int k = 0; k < nd; k++)
            lin = lin * len[k] + st[k] + (k < inner ? idx[k] : 0);
        IOK_TRY(add_seg(log, base + lin * es, row * es));
        for (int k = inner - 1; k >= 0; k--) {
            if (++idx[k] < ct[k])
                break;
            idx[k] = 0;
        }
    }
    log->nsegs = first + iok_segs_merge(log->segs + first, log->nsegs - first, IOK_SEGS_IN_ORDER);
    return IOK_OK;
}

int
iok_reqlog_add(struct iok_reqlog *log, int rank, const struct iok_schema *s, int file, int write,
               int level, double t0, double t1, const struct iok_reqlist *r)
{
    if (iok_grow((void **)&log->ops, &log->ops_cap, log->nops + 1, sizeof *log->ops))
        return iok_error(IOK_EIO, "out of memory for the request log");
    int64_t seg0 = log->nsegs;
    for (int i = 0; i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        int nd = s->vars[a->varid].ndims;
        int64_t base = iok_raw_var_offset(s, a->varid);
        for (int j = 0; j < a->nsub; j++)
            IOK_TRY(add_subarray(log, s, a->varid, base, a->starts + (size_t)j * nd,
                                 a->counts + (size_t)j * nd));
    }
    log->ops[log->nops++] = (struct iok_logop){.rank = rank,
                                               .file = file,
                                               .write = write,
                                               .level = level,
                                               .start = t0 - log->t0,
                                               .end = t1 - log->t0,
                                               .nseg = log->nsegs - seg0,
                                               .seg0 = seg0};
    return IOK_OK;
}

/* Collective: every rank's log on rank 0 (into all), rank by rank. */
int
iok_reqlog_gather(const struct iok_reqlog *log, MPI_Comm comm, struct iok_reqlog *all)
{
    int rank, nprocs, rc = IOK_OK;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    memset(all, 0, sizeof *all);
    int64_t mine[2] = {log->nops, log->nsegs}, *counts = NULL;
    if (rank == 0)
        counts = malloc(2 * (size_t)nprocs * sizeof *counts);
    MPI_Gather(mine, 2, MPI_INT64_T, counts, 2, MPI_INT64_T, 0, comm);
    int *ocnt = NULL, *odsp = NULL, *scnt = NULL, *sdsp = NULL;
    if (rank == 0) {
        int64_t nops = 0, nsegs = 0;
        for (int r = 0; r < nprocs; r++) {
            nops += counts[2 * r];
            nsegs += counts[2 * r + 1];
        }
        ocnt = calloc((size_t)nprocs, sizeof *ocnt);
        odsp = calloc((size_t)nprocs, sizeof *odsp);
        scnt = calloc((size_t)nprocs, sizeof *scnt);
        sdsp = calloc((size_t)nprocs, sizeof *sdsp);
        all->ops = malloc((size_t)(nops ? nops : 1) * sizeof *all->ops);
        all->segs = malloc((size_t)(nsegs ? nsegs : 1) * sizeof *all->segs);
        if ((double)nsegs * sizeof *all->segs > INT32_MAX ||
            (double)nops * sizeof *all->ops > INT32_MAX)
            rc = iok_error(IOK_EUSAGE, "the request log is too large to gather (%lld requests)",
                           (long long)nsegs);
        else if (!ocnt || !odsp || !scnt || !sdsp || !all->ops || !all->segs)
            rc = iok_error(IOK_EIO, "out of memory gathering the request log");
        for (int r = 0, od = 0, sd = 0; rc == IOK_OK && r < nprocs; r++) {
            ocnt[r] = (int)(counts[2 * r] * (int64_t)sizeof *all->ops);
            scnt[r] = (int)(counts[2 * r + 1] * (int64_t)sizeof *all->segs);
            odsp[r] = od;
            sdsp[r] = sd;
            od += ocnt[r];
            sd += scnt[r];
        }
        all->nops = nops;
        all->nsegs = nsegs;
        all->t0 = log->t0;
    }
    if ((rc = iok_agree(comm, rc)) == IOK_OK) {
        MPI_Gatherv(log->ops, (int)(log->nops * (int64_t)sizeof *log->ops), MPI_BYTE, all->ops,
                    ocnt, odsp, MPI_BYTE, 0, comm);
        MPI_Gatherv(log->segs, (int)(log->nsegs * (int64_t)sizeof *log->segs), MPI_BYTE, all->segs,
                    scnt, sdsp, MPI_BYTE, 0, comm);
        if (rank == 0) /* each rank's seg0 counted from its own first segment */
            for (int r = 0, o = 0; r < nprocs; r++)
                for (int64_t i = 0; i < counts[2 * r]; i++, o++)
                    all->ops[o].seg0 += sdsp[r] / (int64_t)sizeof *all->segs;
    }
    free(counts);
    free(ocnt);
    free(odsp);
    free(scnt);
    free(sdsp);
    if (rc)
        iok_reqlog_free(all);
    return rc;
}
