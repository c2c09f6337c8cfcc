/* SPDX-License-Identifier: BSD-3-Clause */
/* G case (MPAS-Ocean): a quasi-uniform mesh of hexagonal cells, a channel
 * periodic around (w cells) and closed by a wall at each end, as the shipped
 * mesh is: its 879 edges and 593 vertices for 285 cells are 3 and 2 per
 * cell plus 2 per wall cell, 24 for two walls of 12.
 *
 * - cells on a w x h lattice (w the largest with 2 w^2 <= cells: the
 *   channel about twice as long as it is around), row after row, the last row as long as the cell
 * count leaves it; each cell has the six neighbours of a hexagon (east, west, north, south,
 * north-east, south-west).
 * - edges: one per pair of neighbouring cells and one per side facing a
 *   wall or the missing cells of the last row; vertices: one per triangle
 *   of three mutual neighbours, with or without the wall side's.
 * - a refinement hierarchy: a mesh refined from a coarser one keeps the
 *   coarse cells, a third of the cells no two of which are neighbours
 *   (lattice (i, j) with i + j a multiple of 3, recursively), and numbers
 *   them first, as the shipped mesh does (its first 98 cells own 6
 *   vertices each, 588 of the 593).
 * - numbering: cells by level, the coarsest first, each level along the
 *   mesh generator's sweep (a Hilbert curve over the cells' places, across
 *   the channel in half cells by rows, not the partition's curve); edges
 *   likewise (the level of the coarser of their two cells, the place of the
 *   cell holding them). A vertex is numbered with the lowest-numbered of
 *   its cells, which owns it (a mesh converter listing each cell's new
 *   triangles in turn): each coarse cell owns the six around it, so a
 *   rank's vertices are six per coarse cell it holds.
 *   An edge belongs to the cell west or south of it (cellsOnEdge(1)), or to
 *   its only cell at a wall.
 * - partition: contiguous pieces of a Hilbert curve over the cells'
 *   centres (compact regions in space, METIS's), a cell's edges and
 *   vertices with it.
 * - edges= or vertices= above the mesh's own: the extra ones go to the
 *   cells beside a wall or the last row's gap in turn, numbered with them.
 * - decompositions, levels fastest: D1 cells, D2 edges, D3 cells x nlev,
 *   D4 edges x nlev, D5 vertices x nlev, D6 cells x (nlev + 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e3sm_gen_case.h"
#include "e3sm_gen_sfc.h"

/* per kind (cells, edges, vertices): ids grouped by owner */
enum { K_CELL, K_EDGE, K_VERT, K_N };
enum { T_BY = 0, T_START = K_N, T_N = 2 * K_N };

#define DEPTH_MAX 31
static const int DI[6] = {1, -1, 0, 0, 1, -1}, DJ[6] = {0, 0, 1, -1, 1, -1};
/* the six triangles around a cell, as pairs of its neighbours */
static const int TRI[6][2] = {{0, 4}, {4, 2}, {2, 1}, {1, 5}, {5, 3}, {3, 0}};

struct g_build {
    int64_t w, h, n;
    int64_t *cell_at; /* lattice index -> cell number, -1 where no cell */
    int64_t *owner;   /* cell number -> rank */
    int64_t *own[K_N];
    int64_t cnt[K_N];
};

static int64_t
lattice(const struct g_build *b, int64_t i, int64_t j)
{
    if (j < 0 || j >= b->h)
        return -1;
    i = ((i % b->w) + b->w) % b->w;
    return b->cell_at[j * b->w + i];
}

/* neighbours of lattice cell (i, j) as cell numbers (-1: none) */
static void
neighbours(const struct g_build *b, int64_t i, int64_t j, int64_t nb[6])
{
    for (int k = 0; k < 6; k++)
        nb[k] = lattice(b, i + DI[k], j + DJ[k]);
}

/* cell c (neighbours nb) holds its side k: its neighbour there is the
 * cell east, north or north-east of it, or none */
static int
holds_edge(int64_t c, const int64_t nb[6], int k)
{
    return nb[k] < 0 || (k % 2 == 0 && nb[k] != c);
}

