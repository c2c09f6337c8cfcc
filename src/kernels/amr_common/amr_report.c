/* SPDX-License-Identifier: BSD-3-Clause */
/* Report lines shared by the AMR kernels: the levels of the hierarchy. */
#include "amr_report.h"

#include <stdlib.h>

void
amr_report_levels(const struct amr_hier *h, int nprocs, FILE *out)
{
    int *per = calloc((size_t)nprocs, sizeof *per);
    for (int l = 0; l < h->nlevels; l++) {
        const struct amr_level *L = &h->lev[l];
        int lo = 0, hi = 0;
        if (per) {
            for (int r = 0; r < nprocs; r++)
                per[r] = 0;
            for (int i = 0; i < L->nboxes; i++)
                if (L->procs[i] >= 0 && L->procs[i] < nprocs)
                    per[L->procs[i]]++;
            lo = hi = per[0];
            for (int r = 1; r < nprocs; r++) {
                lo = per[r] < lo ? per[r] : lo;
                hi = per[r] > hi ? per[r] : hi;
            }
        }
        fprintf(out,
                "level %d: domain (%d,%d,%d)-(%d,%d,%d), %d boxes, %lld cells, boxes per rank "
                "%d..%d\n",
                l, L->domain.lo[0], L->domain.lo[1], L->domain.lo[2], L->domain.hi[0],
                L->domain.hi[1], L->domain.hi[2], L->nboxes,
                (long long)(L->offsets[L->nboxes] / (h->ncomp ? h->ncomp : 1)), lo, hi);
    }
    free(per);
}
