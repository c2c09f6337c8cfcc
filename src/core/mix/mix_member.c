/* SPDX-License-Identifier: BSD-3-Clause */
/* What a mix takes from one member's run (main.c's run_kernel on the
 * member's ranks): its I/O time, its passes' windows for the overlap, and
 * its JSON record, on the member's rank 0. */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/mix/mix.h"
#include "core/record/record.h"
#include "iokernels/error.h"
#include "iokernels/kernel.h"

void
iok_member_run_free(struct iok_member_run *m)
{
    free(m->win_start);
    free(m->win_end);
    free(m->win_bytes);
    free(m->record);
    m->win_start = m->win_end = m->win_bytes = NULL;
    m->record = NULL;
    m->npass = 0;
    m->io_seconds = 0;
}

/* The outputs the member's first run created: the paths this rank removes
 * before a later run (rank 0 a shared file, every rank its own). */
static void
note_made(struct iok_member_run *m, const struct iok_run *run, const struct iok_plan *plan,
          const struct iok_result *res)
{
    m->made_set = 1;
    m->made = calloc((size_t)res->npasses + 1, sizeof *m->made);
    for (int i = 0; m->made && i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        const struct iok_file_plan *fp = &plan->files[p->file];
        if (p->op != IOK_OP_WRITE || !p->created || p->iteration != 0)
            continue;
        if (fp->per_rank)
            snprintf(m->made[m->nmade++], sizeof *m->made, "%s.%d", fp->path, run->rank);
        else if (run->rank == 0)
            snprintf(m->made[m->nmade++], sizeof *m->made, "%s", fp->path);
    }
}

int
iok_member_remove_made(struct iok_member_run *m, const struct iok_run *run)
{
    int rc = IOK_OK;
    for (int i = 0; i < m->nmade && rc == IOK_OK; i++)
        if (iok_remove_output(m->made[i]) != 0 && errno != ENOENT)
            rc = iok_error(IOK_EIO,
                           "cannot remove %s, the mix's previous output, before the next "
                           "run (%s)",
                           m->made[i], strerror(errno));
    return iok_agree(run->comm, rc);
}

int
iok_member_collect(struct iok_member_run *m, const struct iok_run *run, const struct iok_plan *plan,
                   const struct iok_result *res, const struct iok_json_input *in)
{
    iok_member_run_free(m);
    if (!m->made_set)
        note_made(m, run, plan, res);
    int rc = in ? iok_json_line(in, &m->record) : IOK_OK; /* collective */
    if (rc || run->rank != 0)
        return rc;
    int n = res->npasses;
    m->win_start = malloc((size_t)(n + 1) * sizeof *m->win_start);
    m->win_end = malloc((size_t)(n + 1) * sizeof *m->win_end);
    m->win_bytes = malloc((size_t)(n + 1) * sizeof *m->win_bytes);
    if (!m->win_start || !m->win_end || !m->win_bytes)
        return iok_error(IOK_EIO, "out of memory for the mix's windows");
    for (int i = 0; i < n; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        m->io_seconds += p->io_time;
        /* the pass's window: the earliest open start to the latest close
         * end over the member's ranks, on its clock (its rank 0's) */
        double s = DBL_MAX, e = -DBL_MAX;
        for (int r = 0; p->rank_marks && r < run->nprocs; r++) {
            const double *mk = p->rank_marks + (size_t)r * IOK_NMARKS;
            s = mk[IOK_MARK_OPEN] < s ? mk[IOK_MARK_OPEN] : s;
            e = mk[IOK_MARK_CLOSED] > e ? mk[IOK_MARK_CLOSED] : e;
        }
        if (!p->rank_marks)
            continue;
        m->win_start[m->npass] = s;
        m->win_end[m->npass] = e;
        m->win_bytes[m->npass++] = (double)p->bytes;
    }
    return IOK_OK;
}