/* cell c holds its corner t: no other cell there has a lower number */
static int
holds_vertex(int64_t c, const int64_t nb[6], int t)
{
    int64_t p = nb[TRI[t][0]], q = nb[TRI[t][1]];
    return (p < 0 || p > c) && (q < 0 || q > c);
}

static int
coastal(const int64_t nb[6])
{
    for (int k = 0; k < 6; k++)
        if (nb[k] < 0)
            return 1;
    return 0;
}

static int
group(const struct e3sm_gen *g, const int64_t *owner, int64_t n, int64_t **by, int64_t **start)
{
    *by = malloc((size_t)(n ? n : 1) * sizeof **by);
    *start = calloc((size_t)g->procs + 1, sizeof **start);
    int64_t *fill = malloc((size_t)g->procs * sizeof *fill);
    if (!*by || !*start || !fill) {
        free(fill);
        return -1;
    }
    for (int64_t x = 0; x < n; x++)
        (*start)[owner[x] + 1]++;
    for (int64_t r = 0; r < g->procs; r++)
        (*start)[r + 1] += (*start)[r];
    memcpy(fill, *start, (size_t)g->procs * sizeof *fill);
    for (int64_t x = 0; x < n; x++)
        (*by)[fill[owner[x]]++] = x;
    free(fill);
    return 0;
}

struct keyed {
    uint64_t key;
    int64_t owner;
};

