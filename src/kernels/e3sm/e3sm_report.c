/* SPDX-License-Identifier: BSD-3-Clause */
/* The e3sm report: per history file and pass, the original's block (from
 * "==== Benchmarking F case ====" to the bandwidth lines), its numbers taken
 * from the core's measured phases; then what the original lacks. */
#include <stdio.h>
#include <string.h>

#include "e3sm_kernel.h"

static const double MiB = 1048576.0, GiB = 1073741824.0;

static const char *
strategy_line(const struct iok_run *run, int rearrange, int blob)
{
    const char *be = run->backend->name;
    if (blob)
        return !strcmp(be, "pnetcdf") ? "==== PnetCDF blob I/O ================================"
               : !strcmp(be, "hdf5")  ? "==== HDF5 blob I/O ==================================="
                                      : "==== blob I/O ========================================";
    if (rearrange)
        return "==== canonical I/O with the box rearranger ===========";
    if (!strcmp(be, "pnetcdf"))
        return "==== PnetCDF canonical I/O using varn API ============";
    if (!strcmp(be, "hdf5"))
        return "==== HDF5 canonical I/O ==============================";
    if (!strcmp(be, "netcdf4"))
        return "==== NetCDF-4 canonical I/O ==========================";
    if (!strcmp(be, "mpiio"))
        return "==== MPI-IO canonical I/O (raw, no header) ===========";
    return "==== canonical I/O ===================================";
}

