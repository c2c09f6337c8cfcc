/* SPDX-License-Identifier: BSD-3-Clause */
/* What a mix takes from one member's run (main.c's run_kernel on the
 * member's ranks): its I/O time, its passes' windows for the overlap, and
 * its JSON record, on the member's rank 0. */
#include <float.h>
#include <stdlib.h>

#include "core.h"
#include "iokernels/error.h"

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

int
iok_member_collect(struct iok_member_run *m, const struct iok_run *run,
                   const struct iok_result *res, const struct iok_json_input *in)
{
    iok_member_run_free(m);
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
