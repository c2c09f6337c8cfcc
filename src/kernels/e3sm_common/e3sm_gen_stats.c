/* SPDX-License-Identifier: BSD-3-Clause */
/* Statistics of a generated decomposition over all its ranks, in one
 * process: per decomposition the merged runs (requests) and elements per
 * rank; per history file the requests and bytes per rank over all records,
 * as the e3sm kernel would issue them (a decomposed variable: one request
 * per run and record; a variable without decomposition: rank 0, one per
 * record), and E3SM-IO's "Max number of requests" (one record of the
 * decomposed record variables, the busiest rank). */
#include "e3sm_gen_stats.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "e3sm_schema.h"
#include "iokernels/error.h"
#include "iokernels/input.h"

static int
cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static struct e3sm_mmm
mmm(const int64_t *v, int64_t n)
{
    struct e3sm_mmm m = {0};
    int64_t *s = malloc((size_t)(n ? n : 1) * sizeof *s);
    if (!s || n == 0) {
        free(s);
        return m;
    }
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp64);
    m.min = s[0];
    m.med = s[n / 2];
    m.max = s[n - 1];
    for (int64_t i = 0; i < n; i++)
        m.total += s[i];
    free(s);
    return m;
}

static char *
slurp(const char *dir, const char *name)
{
    char path[4096], *t = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    iok_read_text(path, "E3SM schema file (data/e3sm of the suite's data)", &t);
    return t;
}

/* per rank and decomposition: runs and elements */
struct walk {
    int64_t *runs[E3SM_MAX_DECOMP], *elems[E3SM_MAX_DECOMP];
};

static int
walk_ranks(const struct e3sm_gen *g, struct walk *w)
{
    for (int d = 0; d < g->ndecomp; d++) {
        w->runs[d] = malloc((size_t)g->procs * sizeof(int64_t));
        w->elems[d] = malloc((size_t)g->procs * sizeof(int64_t));
        if (!w->runs[d] || !w->elems[d])
            return iok_error(IOK_EIO, "out of memory for %lld ranks", (long long)g->procs);
        for (int64_t r = 0; r < g->procs; r++) {
            struct e3sm_runs runs;
            char why[256];
            if (e3sm_gen_runs(g, d, r, 1, &runs, NULL, why, sizeof why))
                return iok_error(IOK_EIO, "--generate %s: D%d rank %lld: %s", g->spec, d + 1,
                                 (long long)r, why);
            w->runs[d][r] = runs.n;
            w->elems[d][r] = runs.nelems;
            e3sm_runs_free(&runs);
        }
    }
    return IOK_OK;
}

/* one history file: per-rank requests and bytes from the walk */
static int
file_stats(const struct e3sm_gen *g, const struct walk *w, const char *cdl, const char *tsv,
           const struct e3sm_hist *h, const struct e3sm_decomps *dec, int nrecs,
           struct e3sm_gen_fstat *fs)
{
    struct iok_schema s;
    int *vd = NULL;
    char why[512];
    iok_schema_init(&s);
    if (e3sm_schema_build(cdl, tsv, h, dec, nrecs, &s, &vd, why, sizeof why)) {
        iok_schema_free(&s);
        return iok_error(IOK_EUSAGE, "%s: %s", g->spec, why);
    }
    /* per decomposition: requests per run, bytes per element; rank 0's own */
    double req[E3SM_MAX_DECOMP + 1] = {0}, byt[E3SM_MAX_DECOMP + 1] = {0};
    int64_t one[E3SM_MAX_DECOMP + 1] = {0};
    fs->name = h->name;
    fs->nvars = s.nvars;
    fs->size_bytes = 0;
    for (int v = 0; v < s.nvars; v++) {
        int rec = iok_var_is_record(&s, v), recs = rec ? nrecs : 1, dn = vd[v];
        double sz = (double)iok_type_size(s.vars[v].type);
        fs->size_bytes += (double)iok_var_total_elems(&s, v) * sz;
        req[dn] += recs;
        byt[dn] += recs * sz * (dn ? 1.0 : (double)iok_var_record_elems(&s, v));
        one[dn] += dn && rec;
    }
    int64_t *rq = malloc((size_t)g->procs * sizeof *rq),
            *by = malloc((size_t)g->procs * sizeof *by);
    if (!rq || !by) {
        free(rq), free(by), free(vd);
        iok_schema_free(&s);
        return iok_error(IOK_EIO, "out of memory for %lld ranks", (long long)g->procs);
    }
    fs->write_bytes = 0;
    fs->e3smio_max_reqs = 0;
    for (int64_t r = 0; r < g->procs; r++) {
        double q = r == 0 ? req[0] : 0, b = r == 0 ? byt[0] : 0;
        int64_t e = 0;
        for (int d = 1; d <= g->ndecomp; d++) {
            q += req[d] * (double)w->runs[d - 1][r];
            b += byt[d] * (double)w->elems[d - 1][r];
            e += one[d] * w->runs[d - 1][r];
        }
        rq[r] = (int64_t)q;
        by[r] = (int64_t)b;
        fs->write_bytes += b;
        if (e > fs->e3smio_max_reqs)
            fs->e3smio_max_reqs = e;
    }
    fs->reqs = mmm(rq, g->procs);
    fs->bytes = mmm(by, g->procs);
    free(rq), free(by), free(vd);
    iok_schema_free(&s);
    return IOK_OK;
}

