/* SPDX-License-Identifier: BSD-3-Clause */
/* Generated E3SM decompositions: at the shipped sizes the dimensions equal
 * the shipped maps' and the per-rank requests after merging (min, max,
 * total) are close to theirs (side-by-side table printed); every element of
 * every decomposition belongs to exactly one rank for odd sizes too; the ne30
 * / 512-rank F case gives E3SM-IO's published figures; bad parameters are
 * refused with a reason. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "check.h"
#include "iokernels/error.h"
#include "kernels/e3sm_common/e3sm_gen.h"
#include "kernels/e3sm_common/e3sm_gen_stats.h"
#include "kernels/e3sm_common/e3sm_source.h"

#define MAPS IOK_DATA_DIR "/e3sm/"
#define LEGACY_G IOK_TEST_DATA "/e3sm/legacy_pre2022/g_case_cmpaso_16p.nc"

struct counts {
    int64_t min, max, total;
};

/* decomposition d of a map file: its dimensions and, per decomposition
 * rank, the requests after merging (runs[r], e3sm_runs_free each) */
static int
map_runs(const char *path, int d, int64_t *nprocs, int64_t *dims, int *ndims,
         struct e3sm_runs **runs)
{
    struct e3sm_src src;
    char name[64];
    int64_t n, npairs;
    if (e3sm_src_open(&src, path, MPI_COMM_SELF))
        return -1;
    snprintf(name, sizeof name, "D%d.dims", d + 1);
    *ndims = src.att(&src, name, dims, E3SM_MAX_DDIMS);
    snprintf(name, sizeof name, "D%d.nreqs", d + 1);
    src.var_len(&src, name, &n);
    snprintf(name, sizeof name, "D%d.offsets", d + 1);
    src.var_len(&src, name, &npairs);
    int64_t *nreqs = malloc((size_t)n * sizeof *nreqs), *off = malloc((size_t)npairs * 8),
            *len = malloc((size_t)npairs * 8);
    snprintf(name, sizeof name, "D%d.nreqs", d + 1);
    src.read(&src, name, 0, n, nreqs);
    snprintf(name, sizeof name, "D%d.offsets", d + 1);
    src.read(&src, name, 0, npairs, off);
    snprintf(name, sizeof name, "D%d.lengths", d + 1);
    src.read(&src, name, 0, npairs, len);
    src.close(&src);
    int64_t total = 1, at = 0;
    for (int k = 0; k < *ndims; k++)
        total *= dims[k];
    *runs = calloc((size_t)n, sizeof **runs);
    for (int64_t r = 0; r < n; r++) {
        char why[256];
        CHECK(!e3sm_runs_build(off + at, len + at, nreqs[r], dims[*ndims - 1], total, &(*runs)[r],
                               why, sizeof why),
              "%s D%d: %s", path, d + 1, why);
        at += nreqs[r];
    }
    *nprocs = n;
    free(nreqs), free(off), free(len);
    return 0;
}

static void
runs_free(struct e3sm_runs *runs, int64_t n)
{
    for (int64_t r = 0; r < n; r++)
        e3sm_runs_free(&runs[r]);
    free(runs);
}

/* per decomposition rank of a map file: its requests after merging */
static int
shipped_counts(const char *path, int d, int64_t *nprocs, int64_t *dims, int *ndims,
               struct counts *c)
{
    struct e3sm_runs *runs;
    if (map_runs(path, d, nprocs, dims, ndims, &runs))
        return -1;
    *c = (struct counts){INT64_MAX, 0, 0};
    for (int64_t r = 0; r < *nprocs; r++) {
        c->min = runs[r].n < c->min ? runs[r].n : c->min;
        c->max = runs[r].n > c->max ? runs[r].n : c->max;
        c->total += runs[r].n;
    }
    runs_free(runs, *nprocs);
    return 0;
}

