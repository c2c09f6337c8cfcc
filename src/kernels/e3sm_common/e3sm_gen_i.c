/* SPDX-License-Identifier: BSD-3-Clause */
/* I case (ELM, the land model on a lat-lon grid):
 *
 * - an nlat x nlon grid (96 x 144 shipped), `land` of its cells land: those
 *   where a smooth field of continents is highest (a polar cap in the south,
 *   a few large masses elsewhere), so that land comes in contiguous stretches
 *   of rows as real coasts do.
 * - the land cells, in grid order, are cut into clumps of 9 (the shipped
 *   map's longest runs) dealt to the ranks in turn, as ELM's round robin of
 *   clumps: a rank's cells are spread over the globe in short runs.
 * - E3SM-IO's decomposition maps also give the cells no rank holds (the
 *   ocean) to ranks, so that every element is written (Dn.fill_starts): the
 *   grid is cut into procs equal ranges and each rank writes the ocean cells
 *   of its range.
 * - D1 is (nlat, nlon), D2..D5 the same at every sub-grid level:
 *   (levels, nlat, nlon) with 15, 10, 9 and 17 levels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e3sm_gen_case.h"

#define CLUMP 9
#define COAST 0.35 /* small-scale raggedness of the coasts: islands, bays */

enum { T_MASK, T_LAND, T_N };

struct cellv {
    double v;
    int64_t at;
};

