/* SPDX-License-Identifier: BSD-3-Clause */
/* F case (EAM on a cubed sphere, spectral elements):
 *
 * - 6 faces of ne x ne elements, np x np GLL points each; the unique columns
 *   are 6 ne^2 (np-1)^2 + 2 (each element owns (np-1)^2 of them, the two
 *   left-over cube corners go to the first and the last element). Columns
 *   are numbered element by element in element order (face, then rows of
 *   the face), as in the history files: a row of a face is a contiguous
 *   stretch of the ncol dimension.
 * - D1 (dynamics): elements are dealt to ranks in contiguous pieces of a
 *   space-filling curve that covers each face and goes face to face (HOMME's
 *   partition). A rank's piece is a compact patch; its columns are one run
 *   per element row of the patch (the shipped map's runs of 9-36 columns).
 * - D2 (physics columns) and D3 (nlev x ncol): the physics deals columns
 *   cyclically to chunks of at most pcols columns, chunks_per_rank =
 *   ceil(ceil(ncol / procs) / pcols) chunks per rank (column c goes to chunk
 *   c mod nchunks), and gives each rank a stretch of consecutive chunks; its
 *   load balancing moves some chunks between ranks. A rank's columns are so
 *   ncol / nchunks rows of one run per stretch of consecutive chunks it
 *   holds (the shipped maps: stride 64 at ne4 / 16 ranks, stride 3072 at
 *   ne30 / 512). The number of chunks moved is fitted to both maps (see
 *   swaps()). D3 is D2 at every level. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e3sm_gen_case.h"
#include "e3sm_gen_sfc.h"

enum { T_ORDER, T_OWNER, T_BYOWNER, T_START, T_N };

struct f_tab {
    int64_t nelem, ncol, nchunks, cpr;
};

static int64_t
ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* chunks moved by the load balancing, per rank: fitted to the shipped maps
 * (ne4 / 16 ranks: 0.88 extra stretches per rank; ne30 / 512: 0.37) */
static int64_t
swaps(int64_t procs)
{
    double lg = log2((double)procs), s = 0.44 - 0.052 * (lg - 4.0);
    if (s < 0.05)
        s = 0.05;
    if (s > 0.8)
        s = 0.8;
    return (int64_t)(s * (double)procs + 0.5);
}

/* the unique columns: (np-1)^2 per element, and the two cube corners left */
static int64_t
f_ncol(const struct e3sm_gen *g)
{
    return 6 * g->ne * g->ne * (g->np - 1) * (g->np - 1) + 2;
}

static int
f_setup(struct e3sm_gen *g, char *err, size_t errlen)
{
    int64_t ne = g->ne, nelem = 6 * ne * ne, ncol = f_ncol(g);
    int64_t cpr = ceil_div(ceil_div(ncol, g->procs), g->pcols), nchunks = g->procs * cpr;
    void **t = calloc(T_N + 2, sizeof *t);
    int64_t *order = malloc((size_t)nelem * sizeof *order);
    int64_t *owner = malloc((size_t)nchunks * sizeof *owner);
    int64_t *byowner = malloc((size_t)nchunks * sizeof *byowner);
    int64_t *start = calloc((size_t)g->procs + 1, sizeof *start);
    struct f_tab *info = malloc(sizeof *info);
    int64_t *face = e3sm_sfc_rect(ne, ne);
    if (!t || !order || !owner || !byowner || !start || !info || !face) {
        free(t), free(order), free(owner), free(byowner), free(start), free(info), free(face);
        snprintf(err, errlen, "out of memory for the tables of %lld elements and %lld chunks",
                 (long long)nelem, (long long)nchunks);
        return -1;
    }
    /* the curve: faces one after another, odd faces walked backwards so
     * that the curve's ends meet across face edges */
    for (int64_t f = 0, n = 0; f < 6; f++)
        for (int64_t i = 0; i < ne * ne; i++)
            order[n++] = f * ne * ne + face[f & 1 ? ne * ne - 1 - i : i];
    free(face);
    /* chunks: stretches of cpr, then the load balancing's moves */
    for (int64_t c = 0; c < nchunks; c++)
        owner[c] = c / cpr;
    int64_t ns = swaps(g->procs);
    for (int64_t s = 0; s < ns && g->procs > 1; s++) {
        /* two ranks trade the head or the tail of their stretches */
        uint64_t h = e3sm_gen_mix((uint64_t)s * 2 + 1), h2 = e3sm_gen_mix(h);
        int64_t a = (int64_t)(h % (uint64_t)g->procs), b = (int64_t)(h2 % (uint64_t)g->procs);
        int64_t k = 1 + (int64_t)((h >> 32) % (uint64_t)(cpr > 1 ? cpr / 2 : 1));
        int64_t at = (h2 >> 40) & 1 ? cpr - k : 0;
        for (int64_t i = 0; i < k && a != b; i++) {
            int64_t x = owner[a * cpr + at + i];
            owner[a * cpr + at + i] = owner[b * cpr + at + i];
            owner[b * cpr + at + i] = x;
        }
    }
    for (int64_t c = 0; c < nchunks; c++)
        start[owner[c] + 1]++;
    for (int64_t r = 0; r < g->procs; r++)
        start[r + 1] += start[r];
    int64_t *fill = malloc((size_t)g->procs * sizeof *fill);
    if (!fill) {
        free(t), free(order), free(owner), free(byowner), free(start), free(info);
        snprintf(err, errlen, "out of memory for %lld ranks", (long long)g->procs);
        return -1;
    }
    memcpy(fill, start, (size_t)g->procs * sizeof *fill);
    for (int64_t c = 0; c < nchunks; c++)
        byowner[fill[owner[c]]++] = c;
    free(fill);
    *info = (struct f_tab){nelem, ncol, nchunks, cpr};
    t[T_ORDER] = order;
    t[T_OWNER] = owner;
    t[T_BYOWNER] = byowner;
    t[T_START] = start;
    t[T_N] = info;
    g->tab = t;
    return 0;
}

