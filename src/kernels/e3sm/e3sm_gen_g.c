/* G case (MPAS-Ocean): a quasi-uniform mesh of hexagonal cells, an ocean
 * band periodic in longitude with coasts north and south:
 *
 * - cells on a W x H lattice (W = 2H, as longitude is twice latitude),
 *   row after row, the last row as long as the cell count leaves it; each
 *   cell has the six neighbours of a hexagon (east, west, north, south,
 *   north-east, south-west).
 * - edges: one per pair of neighbouring cells, vertices: one per triangle of
 *   three mutual neighbours; an edge or a vertex belongs to its
 *   lowest-numbered cell.
 * - numbering: cells, edges and vertices each in the Morton (Z) order of
 *   their positions (cell centres, edge midpoints, triangle centres, each
 *   moved by up to half a cell), as a mesh generator's spatial sort leaves
 *   them: local, but not the partition's curve.
 * - coasts: unless edges= and vertices= say otherwise, the mesh's own
 *   edges and vertices plus, per cell of the first and last rows, as many
 *   as the shipped mesh has per coastal cell (77 edges and 76 vertices for
 *   51 such cells: 879 and 593 for its 285 cells); they are that cell's,
 *   numbered after the others.
 * - partition: contiguous pieces of a generalized Hilbert curve over the
 *   lattice, as many cells each (METIS's compact regions); a cell's edges
 *   and vertices go with it.
 * - decompositions, levels fastest: D1 cells, D2 edges, D3 cells x nlev,
 *   D4 edges x nlev, D5 vertices x nlev, D6 cells x (nlev + 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e3sm_gen.h"

/* per kind (cells, edges, vertices): ids grouped by owner */
enum { K_CELL, K_EDGE, K_VERT, K_N };
enum { T_BY = 0, T_START = K_N, T_N = 2 * K_N };

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
    const int di[6] = {1, -1, 0, 0, 1, -1}, dj[6] = {0, 0, 1, -1, 1, -1};
    for (int k = 0; k < 6; k++)
        nb[k] = lattice(b, i + di[k], j + dj[k]);
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

static uint64_t
morton(uint64_t x, uint64_t y)
{
    uint64_t k = 0;
    for (int b = 0; b < 31; b++)
        k |= ((x >> b) & 1) << (2 * b) | ((y >> b) & 1) << (2 * b + 1);
    return k;
}

/* The Morton key of a point at (x / den, y / den) cells (den: 1 for cell
 * centres, 2 for edge midpoints, 3 for triangle centres), moved by up to
 * JITTER of a cell (a generated mesh's points are not on a lattice), on a
 * grid FINE times finer than the cells. */