/* The shipped G map is E3SM-IO's older 28,571-cell map cut to its first
 * ids: per decomposition and rank, the same runs as the whole map's below
 * the shipped dimension (cells, edges or vertices; levels whole). */
static void
shipped_is_cut_of(const char *small, const char *whole)
{
    for (int d = 0; d < 6; d++) {
        int64_t ns, nw, ds[E3SM_MAX_DDIMS], dw[E3SM_MAX_DDIMS];
        int nds, ndw;
        struct e3sm_runs *rs, *rw;
        if (map_runs(small, d, &ns, ds, &nds, &rs) || map_runs(whole, d, &nw, dw, &ndw, &rw)) {
            CHECK(0, "cannot read %s or %s", small, whole);
            return;
        }
        CHECK(ns == nw && nds == ndw && ds[0] <= dw[0] && (nds == 1 || ds[1] == dw[1]),
              "D%d: %lld/%lld ranks, %lld/%lld ids, or other levels", d + 1, (long long)ns,
              (long long)nw, (long long)ds[0], (long long)dw[0]);
        int64_t end = ds[0] * (nds == 2 ? ds[1] : 1), same = 0; /* elements below the cut */
        for (int64_t r = 0; r < ns && r < nw; r++) {
            int64_t k = 0, eq = 1;
            for (int64_t j = 0; j < rw[r].n && rw[r].off[j] < end; j++, k++) {
                int64_t len = rw[r].off[j] + rw[r].len[j] > end ? end - rw[r].off[j] : rw[r].len[j];
                eq &= k < rs[r].n && rs[r].off[k] == rw[r].off[j] && rs[r].len[k] == len;
            }
            same += eq && k == rs[r].n;
        }
        CHECK(same == ns, "D%d: %lld of %lld ranks of %s hold what %s gives them below %lld", d + 1,
              (long long)same, (long long)ns, small, whole, (long long)ds[0]);
        runs_free(rs, ns), runs_free(rw, nw);
    }
    printf("%s: %s cut to its first ids, rank by rank (D1-D6)\n", small, whole);
}

static struct counts
generated_counts(const struct e3sm_gen *g, int d)
{
    struct counts c = {INT64_MAX, 0, 0};
    for (int64_t r = 0; r < g->procs; r++) {
        struct e3sm_runs runs;
        char why[256];
        CHECK(!e3sm_gen_runs(g, d, r, 1, &runs, NULL, why, sizeof why), "%s D%d: %s", g->spec,
              d + 1, why);
        c.min = runs.n < c.min ? runs.n : c.min;
        c.max = runs.n > c.max ? runs.n : c.max;
        c.total += runs.n;
        e3sm_runs_free(&runs);
    }
    return c;
}

static int
near(int64_t got, int64_t want, double tol)
{
    return fabs((double)got - (double)want) <= tol * (double)want;
}

/* the generator at the shipped case's defaults against the shipped map;
 * loose: "D5.min", figures the model misses, held to LOOSE instead (and
 * named in the table); "D2.runs": a decomposition shown, not compared */