static int
dynamics(const struct e3sm_gen *g, const struct f_tab *ft, const int64_t *order, int64_t r,
         struct e3sm_runs *out)
{
    int64_t first, count, per = (g->np - 1) * (g->np - 1);
    if (r >= ft->nelem)
        return 0; /* more ranks than elements: no dynamics here */
    e3sm_assign(ft->nelem, (int)(g->procs < ft->nelem ? g->procs : ft->nelem), (int)r, &first,
                &count);
    for (int64_t p = first; p < first + count; p++) {
        int64_t e = order[p];
        int64_t off = per * e + (e > 0), len = per + (e == 0) + (e == ft->nelem - 1);
        if (e3sm_runs_add(out, off, len))
            return -1;
    }
    return 0;
}

static int
physics(const struct e3sm_gen *g, const struct f_tab *ft, const int64_t *byowner,
        const int64_t *start, int64_t r, struct e3sm_runs *out)
{
    (void)g;
    for (int64_t k = start[r]; k < start[r + 1]; k++)
        for (int64_t c = byowner[k]; c < ft->ncol; c += ft->nchunks)
            if (e3sm_runs_add(out, c, 1))
                return -1;
    return 0;
}

static int
f_pairs(const struct e3sm_gen *g, int d, int64_t r, struct e3sm_runs *out)
{
    void **t = g->tab;
    const struct f_tab *ft = t[T_N];
    if (d == 0)
        return dynamics(g, ft, t[T_ORDER], r, out);
    if (d == 1)
        return physics(g, ft, t[T_BYOWNER], t[T_START], r, out);
    /* D3: the merged D2 runs at every level */
    struct e3sm_runs p = {0};
    if (physics(g, ft, t[T_BYOWNER], t[T_START], r, &p)) {
        e3sm_runs_free(&p);
        return -1;
    }
    return e3sm_runs_at_levels(&p, ft->ncol, ft->ncol, g->nlev, out);
}

static const struct e3sm_gen_key f_keys[] = {E3SM_GEN_KEY("ne", ne, 1, 4096),
                                             E3SM_GEN_KEY("np", np, 2, 8),
                                             E3SM_GEN_KEY("nlev", nlev, 1, 1024),
                                             E3SM_GEN_KEY("pcols", pcols, 1, 4096),
                                             {NULL}};

static void
f_defaults(struct e3sm_gen *g)
{
    g->ne = 4, g->np = 4, g->nlev = 72, g->pcols = 16;
}

/* D1, D2: ncol; D3: nlev x ncol */
static void
f_dims(struct e3sm_gen *g)
{
    int64_t ncol = f_ncol(g);
    g->ndecomp = 3;
    g->ndims[0] = g->ndims[1] = 1;
    g->dims[0][0] = g->dims[1][0] = ncol;
    g->ndims[2] = 2;
    g->dims[2][0] = g->nlev;
    g->dims[2][1] = ncol;
}

const struct e3sm_gen_case e3sm_gen_case_f = {
    .name = 'f',
    .keys = f_keys,
    .defaults = f_defaults,
    .setup = f_setup,
    .dims = f_dims,
    .pairs = f_pairs,
};