static void
pass_block(const struct e3sm_opts *o, const struct iok_run *run, const struct iok_plan *plan,
           const struct iok_pass_result *p, FILE *out)
{
    const struct e3sm_state *st = plan->priv;
    const struct iok_schema *s = &plan->files[p->file].schema;
    int f = p->file, w = p->op == IOK_OP_WRITE, nd = st->dec.ndecomp;
    const char *rw = w ? "write" : "read";
    fprintf(out, "==== Benchmarking %s case =============================\n",
            e3sm_case_name(st->cid));
    fprintf(out, "Total number of MPI processes      = %d\n", run->nprocs);
    fprintf(out, "Number of IO processes             = %d\n", st->nio);
    fprintf(out, "Input decomposition file           = %s\n", st->decomp_path);
    fprintf(out, "Number of decompositions           = %d\n", nd);
    fprintf(out, "%s file/directory%s              = %s\n", w ? "Output" : "Input", w ? "" : " ",
            w          ? o->out
            : o->in[0] ? o->in
                       : o->out);
    if (w) /* the original's -u; it prints the line for writes only */
        fprintf(out, "Fill mode                          = %s\n",
                o->missing != E3SM_MISSING_SKIP ? "enabled" : "disabled");
    fprintf(out, "Using noncontiguous %s buffer   = no\n", w ? "write" : "read ");
    fprintf(out, "Variable %s order: %s\n", rw,
            o->two_d_first ? "2D variables then 3D variables" : "same as variables are defined");
    fprintf(out, "%s\n", strategy_line(run, st->rearrange, st->blob));
    if (st->blob) {
        fprintf(out, "History %s subfile             = %s (of %d)\n", w ? "output" : "input ",
                p->path, st->bl.ngroups);
        fprintf(out, "Number of subfiles                 = %d\n", st->bl.ngroups);
    } else {
        fprintf(out, "History %s file                = %s\n", w ? "output" : "input ", p->path);
    }
    fprintf(out, "No. variables use no decomposition = %6d\n", st->nvars_d[f][0]);
    for (int i = 1; i <= nd; i++)
        fprintf(out, "No. variables use decomposition D%d = %6d\n", i, st->nvars_d[f][i]);
    fprintf(out, "Total no. climate variables        = %6d\n", s->nvars);
    fprintf(out, "Total no. noncontiguous requests   = %6lld\n", (long long)st->sum_reqs[f]);
    fprintf(out, "Max   no. noncontiguous requests   = %6lld\n", (long long)st->max_reqs[f]);
    fprintf(out, "Min   no. noncontiguous requests   = %6lld\n", (long long)st->min_reqs[f]);
    fprintf(out, "%s no. records (time dim)       = %6d\n", w ? "Write" : "Read ",
            plan->files[f].nsteps);
    fprintf(out, "I/O flush frequency                = %6d\n", 1);
    fprintf(out, "No. I/O flush calls                = %6d\n", plan->files[f].nsteps);
    fprintf(out, "-----------------------------------------------------------\n");
    /* The original's timers: a barrier before each phase, each rank's own
     * time per phase, the maximum over ranks; TOTAL is each rank's open to
     * close (its request preparation included), the maximum over ranks. */
    double opendef = 0, prep = 0, post = 0, wait = 0, total = 0, wonly = 0;
    for (int r = 0; p->rank_phase && p->rank_span && r < run->nprocs; r++) {
        const double *ph = p->rank_phase + (size_t)r * IOK_NPHASES;
        double v[6] = {ph[IOK_PH_OPEN] + ph[IOK_PH_DEFINE],
                       ph[IOK_PH_REQUESTS] + ph[IOK_PH_EXCHANGE],
                       ph[IOK_PH_POST],
                       ph[IOK_PH_WAIT] + ph[IOK_PH_FLUSH],
                       p->rank_span[r] + ph[IOK_PH_REQUESTS],
                       ph[IOK_PH_POST] + ph[IOK_PH_WAIT] + ph[IOK_PH_FLUSH]};
        double *m[6] = {&opendef, &prep, &post, &wait, &total, &wonly};
        for (int k = 0; k < 6; k++)
            if (v[k] > *m[k])
                *m[k] = v[k];
    }
    int pnc = !strcmp(run->backend->name, "pnetcdf");
    char lpost[64], lwait[64];
    snprintf(lpost, sizeof lpost, "Max Time of %s",
             pnc ? (w ? "ncmpi_iput_varn" : "ncmpi_iget_varn")
                 : (w ? "posting write requests" : "posting read requests"));
    snprintf(lwait, sizeof lwait, "Max Time of %s",
             pnc ? "ncmpi_wait_all" : (w ? "write flushing" : "read flushing"));
    fprintf(out, "Total %s amount                 = %.2f MiB = %.2f GiB\n", w ? "write" : "read ",
            p->bytes / MiB, p->bytes / GiB);
    fprintf(out, "Max number of requests             = %lld\n", (long long)st->max_reqs[f]);
    fprintf(out, "Max Time of open + metadata define = %.4f sec\n", opendef);
    fprintf(out, "Max Time of I/O preparing          = %.4f sec\n", prep);
    fprintf(out, "%-34s = %.4f sec\n", lpost, post);
    fprintf(out, "%-34s = %.4f sec\n", lwait, wait);
    fprintf(out, "Max Time of close                  = %.4f sec\n", p->ph[IOK_PH_CLOSE].rank.max);
    fprintf(out, "Max Time of TOTAL                  = %.4f sec\n", total);
    fprintf(out, "I/O bandwidth (open-to-close)      = %.4f MiB/sec\n",
            total > 0 ? p->bytes / MiB / total : 0.0);
    fprintf(out, "I/O bandwidth (%s-only)         = %.4f MiB/sec\n", w ? "write" : "read ",
            wonly > 0 ? p->bytes / MiB / wonly : 0.0);
    fprintf(out, "-----------------------------------------------------------\n");
}

void
e3sm_report(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
            const struct iok_result *res, FILE *out)
{
    const struct e3sm_opts *o = kopts;
    for (int i = 0; i < res->npasses; i++)
        pass_block(o, run, plan, &res->pass[i], out);
    if (!o->keep && o->out[0])
        fprintf(out, "output files removed at the end of the run (-k keeps them)\n");
}