#define LOOSE 0.6
static void
against_shipped(const char *spec, const char *map, double tol, const char *loose)
{
    struct e3sm_gen g;
    char why[512];
    CHECK(!e3sm_gen_parse(spec, &g, why, sizeof why), "%s: %s", spec, why);
    printf("%s vs %s (tolerance %.0f%%)\n", g.spec, map, tol * 100);
    printf("      dims               shipped min/max/total     generated min/max/total\n");
    for (int d = 0; d < g.ndecomp; d++) {
        int64_t nprocs, dims[E3SM_MAX_DDIMS];
        int ndims;
        struct counts s, x = generated_counts(&g, d);
        if (shipped_counts(map, d, &nprocs, dims, &ndims, &s)) {
            CHECK(0, "cannot read %s", map);
            break;
        }
        CHECK(nprocs == g.procs, "%s: %lld ranks, generated %lld", map, (long long)nprocs,
              (long long)g.procs);
        CHECK(ndims == g.ndims[d], "D%d: %d dims, generated %d", d + 1, ndims, g.ndims[d]);
        char ds[64];
        int n = 0;
        for (int k = 0; k < ndims && k < g.ndims[d]; k++) {
            CHECK(dims[k] == g.dims[d][k], "D%d dim %d: shipped %lld, generated %lld", d + 1, k,
                  (long long)dims[k], (long long)g.dims[d][k]);
            n +=
                snprintf(ds + n, sizeof ds - (size_t)n, "%s%lld", k ? "x" : "", (long long)dims[k]);
        }
        char kmin[16], kmax[16];
        snprintf(kmin, sizeof kmin, "D%d.min", d + 1);
        snprintf(kmax, sizeof kmax, "D%d.max", d + 1);
        double tmin = strstr(loose, kmin) ? LOOSE : tol, tmax = strstr(loose, kmax) ? LOOSE : tol;
        printf("  D%d  %-16s %7lld %6lld %9lld     %7lld %6lld %9lld%s%s\n", d + 1, ds,
               (long long)s.min, (long long)s.max, (long long)s.total, (long long)x.min,
               (long long)x.max, (long long)x.total,
               tmin > tol ? "   (min: a known gap, held to 60%)" : "",
               tmax > tol ? "   (max: a known gap, held to 60%)" : "");
        char kruns[16];
        snprintf(kruns, sizeof kruns, "D%d.runs", d + 1);
        if (strstr(loose, kruns)) { /* shown only */
            printf("      (D%d: shown only: the runs follow the mesh's numbering, not modeled)\n",
                   d + 1);
            continue;
        }
        CHECK(near(x.min, s.min, tmin) && near(x.max, s.max, tmax) && near(x.total, s.total, tol),
              "%s D%d: generated %lld/%lld/%lld, shipped %lld/%lld/%lld", g.spec, d + 1,
              (long long)x.min, (long long)x.max, (long long)x.total, (long long)s.min,
              (long long)s.max, (long long)s.total);
    }
    e3sm_gen_free(&g);
}

/* all ranks' runs of each decomposition: every element exactly once */
static void
covers_once(const char *spec)
{
    struct e3sm_gen g;
    char why[512];
    CHECK(!e3sm_gen_parse(spec, &g, why, sizeof why), "%s: %s", spec, why);
    for (int d = 0; d < g.ndecomp; d++) {
        struct e3sm_runs all;
        int64_t total = 1;
        for (int k = 0; k < g.ndims[d]; k++)
            total *= g.dims[d][k];
        int bad = e3sm_gen_runs(&g, d, 0, g.procs, &all, NULL, why, sizeof why);
        CHECK(!bad, "%s D%d: overlapping or out of range: %s", g.spec, d + 1, why);
        if (!bad)
            CHECK(all.nelems == total, "%s D%d: %lld of %lld elements", g.spec, d + 1,
                  (long long)all.nelems, (long long)total);
        e3sm_runs_free(&all);
    }
    e3sm_gen_free(&g);
}

static void
refused(const char *spec, const char *msg)
{
    struct e3sm_gen g;
    char why[512] = "";
    CHECK(e3sm_gen_parse(spec, &g, why, sizeof why) != 0, "%s accepted", spec);
    CHECK(strstr(why, msg) != NULL, "%s: '%s' lacks '%s'", spec, why, msg);
    e3sm_gen_free(&g);
}