static int
cmp_desc(const void *a, const void *b)
{
    const struct cellv *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static double
continents(double lat, double lon)
{
    double f = lat < -62.0 ? 4.0 : 0.0; /* the southern cap */
    f += 0.9 * sin(lon + 0.7) * cos(lat * M_PI / 180.0);
    f += 0.6 * sin(2.0 * lon - 1.3) * cos(2.0 * lat * M_PI / 180.0 + 0.4);
    f += 0.4 * sin(3.0 * lat * M_PI / 180.0 + 0.5);
    f += 0.25 * cos(5.0 * lon + 3.0 * lat * M_PI / 180.0);
    return f;
}

static int
i_setup(struct e3sm_gen *g, char *err, size_t errlen)
{
    /* land: the shipped grid's proportion unless given, 5663 cells of 96 x 144 */
    if (g->land < 0)
        g->land = (g->nlat * g->nlon * 5663 + 6912) / 13824;
    if (g->land > g->nlat * g->nlon) {
        snprintf(err, errlen, "land=%lld exceeds the %lld x %lld grid", (long long)g->land,
                 (long long)g->nlat, (long long)g->nlon);
        return -1;
    }
    int64_t n = g->nlat * g->nlon;
    void **t = calloc(T_N + 1, sizeof *t);
    unsigned char *mask = calloc((size_t)n, 1);
    int64_t *land = malloc((size_t)g->land * sizeof *land);
    struct cellv *cv = malloc((size_t)n * sizeof *cv);
    if (!t || !mask || !land || !cv) {
        free(t), free(mask), free(land), free(cv);
        snprintf(err, errlen, "out of memory for a %lld x %lld grid", (long long)g->nlat,
                 (long long)g->nlon);
        return -1;
    }
    for (int64_t at = 0; at < n; at++) {
        double lat = -90.0 + 180.0 * ((double)(at / g->nlon) + 0.5) / (double)g->nlat;
        double lon = 2.0 * M_PI * (double)(at % g->nlon) / (double)g->nlon;
        double noise = (double)(e3sm_gen_mix((uint64_t)at) >> 11) / 9007199254740992.0 - 0.5;
        cv[at] = (struct cellv){continents(lat, lon) + COAST * noise, at};
    }
    qsort(cv, (size_t)n, sizeof *cv, cmp_desc);
    for (int64_t k = 0; k < g->land; k++)
        mask[cv[k].at] = 1;
    free(cv);
    for (int64_t at = 0, k = 0; at < n; at++)
        if (mask[at])
            land[k++] = at;
    t[T_MASK] = mask;
    t[T_LAND] = land;
    g->tab = t;
    return 0;
}

/* D1: this rank's clumps of land cells, then the ocean of its range */
static int
grid_pairs(const struct e3sm_gen *g, int64_t r, struct e3sm_runs *out)
{
    void **t = g->tab;
    const unsigned char *mask = t[T_MASK];
    const int64_t *land = t[T_LAND];
    int64_t nclumps = (g->land + CLUMP - 1) / CLUMP, n = g->nlat * g->nlon;
    for (int64_t k = r; k < nclumps; k += g->procs)
        for (int64_t x = k * CLUMP; x < g->land && x < (k + 1) * CLUMP; x++)
            if (e3sm_runs_add(out, land[x], 1))
                return -1;
    int64_t lo = r * n / g->procs, hi = (r + 1) * n / g->procs;
    for (int64_t at = lo; at < hi; at++)
        if (!mask[at] && e3sm_runs_add(out, at, 1))
            return -1;
    return 0;
}

static int
i_pairs(const struct e3sm_gen *g, int d, int64_t r, struct e3sm_runs *out)
{
    if (d == 0)
        return grid_pairs(g, r, out);
    /* D2-D5: the merged D1 runs at every level of the sub-grid */
    struct e3sm_runs p = {0};
    if (grid_pairs(g, r, &p)) {
        e3sm_runs_free(&p);
        return -1;
    }
    return e3sm_runs_at_levels(&p, g->nlon, g->nlat * g->nlon, g->lev[d - 1], out);
}

static const struct e3sm_gen_key i_keys[] = {E3SM_GEN_KEY("nlat", nlat, 2, 100000),
                                             E3SM_GEN_KEY("nlon", nlon, 2, 100000),
                                             E3SM_GEN_KEY("land", land, 1, 10000000000),
                                             {NULL}};

/* levels=15/10/9/17: the four sub-grids' level counts */
static int
i_levels(const char *v, struct e3sm_gen *g, char *err, size_t errlen)
{
    int n = 0;
    const char *p = v;
    while (*p && n < 4) {
        char *end;
        long long x = strtoll(p, &end, 10);
        if (end == p || x < 1 || x > 1024)
            break;
        g->lev[n++] = x;
        p = *end == '/' ? end + 1 : end;
        if (*end != '/')
            break;
    }
    if (n != 4 || *p) {
        snprintf(err, errlen,
                 "levels=%s: give the four sub-grid level counts as A/B/C/D (default "
                 "15/10/9/17)",
                 v);
        return -1;
    }
    return 0;
}

static void
i_spell_levels(const struct e3sm_gen *g, char *out, size_t len)
{
    snprintf(out, len, "%lld/%lld/%lld/%lld", (long long)g->lev[0], (long long)g->lev[1],
             (long long)g->lev[2], (long long)g->lev[3]);
}

static void
i_defaults(struct e3sm_gen *g)
{
    g->nlat = 96, g->nlon = 144;
    g->lev[0] = 15, g->lev[1] = 10, g->lev[2] = 9, g->lev[3] = 17;
    g->land = -1; /* not given (i_setup) */
}

/* D1 nlat x nlon; D2-D5: each sub-grid's levels x nlat x nlon */
static void
i_dims(struct e3sm_gen *g)
{
    g->ndecomp = 5;
    g->ndims[0] = 2;
    g->dims[0][0] = g->nlat;
    g->dims[0][1] = g->nlon;
    for (int i = 1; i < 5; i++) {
        g->ndims[i] = 3;
        g->dims[i][0] = g->lev[i - 1];
        g->dims[i][1] = g->nlat;
        g->dims[i][2] = g->nlon;
    }
}

const struct e3sm_gen_case e3sm_gen_case_i = {
    .name = 'i',
    .keys = i_keys,
    .extra = "levels",
    .parse_extra = i_levels,
    .spell_extra = i_spell_levels,
    .defaults = i_defaults,
    .setup = i_setup,
    .dims = i_dims,
    .pairs = i_pairs,
};