int
e3sm_gen_stats(const char *spec, int nrecs, const char *cdl_dir, struct e3sm_gen_stats *out)
{
    memset(out, 0, sizeof *out);
    struct e3sm_gen g;
    char why[512];
    double t0 = MPI_Wtime();
    if (e3sm_gen_parse(spec, &g, why, sizeof why)) {
        e3sm_gen_free(&g);
        return iok_error(IOK_EUSAGE, "%s", why);
    }
    double t1 = MPI_Wtime();
    struct walk w = {{0}};
    int rc = walk_ranks(&g, &w);
    out->setup_seconds = t1 - t0;
    out->walk_seconds = MPI_Wtime() - t1;
    snprintf(out->spec, sizeof out->spec, "%s", g.spec);
    out->procs = g.procs;
    out->ndecomp = g.ndecomp;
    out->nrecs = nrecs;
    memcpy(out->ndims, g.ndims, sizeof out->ndims);
    memcpy(out->dims, g.dims, sizeof out->dims);
    for (int d = 0; rc == IOK_OK && d < g.ndecomp; d++) {
        out->runs[d] = mmm(w.runs[d], g.procs);
        out->elems[d] = mmm(w.elems[d], g.procs);
    }
    /* the history files, from a decomposition set with the dimensions only */
    struct e3sm_decomps dec = {0};
    dec.ndecomp = g.ndecomp;
    for (int d = 0; d < g.ndecomp; d++) {
        dec.d[d].ndims = g.ndims[d];
        memcpy(dec.d[d].dims, g.dims[d], sizeof dec.d[d].dims);
    }
    enum e3sm_case_id cid;
    const struct e3sm_hist *hist;
    int nhist = 0;
    if (rc == IOK_OK && e3sm_case_detect(&dec, &cid, &hist, &nhist, why, sizeof why))
        rc = iok_error(IOK_EUSAGE, "%s: %s", g.spec, why);
    char *tsv = rc == IOK_OK ? slurp(cdl_dir, "variables.tsv") : NULL;
    if (rc == IOK_OK && !tsv)
        rc = IOK_EUSAGE;
    if (rc == IOK_OK)
        out->casename = e3sm_case_name(cid);
    for (int h = 0; rc == IOK_OK && h < nhist; h++) {
        char *cdl = slurp(cdl_dir, hist[h].cdl);
        rc = cdl ? file_stats(&g, &w, cdl, tsv, &hist[h], &dec, nrecs, &out->f[h]) : IOK_EUSAGE;
        free(cdl);
        out->nfiles = h + 1;
    }
    free(tsv);
    for (int d = 0; d < E3SM_MAX_DECOMP; d++)
        free(w.runs[d]), free(w.elems[d]);
    e3sm_gen_free(&g);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    out->peak_mib = (double)ru.ru_maxrss / 1024.0; /* kilobytes on Linux */
    return rc;
}

static void
print_mmm(FILE *out, const struct e3sm_mmm *m)
{
    fprintf(out, "%10lld %10lld %10lld %14lld", (long long)m->min, (long long)m->med,
            (long long)m->max, (long long)m->total);
}

void
e3sm_gen_stats_print(const struct e3sm_gen_stats *s, FILE *out)
{
    const double MiB = 1048576.0;
    fprintf(out, "generated %s (%s case), %lld ranks\n", s->spec, s->casename, (long long)s->procs);
    fprintf(out,
            "per rank, after merging as E3SM-IO:   min     median        max          total\n");
    for (int d = 0; d < s->ndecomp; d++) {
        char dims[96];
        int n = 0;
        for (int k = 0; k < s->ndims[d]; k++)
            n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%lld", k ? " x " : "",
                          (long long)s->dims[d][k]);
        fprintf(out, "D%d %-18s requests  ", d + 1, dims);
        print_mmm(out, &s->runs[d]);
        fprintf(out, "\n   %-18s elements  ", "");
        print_mmm(out, &s->elems[d]);
        fputc('\n', out);
    }
    for (int f = 0; f < s->nfiles; f++) {
        const struct e3sm_gen_fstat *x = &s->f[f];
        fprintf(out, "history file %s, %d variables, %d record%s: %.2f MiB of data\n", x->name,
                x->nvars, s->nrecs, s->nrecs == 1 ? "" : "s", x->size_bytes / MiB);
        fprintf(out, "   requests per rank (all records) ");
        print_mmm(out, &x->reqs);
        fprintf(out, "\n   bytes per rank                  ");
        print_mmm(out, &x->bytes);
        fprintf(out, "\n   Total write amount                 = %.2f MiB = %.2f GiB\n",
                x->write_bytes / MiB, x->write_bytes / (1024.0 * MiB));
        fprintf(out,
                "   Max number of requests (E3SM-IO: one record, decomposed record "
                "variables) = %lld\n",
                (long long)x->e3smio_max_reqs);
    }
    fprintf(out, "generator: tables %.3f s, all %lld ranks' runs %.3f s, peak memory %.1f MiB\n",
            s->setup_seconds, (long long)s->procs, s->walk_seconds, s->peak_mib);
}