/* ne30 on 512 ranks, 3 records: E3SM-IO's README sample output */
static void
ne30_figures(void)
{
    struct e3sm_gen_stats s;
    int rc = e3sm_gen_stats("f:ne=30,procs=512", 3, IOK_DATA_DIR "/e3sm", &s);
    CHECK(rc == IOK_OK, "stats: %s", iok_errmsg());
    if (rc)
        return;
    e3sm_gen_stats_print(&s, stdout);
    const double MiB = 1048576.0;
    CHECK(s.dims[0][0] == 48602 && s.dims[2][0] == 72, "ne30 dims %lld", (long long)s.dims[0][0]);
    CHECK(fabs(s.f[0].write_bytes / MiB - 2699.36) < 0.005 * 2699.36, "h0 %.2f MiB",
          s.f[0].write_bytes / MiB);
    CHECK(near(s.f[0].e3smio_max_reqs, 310464, 0.15), "h0 max requests %lld",
          (long long)s.f[0].e3smio_max_reqs);
    CHECK(fabs(s.f[1].write_bytes / MiB - 52.30) < 0.005 * 52.30, "h1 %.2f MiB",
          s.f[1].write_bytes / MiB);
    CHECK(near(s.f[1].e3smio_max_reqs, 5888, 0.15), "h1 max requests %lld",
          (long long)s.f[1].e3smio_max_reqs);
}

int
main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* the dimensions the models give */
    struct e3sm_gen g;
    char why[512];
    const int64_t ne[3] = {4, 30, 120}, ncol[3] = {866, 48602, 777602};
    for (int i = 0; i < 3; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "f:ne=%lld,procs=1", (long long)ne[i]);
        CHECK(!e3sm_gen_parse(spec, &g, why, sizeof why), "%s: %s", spec, why);
        CHECK(g.dims[0][0] == ncol[i] && g.dims[1][0] == ncol[i] && g.dims[2][1] == ncol[i],
              "%s: %lld columns", spec, (long long)g.dims[0][0]);
        e3sm_gen_free(&g);
    }
    against_shipped("f", MAPS "map_f_case_16p.nc", 0.15, "");
    /* G: the shipped map is not a 285-cell mesh's decomposition but the
     * first 285 cells, 879 edges and 593 vertices of E3SM-IO's older
     * 28,571-cell map, each with its owner there (checked here): a rank of
     * it holds a scattered handful, ranks 7 and 8 only 2 and 3 of the 98
     * cells that own six vertices each (13 and 14 vertices), where any
     * compact region of a 285-cell mesh holds about a third (the generated
     * fewest is 3, 20 vertices: held to 60%). The generator's whole mesh at
     * that size against that whole map: cells, edges and vertices per rank
     * within 25%; its D1 and D2 runs are shown only (the real mesh numbers
     * a rank's edges one by one: 62,606 runs of 87,980 edges). */
    against_shipped("g", MAPS "map_g_case_16p.nc", 0.25, "D5.min");
    shipped_is_cut_of(MAPS "map_g_case_16p.nc", LEGACY_G);
    against_shipped("g:cells=28571,edges=87980,vertices=59329", LEGACY_G, 0.25, "D1.runs D2.runs");
    against_shipped("i", MAPS "map_i_case_16p.nc", 0.25, "");
    covers_once("f");
    covers_once("f:ne=3,procs=7");
    covers_once("f:ne=2,procs=50"); /* more ranks than elements */
    covers_once("f:ne=5,np=3,nlev=4,pcols=4,procs=13");
    covers_once("g");
    covers_once("g:cells=1000,nlev=3,procs=7");
    covers_once("g:cells=50,procs=64"); /* more ranks than cells */
    covers_once("i");
    covers_once("i:nlat=10,nlon=20,land=77,levels=2/1/3/1,procs=9");
    covers_once("i:nlat=4,nlon=4,procs=40");
    ne30_figures();
    refused("x:ne=4", "give the case first");
    refused("f:nx=4", "unknown parameter 'nx'");
    refused("f:ne=0", "ne=0 must be an integer in 1..");
    refused("f:ne", "is not KEY=VALUE");
    refused("g:cells=300,edges=100", "with its walls");
    refused("i:nlat=4,nlon=4,land=17", "exceeds the 4 x 4 grid");
    refused("i:levels=1/2/3", "four sub-grid level counts");
    printf("%d checks, %d failed\n", check_count, check_failures);
    MPI_Finalize();
    return check_failures != 0;
}
