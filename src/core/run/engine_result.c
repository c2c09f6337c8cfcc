/* SPDX-License-Identifier: BSD-3-Clause */
/* A pass's result (run.h), after its files are closed: what the OS
 * counted, the phases, the spans, the bytes; each rank's phases and marks
 * on rank 0; then the check of what each written file holds, and the line
 * of a verify that found differences. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/run/run.h"
#include "iokernels/error.h"

/* Bytes the OS counted over the pass, summed over ranks (-1: unknown). */
static void
os_counts(MPI_Comm comm, const struct iok_osbytes *a, const struct iok_osbytes *b,
          struct iok_pass_result *out)
{
    int64_t d[4] = {b->rchar - a->rchar, b->wchar - a->wchar, b->read_bytes - a->read_bytes,
                    b->write_bytes - a->write_bytes},
            sum[4], low;
    MPI_Allreduce(d, sum, 4, MPI_INT64_T, MPI_SUM, comm);
    MPI_Allreduce(&a->rchar, &low, 1, MPI_INT64_T, MPI_MIN, comm);
    out->os = low < 0 ? (struct iok_osbytes){-1, -1, -1, -1}
                      : (struct iok_osbytes){sum[0], sum[1], sum[2], sum[3]};
}

/* The span, IOR's way (earliest open start to latest close end), less the
 * suite's work every rank did in each segment (the rank on the critical
 * path waits least at an agreement: what every rank spent there is the
 * suite's cost, not the I/O's); each rank's own span less all of its own
 * suite work. On the job's clock (clock.c), and on each rank's own clock
 * as it reads it: what the span would be without the correction. */
static void
spans(struct iok_pass *p, struct iok_pass_result *out, double *own_span, double *steps_common)
{
    MPI_Comm comm = p->run->comm;
    double suite = p->work + p->agreed;
    *own_span = p->close_end - p->open_start - suite;
    double ends[4] = {-p->open_start, p->close_end, -(p->open_start + iok_clock.offset),
                      p->close_end + iok_clock.offset},
           ende[4];
    MPI_Allreduce(ends, ende, 4, MPI_DOUBLE, MPI_MAX, comm);
    double common = 0;
    *steps_common = 0;
    MPI_Allreduce(MPI_IN_PLACE, p->seg, p->nseg, MPI_DOUBLE, MPI_MIN, comm);
    for (int i = 0; i < p->nseg; i++) {
        common += p->seg[i];
        *steps_common += i > 0 ? p->seg[i] : 0;
    }
    out->span_open_close = ende[1] + ende[0];
    out->span = out->span_open_close - common;
    out->span_unsynced = ende[3] + ende[2] - common;
    out->span_rank = iok_stat_reduce(*own_span, comm);
    out->span_suite = iok_stat_reduce(suite, comm);
    out->io_time = out->span;
}

/* Each rank's own phase totals, span and marks, gathered on rank 0 for
 * per-rank reports. */
static void
per_rank(struct iok_pass *p, struct iok_pass_result *out, double own_span, double steps_common)
{
    const struct iok_run *run = p->run;
    enum { NOWN = IOK_NPHASES + 1 + IOK_NMARKS };
    double own[NOWN];
    for (int ph = 0; ph < IOK_NPHASES; ph++)
        own[ph] = iok_timeline_own(&p->tl, ph);
    own[IOK_NPHASES] = own_span;
    double *mk = own + IOK_NPHASES + 1;
    mk[IOK_MARK_OPEN] = p->open_start;
    mk[IOK_MARK_OPENED] = p->opened;
    mk[IOK_MARK_CLOSE] = p->close_start;
    mk[IOK_MARK_CLOSED] = p->close_end;
    mk[IOK_MARK_SUITE] = steps_common;
    mk[IOK_MARK_LOOP] = p->loop;
    mk[IOK_MARK_DONE] = p->done;
    double *all = run->rank == 0 ? malloc((size_t)run->nprocs * NOWN * sizeof *all) : NULL;
    int gather = run->rank != 0 || all != NULL;
    MPI_Bcast(&gather, 1, MPI_INT, 0, run->comm);
    if (gather)
        MPI_Gather(own, NOWN, MPI_DOUBLE, all, NOWN, MPI_DOUBLE, 0, run->comm);
    if (!all)
        return;
    out->rank_phase = malloc((size_t)run->nprocs * IOK_NPHASES * sizeof *out->rank_phase);
    out->rank_span = malloc((size_t)run->nprocs * sizeof *out->rank_span);
    out->rank_marks = malloc((size_t)run->nprocs * IOK_NMARKS * sizeof *out->rank_marks);
    for (int r = 0; out->rank_phase && out->rank_span && out->rank_marks && r < run->nprocs; r++) {
        memcpy(out->rank_phase + (size_t)r * IOK_NPHASES, all + (size_t)r * NOWN,
               IOK_NPHASES * sizeof *all);
        out->rank_span[r] = all[(size_t)r * NOWN + IOK_NPHASES];
        memcpy(out->rank_marks + (size_t)r * IOK_NMARKS, all + (size_t)r * NOWN + IOK_NPHASES + 1,
               IOK_NMARKS * sizeof *all);
    }
    free(all);
}

/* --async-reference: each step's time blocked in its post and its wait,
 * the slowest rank's (one reduction of steps_done numbers). The k-th post
 * and the k-th wait of a file's write pass are step k's, deferred or not;
 * a rank whose counts differ (an untimed step) adds nothing. */