static int
cmp_key(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* refinement depth of lattice cell (i, j): 0 for the cells the last
 * refinement added, k + 1 for a cell of the coarser lattice (i + j a
 * multiple of 3, its own coordinates ((i + j) / 3, (2 j - i) / 3)) of
 * depth k */
static int
depth(int64_t i, int64_t j)
{
    int d = 0;
    while (d < DEPTH_MAX && (i || j) && ((i + j) % 3 + 3) % 3 == 0) {
        int64_t a = (i + j) / 3, bb = (2 * j - i) / 3;
        i = a, j = bb, d++;
    }
    return i || j ? d : DEPTH_MAX;
}

/* numbering key: the coarsest level first, then along the curve */
static uint64_t
level_key(int depth_, uint64_t along)
{
    return (uint64_t)(DEPTH_MAX - depth_) << 58 | along;
}

/* extras of the q-th of ncoast coastal cells, want in all */
static int64_t
dealt(int64_t q, int64_t ncoast, int64_t want)
{
    return ncoast ? (q + 1) * want / ncoast - q * want / ncoast : 0;
}

/* the mesh's own edges and vertices, and its coastal cells */
static void
natural(const struct g_build *b, const int64_t *where, int64_t *ne, int64_t *nv, int64_t *coast)
{
    *ne = *nv = *coast = 0;
    for (int64_t c = 0; c < b->n; c++) {
        int64_t nb[6];
        neighbours(b, where[c] % b->w, where[c] / b->w, nb);
        for (int k = 0; k < 6; k++) {
            *ne += holds_edge(c, nb, k);
            *nv += holds_vertex(c, nb, k);
        }
        *coast += coastal(nb);
    }
}

/* a cell's place across the channel in half cells, x = 2 i - j (mod 2 w) */
static int64_t
across(const struct g_build *b, int64_t i, int64_t j)
{
    return ((2 * i - j) % (2 * b->w) + 2 * b->w) % (2 * b->w);
}

static int
build(struct e3sm_gen *g, struct g_build *b)
{
    int64_t n = g->cells, w = 1;
    while (2 * (w + 1) * (w + 1) <= n)
        w++;
    b->w = w;
    b->h = (n + w - 1) / w;
    b->n = n;
    int64_t area = b->w * b->h;
    b->cell_at = malloc((size_t)area * sizeof *b->cell_at);
    b->owner = malloc((size_t)n * sizeof *b->owner);
    b->own[K_CELL] = malloc((size_t)n * sizeof(int64_t));
    struct keyed *e = malloc((size_t)n * sizeof *e);
    if (!b->cell_at || !b->owner || !b->own[K_CELL] || !e) {
        free(e);
        return -1;
    }
    int bits = 1;
    while (((int64_t)1 << bits) < (b->w > b->h ? b->w : b->h))
        bits++;
    /* the generator's sweep: a Hilbert curve over the cells' places, across
     * the channel in half cells (x = 2 i - j mod 2 w) by rows */
    int64_t *sweep = malloc((size_t)n * sizeof *sweep), *rect = e3sm_sfc_rect(2 * b->w, b->h);
    if (!sweep || !rect) {
        free(e), free(sweep), free(rect);
        return -1;
    }
    int64_t seen = 0;
    for (int64_t k = 0; k < 2 * area; k++) {
        int64_t x = rect[k] % (2 * b->w), j = rect[k] / (2 * b->w);
        int64_t at = j * b->w + (x + j) / 2 % b->w;
        if ((x + j) % 2 == 0 && at < n)
            sweep[at] = seen++;
    }
    free(rect);
    /* cells: the coarsest first, each level in sweep order */
    for (int64_t at = 0; at < n; at++)
        e[at] = (struct keyed){level_key(depth(at % b->w, at / b->w), (uint64_t)sweep[at]), at};
    qsort(e, (size_t)n, sizeof *e, cmp_key);
    for (int64_t x = 0; x < area; x++)
        b->cell_at[x] = -1;
    int64_t *where = b->own[K_CELL]; /* cell number -> lattice index, for now */
    for (int64_t c = 0; c < n; c++) {
        b->cell_at[e[c].owner] = c;
        where[c] = e[c].owner;
    }
    int64_t nat_e, nat_v, coast;
    natural(b, where, &nat_e, &nat_v, &coast);
    if (g->edges <= 0)
        g->edges = nat_e;
    if (g->vertices <= 0)
        g->vertices = nat_v;
    b->cnt[K_EDGE] = nat_e, b->cnt[K_VERT] = nat_v;
    if (g->edges < nat_e || g->vertices < nat_v) {
        free(e), free(sweep);
        return -2;
    }
    struct keyed *more = realloc(e, (size_t)(g->edges > n ? g->edges : n) * sizeof *e);
    b->own[K_EDGE] = malloc((size_t)g->edges * sizeof(int64_t));
    b->own[K_VERT] = malloc((size_t)g->vertices * sizeof(int64_t));
    if (!more || !b->own[K_EDGE] || !b->own[K_VERT]) {
        free(more ? more : e), free(sweep);
        return -1;
    }
    e = more;
    /* the partition: equal pieces of a Hilbert curve over the cells'
     * centres, x = i - j / 2 around the channel, y = j sqrt(3) / 2 along
     * it, in sixteenths of a cell */
    for (int64_t c = 0; c < n; c++) {
        int64_t i = where[c] % b->w, j = where[c] / b->w;
        uint64_t x = (uint64_t)across(b, i, j) * 8, y = (uint64_t)((double)j * 13.856406);
        e[c] = (struct keyed){e3sm_sfc_key(x, y, bits + 5), c};
    }
    qsort(e, (size_t)n, sizeof *e, cmp_key);
    for (int64_t k = 0; k < n; k++)
        b->owner[e[k].owner] = k * g->procs / n;
    /* vertices in the order of their lowest-numbered cells, edges keyed by
     * level and the sweep place of their cell; a coastal cell's extras
     * after its own */
    int64_t ne = 0, nv = 0, q = 0;
    for (int64_t c = 0; c < n; c++) {
        int64_t i = where[c] % b->w, j = where[c] / b->w, nb[6], r = b->owner[c];
        neighbours(b, i, j, nb);
        int dc = depth(i, j);
        uint64_t at = (uint64_t)sweep[where[c]];
        for (int k = 0; k < 6; k++) {
            if (holds_vertex(c, nb, k))
                b->own[K_VERT][nv++] = r;
            if (holds_edge(c, nb, k)) {
                int dn = depth(i + DI[k], j + DJ[k]);
                e[ne++] = (struct keyed){level_key(dc > dn ? dc : dn, at << 3 | (uint64_t)k), r};
            }
        }
        if (coastal(nb)) {
            for (int64_t m = dealt(q, coast, g->vertices - nat_v); m > 0; m--)
                b->own[K_VERT][nv++] = r;
            for (int64_t m = dealt(q, coast, g->edges - nat_e); m > 0; m--)
                e[ne++] = (struct keyed){level_key(dc, at << 3 | 6), r};
            q++;
        }
    }
    b->cnt[K_VERT] = nv, b->cnt[K_EDGE] = ne;
    qsort(e, (size_t)ne, sizeof *e, cmp_key);
    for (int64_t x = 0; x < ne; x++)
        b->own[K_EDGE][x] = e[x].owner;
    for (int64_t c = 0; c < n; c++)
        b->own[K_CELL][c] = b->owner[c];
    b->cnt[K_CELL] = n;
    free(e), free(sweep);
    return 0;
}

static int
g_setup(struct e3sm_gen *g, char *err, size_t errlen)
{
    /* edges and vertices: the shipped mesh's at its 285 cells (879 and 593:
     * the generated mesh has 878 and 593), else the mesh's own unless given */
    if (g->edges < 0)
        g->edges = g->cells == 285 ? 879 : 0;
    if (g->vertices < 0)
        g->vertices = g->cells == 285 ? 593 : 0;
    struct g_build b = {0};
    void **t = calloc(T_N + 1, sizeof *t);
    int rc = t ? build(g, &b) : -1;
    for (int k = 0; !rc && k < K_N; k++)
        rc = group(g, b.own[k], b.cnt[k], (int64_t **)&t[T_BY + k], (int64_t **)&t[T_START + k]);
    if (rc == -2) {
        snprintf(err, errlen,
                 "a mesh of %lld cells has %lld edges and %lld vertices with its walls: ask "
                 "for at least as many (not edges=%lld, vertices=%lld)",
                 (long long)g->cells, (long long)b.cnt[K_EDGE], (long long)b.cnt[K_VERT],
                 (long long)g->edges, (long long)g->vertices);
        rc = -2;
    }
    free(b.cell_at), free(b.owner);
    for (int k = 0; k < K_N; k++)
        free(b.own[k]);
    if (rc == -1)
        snprintf(err, errlen, "out of memory for a mesh of %lld cells", (long long)g->cells);
    if (rc) {
        for (int k = 0; t && k < T_N; k++)
            free(t[k]);
        free(t);
        return -1;
    }
    g->tab = t;
    return 0;
}

static int
g_pairs(const struct e3sm_gen *g, int d, int64_t r, struct e3sm_runs *out)
{
    static const int kind[6] = {K_CELL, K_EDGE, K_CELL, K_EDGE, K_VERT, K_CELL};
    void **t = g->tab;
    const int64_t *by = t[T_BY + kind[d]], *start = t[T_START + kind[d]];
    int64_t row = g->ndims[d] == 2 ? g->dims[d][1] : 1;
    for (int64_t k = start[r]; k < start[r + 1]; k++)
        if (e3sm_runs_add(out, by[k] * row, row))
            return -1;
    return 0;
}

static const struct e3sm_gen_key g_keys[] = {E3SM_GEN_KEY("cells", cells, 4, 1000000000),
                                             E3SM_GEN_KEY("edges", edges, 4, 4000000000),
                                             E3SM_GEN_KEY("vertices", vertices, 4, 3000000000),
                                             E3SM_GEN_KEY("nlev", vlev, 1, 1024),
                                             {NULL}};

static void
g_defaults(struct e3sm_gen *g)
{
    g->cells = 285, g->vlev = 100;
    g->edges = g->vertices = -1; /* not given (g_setup) */
}

/* D1 cells, D2 edges; D3-D6: cells, edges, vertices, cells by levels
 * (nlev + 1 for the last) */
static void
g_dims(struct e3sm_gen *g)
{
    int64_t n[6] = {g->cells, g->edges, g->cells, g->edges, g->vertices, g->cells};
    g->ndecomp = 6;
    for (int i = 0; i < 6; i++) {
        g->ndims[i] = i < 2 ? 1 : 2;
        g->dims[i][0] = n[i];
        g->dims[i][1] = i == 5 ? g->vlev + 1 : g->vlev;
    }
}

const struct e3sm_gen_case e3sm_gen_case_g = {
    .name = 'g',
    .keys = g_keys,
    .defaults = g_defaults,
    .setup = g_setup,
    .dims = g_dims,
    .pairs = g_pairs,
};