#define FINE 16
#define JITTER 0.5
static uint64_t
pos_key(int64_t x, int64_t y, int den_, int salt)
{
    double den = (double)den_;
    uint64_t h = e3sm_gen_mix((uint64_t)x * 0x100000001b3ULL ^ (uint64_t)y << 20 ^ (uint64_t)salt);
    double jx = ((double)(h & 0xffff) / 65535.0 - 0.5) * 2 * JITTER,
           jy = ((double)((h >> 16) & 0xffff) / 65535.0 - 0.5) * 2 * JITTER;
    double fx = ((double)x / den + jx + 4) * FINE, fy = ((double)y / den + jy + 4) * FINE;
    return morton((uint64_t)fx, (uint64_t)fy);
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

/* numbers the n entities of a kind in the order of their keys */
static void
number(struct keyed *e, int64_t n, int64_t *own)
{
    qsort(e, (size_t)n, sizeof *e, cmp_key);
    for (int64_t x = 0; x < n; x++)
        own[x] = e[x].owner;
}

/* edges and vertices of the mesh without coasts, and the cells of the
 * first and last rows */
static void
natural(const struct g_build *b, const int64_t *where, int64_t *ne, int64_t *nv, int64_t *coast)
{
    const int tri[6][2] = {{0, 4}, {4, 2}, {2, 1}, {1, 5}, {5, 3}, {3, 0}};
    *ne = *nv = *coast = 0;
    for (int64_t c = 0; c < b->n; c++) {
        int64_t i = where[c] % b->w, j = where[c] / b->w, nb[6];
        neighbours(b, i, j, nb);
        for (int k = 0; k < 6; k++) {
            *ne += nb[k] > c;
            *nv += nb[tri[k][0]] > c && nb[tri[k][1]] > c;
        }
        *coast += j == 0 || j == b->h - 1;
    }
}

static int
build(struct e3sm_gen *g, struct g_build *b)
{
    int64_t n = g->cells, h = 1;
    while (2 * (h + 1) * (h + 1) <= n)
        h++;
    b->w = (n + h - 1) / h;
    b->h = (n + b->w - 1) / b->w;
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
    /* cells: numbered in Morton order of their positions */
    int64_t c = 0;
    for (int64_t at = 0; at < n; at++)
        e[c++] = (struct keyed){pos_key(at % b->w, at / b->w, 1, 0), at};
    qsort(e, (size_t)n, sizeof *e, cmp_key);
    for (int64_t x = 0; x < area; x++)
        b->cell_at[x] = -1;
    int64_t *where = b->own[K_CELL]; /* cell number -> lattice index, for now */
    for (c = 0; c < n; c++) {
        b->cell_at[e[c].owner] = c;
        where[c] = e[c].owner;
    }
    /* unless given: the mesh's own edges and vertices and the coasts' as
     * many per coastal cell as the shipped mesh has (77 edges and 76
     * vertices for its 51: 879 and 593 for 285 cells) */
    int64_t nat_e, nat_v, coast;
    natural(b, where, &nat_e, &nat_v, &coast);
    if (g->edges <= 0)
        g->edges = nat_e + (coast * 77 + 25) / 51;
    if (g->vertices <= 0)
        g->vertices = nat_v + (coast * 76 + 25) / 51;
    b->cnt[K_EDGE] = nat_e, b->cnt[K_VERT] = nat_v;
    if (g->edges < nat_e || g->vertices < nat_v) {
        free(e);
        return -2;
    }
    int64_t most = g->edges > g->vertices ? g->edges : g->vertices;
    struct keyed *more = realloc(e, (size_t)(most > n ? most : n) * sizeof *e);
    b->own[K_EDGE] = malloc((size_t)g->edges * sizeof(int64_t));
    b->own[K_VERT] = malloc((size_t)g->vertices * sizeof(int64_t));
    int64_t *part = e3sm_sfc_rect(b->w, b->h);
    if (!more || !b->own[K_EDGE] || !b->own[K_VERT] || !part) {
        free(more ? more : e), free(part);
        return -1;
    }
    e = more;
    /* the partition: equal pieces of its curve */
    int64_t seen = 0;
    for (int64_t k = 0; k < area; k++)
        if (part[k] < n)
            b->owner[b->cell_at[part[k]]] = seen++ * g->procs / n;
    /* edges (keys: midpoints, doubled) and vertices (centres, tripled) */
    int64_t ne = 0, nv = 0;
    const int di[6] = {1, -1, 0, 0, 1, -1}, dj[6] = {0, 0, 1, -1, 1, -1};
    const int tri[6][2] = {{0, 4}, {4, 2}, {2, 1}, {1, 5}, {5, 3}, {3, 0}};
    for (int pass = 0; pass < 2; pass++) {
        for (c = 0; c < n; c++) {
            int64_t i = where[c] % b->w, j = where[c] / b->w, nb[6];
            neighbours(b, i, j, nb);
            if (pass == 0) {
                for (int k = 0; k < 6 && ne < g->edges; k++)
                    if (nb[k] > c)
                        e[ne++] = (struct keyed){
                            pos_key(2 * i + di[k] + 2, 2 * j + dj[k] + 2, 2, 1), b->owner[c]};
            } else {
                for (int t = 0; t < 6 && nv < g->vertices; t++) {
                    int p = tri[t][0], q = tri[t][1];
                    if (nb[p] > c && nb[q] > c)
                        e[nv++] = (struct keyed){
                            pos_key(3 * i + di[p] + di[q] + 3, 3 * j + dj[p] + dj[q] + 3, 3, 2),
                            b->owner[c]};
                }
            }
        }
        /* the coasts: extra ones of the first and last rows' cells, in
         * turn, numbered after the others */
        int64_t *cnt = pass == 0 ? &ne : &nv, want = pass == 0 ? g->edges : g->vertices;
        for (int64_t round = 0; *cnt < want && round < want; round++)
            for (int64_t i = 0; i < b->w && *cnt < want; i++) {
                int64_t cell = lattice(b, i, round & 1 ? b->h - 1 : 0);
                if (cell >= 0)
                    e[(*cnt)++] = (struct keyed){UINT64_MAX, b->owner[cell]};
            }
        if (pass == 0) {
            b->cnt[K_EDGE] = ne;
            number(e, ne, b->own[K_EDGE]);
        } else {
            b->cnt[K_VERT] = nv;
            number(e, nv, b->own[K_VERT]);
        }
    }
    for (c = 0; c < n; c++)
        b->own[K_CELL][c] = b->owner[c];
    b->cnt[K_CELL] = n;
    free(part), free(e);
    return 0;
}

int
e3sm_gen_g_setup(struct e3sm_gen *g, char *err, size_t errlen)
{
    struct g_build b = {0};
    void **t = calloc(T_N + 1, sizeof *t);
    int rc = t ? build(g, &b) : -1;
    for (int k = 0; !rc && k < K_N; k++)
        rc = group(g, b.own[k], b.cnt[k], (int64_t **)&t[T_BY + k], (int64_t **)&t[T_START + k]);
    if (rc == -2) {
        snprintf(err, errlen,
                 "a mesh of %lld cells has %lld edges and %lld vertices without coasts: ask "
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

int
e3sm_gen_g_pairs(const struct e3sm_gen *g, int d, int64_t r, struct e3sm_pairs *out)
{
    static const int kind[6] = {K_CELL, K_EDGE, K_CELL, K_EDGE, K_VERT, K_CELL};
    void **t = g->tab;
    const int64_t *by = t[T_BY + kind[d]], *start = t[T_START + kind[d]];
    int64_t row = g->ndims[d] == 2 ? g->dims[d][1] : 1;
    for (int64_t k = start[r]; k < start[r + 1]; k++)
        if (e3sm_pairs_add(out, by[k] * row, row))
            return -1;
    return 0;
}
