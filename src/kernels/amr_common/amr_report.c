/* The "-- iokernels --" block of the AMR kernels' reports. */
#include "amr_report.h"

#include <stdlib.h>

void
amr_report_suite(const struct iok_run *run, const struct iok_result *res, FILE *out)
{
    const double MiB = 1048576.0;
    fprintf(out, "-- iokernels --\n");
    fprintf(out, "backend                  : %s (%s), %s\n", run->backend->name,
            run->backend->version(), run->collective ? "collective" : "independent");
    fprintf(out, "input parsing + planning : %12.4f s\n", res->parse_time);
    for (int i = 0; i < res->npasses; i++) {
        const struct iok_pass_result *p = &res->pass[i];
        fprintf(out, "%-6s %s: %.2f MiB in %.4f s, %.2f MiB/s\n", iok_op_names[p->op], p->path,
                p->bytes / MiB, p->io_time, p->bandwidth / MiB);
        fprintf(out, "       requests %.4f s, data generation %.4f s, check %.4f s (not I/O)\n",
                p->ph[IOK_PH_REQUESTS].rank.max, p->ph[IOK_PH_DATAGEN].rank.max,
                p->ph[IOK_PH_CHECK].rank.max);
        fprintf(out, "       peak memory per rank (MiB): min %.1f avg %.1f max %.1f\n",
                p->peak_rss.min / MiB, p->peak_rss.avg / MiB, p->peak_rss.max / MiB);
        if (p->op != IOK_OP_WRITE && (run->core.verify || p->op == IOK_OP_VERIFY))
            fprintf(out, "       verify: %lld values checked, %lld mismatches%s%s\n",
                    (long long)p->checked, (long long)p->mismatches,
                    p->first_bad[0] ? "; first: " : "", p->first_bad);
        if (p->ceiling.measured)
            fprintf(out,
                    "       ceiling (contiguous MPI-IO write of the same bytes): %.2f MiB/s; "
                    "this run: %.1f%% of it\n",
                    p->ceiling.bandwidth / MiB, 100.0 * p->bandwidth / p->ceiling.bandwidth);
    }
}

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