static void
step_exposed(struct iok_pass *p, struct iok_pass_result *out)
{
    const struct iok_run *run = p->run;
    int n = out->steps_done;
    if (!run->core->async_reference || p->group || p->op != IOK_OP_WRITE || n < 1)
        return;
    double *own = calloc((size_t)n, sizeof *own);
    out->step_exposed = malloc((size_t)n * sizeof *out->step_exposed);
    int ok = own && out->step_exposed, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, run->comm);
    if (!all) {
        free(own);
        free(out->step_exposed);
        out->step_exposed = NULL;
        return;
    }
    const struct iok_timeline *tl = &p->tl;
    if (tl->n[IOK_PH_POST] == n && tl->n[IOK_PH_WAIT] == n)
        for (int i = 0; i < n; i++)
            own[i] = tl->t[IOK_PH_POST][2 * i + 1] - tl->t[IOK_PH_POST][2 * i] +
                     tl->t[IOK_PH_WAIT][2 * i + 1] - tl->t[IOK_PH_WAIT][2 * i];
    MPI_Allreduce(own, out->step_exposed, n, MPI_DOUBLE, MPI_MAX, run->comm);
    out->nstep_exposed = n;
    free(own);
}

void
iok_pass_reduce(struct iok_pass *p, const struct iok_osbytes *os0, const struct iok_osbytes *os1,
                struct iok_pass_result *out)
{
    const struct iok_run *run = p->run;
    MPI_Comm comm = run->comm;
    os_counts(comm, os0, os1, out);
    const int reads_only = !(p->group ? p->writes : p->op == IOK_OP_WRITE);
    if (reads_only &&
        !(run->backend->caps & IOK_CAP_NOIO)) /* each node's counts, for the verdict */
        iok_read_nodes(comm, p->f[0].path, p->bytes,
                       os0->read_bytes < 0 ? -1 : os1->read_bytes - os0->read_bytes, out);
    iok_timeline_reduce(&p->tl, comm, out->ph);
    double own_io = 0;
    for (int ph = 0; ph < IOK_NPHASES; ph++) {
        if (!iok_phase_is_io(ph))
            continue;
        out->phase_sum += out->ph[ph].job;
        for (int i = 0; i < p->tl.n[ph]; i++)
            own_io += p->tl.t[ph][2 * i + 1] - p->tl.t[ph][2 * i];
    }
    out->io_rank = iok_stat_reduce(own_io, comm);
    out->io_window = iok_stat_reduce(own_io + p->hidden, comm);
    double own_span, steps_common;
    spans(p, out, &own_span, &steps_common);
    int64_t in[4] = {p->bytes, p->nreq, p->checked, p->bad}, sum[4];
    MPI_Allreduce(in, sum, 4, MPI_INT64_T, MPI_SUM, comm);
    out->bytes = sum[0];
    out->requests = sum[1];
    out->checked = sum[2];
    out->mismatches = sum[3];
    out->rank_bytes = iok_stat_reduce((double)p->bytes, comm);
    out->own_bytes = p->bytes;
    out->bandwidth = out->io_time > 0 ? (double)out->bytes / out->io_time : 0;
    out->peak_rss = iok_stat_reduce((double)iok_mem_peak_bytes(), comm);
    out->peak_rss_proc = iok_stat_reduce((double)iok_mem_process_peak_bytes(), comm);
    MPI_Allreduce(&p->pending_max, &out->pending_bytes_max, 1, MPI_INT64_T, MPI_MAX, comm);
    step_exposed(p, out);
    per_rank(p, out, own_span, steps_common);
}

/* A write the file does not hold is no result, whatever the library said
 * (write_check.c, write_sample.c): each written file's kind, size and
 * sampled values; untimed, after the span. */
int
iok_pass_check_written(struct iok_pass *p, struct iok_pass_result *out)
{
    const struct iok_run *run = p->run;
    out->write_check_seconds = -1;
    if (run->backend->caps & IOK_CAP_NOIO)
        return IOK_OK;
    double tc = iok_now();
    int checked = 0;
    for (int i = 0; i < p->nfiles; i++) {
        struct iok_pass_file *f = &p->f[i];
        if (!(f->mode & IOK_PF_WRITE))
            continue;
        checked = 1;
        int64_t bytes = f->wbytes;
        if (!f->per_rank)
            MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_INT64_T, MPI_SUM, run->comm);
        int rc = f->mine ? iok_check_written_kind(f->path, run->backend->name, f->s) : IOK_OK;
        if (rc == IOK_OK)
            rc = iok_check_written(run->comm, f->path, f->mine, f->s, bytes);
        IOK_TRY(iok_agree(run->comm, rc));
        /* a stonewalled file holds fewer records than its schema: its kind
         * and size are checked, its values by --verify */
        if (f->sample && !out->stonewalled)
            IOK_TRY(iok_wsample_check(run, &f->params, f->path, f->s, !f->per_rank, f->sample));
    }
    if (checked) {
        tc = iok_now() - tc;
        MPI_Allreduce(&tc, &out->write_check_seconds, 1, MPI_DOUBLE, MPI_MAX, run->comm);
    }
    return IOK_OK;
}

/* The lowest rank with a mismatch names it (iok_agree prints it). */
int
iok_pass_mismatches(struct iok_pass *p, struct iok_pass_result *out)
{
    const struct iok_run *run = p->run;
    if (out->mismatches == 0)
        return IOK_OK;
    int mine = p->bad ? run->rank : run->nprocs, lowest;
    MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, run->comm);
    memcpy(out->first_bad, p->first_bad, sizeof p->first_bad);
    MPI_Bcast(out->first_bad, sizeof out->first_bad, MPI_CHAR, lowest, run->comm);
    const char *path = p->group ? out->path : p->f[0].path;
    int vrc =
        p->bad
            ? iok_error(IOK_EVERIFY, "verify failed: %lld of %lld values differ in %s; first: %s",
                        (long long)out->mismatches, (long long)out->checked, path, p->first_bad)
            : IOK_OK;
    return iok_agree(run->comm, vrc);
}
