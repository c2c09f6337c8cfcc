/* SPDX-License-Identifier: BSD-3-Clause */
/* Generated E3SM decompositions: the parameters, and the common part (pairs
 * to runs, this rank's share). */
#include "e3sm_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

uint64_t
e3sm_gen_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int
e3sm_pairs_add(struct e3sm_pairs *p, int64_t off, int64_t len)
{
    if (p->n == p->cap) {
        int64_t cap = p->cap ? 2 * p->cap : 256;
        int64_t *o = realloc(p->off, (size_t)cap * sizeof *o);
        if (!o)
            return -1;
        p->off = o;
        int64_t *l = realloc(p->len, (size_t)cap * sizeof *l);
        if (!l)
            return -1;
        p->len = l;
        p->cap = cap;
    }
    p->off[p->n] = off;
    p->len[p->n++] = len;
    return 0;
}

void
e3sm_pairs_free(struct e3sm_pairs *p)
{
    free(p->off);
    free(p->len);
    memset(p, 0, sizeof *p);
}

/* ---- parameters ---- */

struct key {
    const char *name;
    size_t at; /* offset of the int64_t in struct e3sm_gen */
    int64_t min, max;
};

#define K(n, f, lo, hi)                                                                            \
    {                                                                                              \
        n, offsetof(struct e3sm_gen, f), lo, hi                                                    \
    }
static const struct key f_keys[] = {K("ne", ne, 1, 4096),
                                    K("np", np, 2, 8),
                                    K("nlev", nlev, 1, 1024),
                                    K("pcols", pcols, 1, 4096),
                                    K("procs", procs, 1, 100000000),
                                    {NULL}};
static const struct key g_keys[] = {
    K("cells", cells, 4, 1000000000),       K("edges", edges, 4, 4000000000),
    K("vertices", vertices, 4, 3000000000), K("nlev", vlev, 1, 1024),
    K("procs", procs, 1, 100000000),        {NULL}};
static const struct key i_keys[] = {K("nlat", nlat, 2, 100000),
                                    K("nlon", nlon, 2, 100000),
                                    K("land", land, 1, 10000000000),
                                    K("procs", procs, 1, 100000000),
                                    {NULL}};
#undef K

static void
key_names(const struct key *k, const char *extra, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (; k->name && n < len; k++)
        n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "", k->name);
    if (extra && n < len)
        snprintf(out + n, len - n, ", %s", extra);
}

/* levels=15/10/9/17 (I case) */
static int
parse_levels(const char *v, struct e3sm_gen *g, char *err, size_t errlen)
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
defaults(struct e3sm_gen *g)
{
    g->procs = 16;
    g->ne = 4, g->np = 4, g->nlev = 72, g->pcols = 16;
    g->cells = 285, g->vlev = 100;
    g->nlat = 96, g->nlon = 144;
    g->lev[0] = 15, g->lev[1] = 10, g->lev[2] = 9, g->lev[3] = 17;
}

static void
set_dims(struct e3sm_gen *g)
{
    memset(g->ndims, 0, sizeof g->ndims);
    if (g->kase == E3SM_GEN_F) {
        int64_t ncol = 6 * g->ne * g->ne * (g->np - 1) * (g->np - 1) + 2;
        g->ndecomp = 3;
        g->ndims[0] = g->ndims[1] = 1;
        g->dims[0][0] = g->dims[1][0] = ncol;
        g->ndims[2] = 2;
        g->dims[2][0] = g->nlev;
        g->dims[2][1] = ncol;
    } else if (g->kase == E3SM_GEN_G) {
        int64_t n[6] = {g->cells, g->edges, g->cells, g->edges, g->vertices, g->cells};
        g->ndecomp = 6;
        for (int i = 0; i < 6; i++) {
            g->ndims[i] = i < 2 ? 1 : 2;
            g->dims[i][0] = n[i];
            g->dims[i][1] = i == 5 ? g->vlev + 1 : g->vlev;
        }
    } else {
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
}

int
e3sm_gen_parse(const char *spec, struct e3sm_gen *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    defaults(g);
    const struct key *keys;
    if (!strncmp(spec, "f", 1) && (spec[1] == ':' || !spec[1]))
        g->kase = E3SM_GEN_F, keys = f_keys;
    else if (!strncmp(spec, "g", 1) && (spec[1] == ':' || !spec[1]))
        g->kase = E3SM_GEN_G, keys = g_keys;
    else if (!strncmp(spec, "i", 1) && (spec[1] == ':' || !spec[1]))
        g->kase = E3SM_GEN_I, keys = i_keys;
    else {
        snprintf(err, errlen,
                 "--generate %s: give the case first, f, g or i, then its parameters, e.g. "
                 "f:ne=30,procs=512",
                 spec);
        return -1;
    }
    int edges_given = 0, vert_given = 0, land_given = 0;
    char *copy = strdup(spec[1] ? spec + 2 : ""), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        char names[160];
        key_names(keys, g->kase == E3SM_GEN_I ? "levels" : NULL, names, sizeof names);
        if (!eq) {
            snprintf(err, errlen, "--generate %s: '%s' is not KEY=VALUE (keys: %s)", spec, t,
                     names);
            rc = -1;
            break;
        }
        *eq = '\0';
        if (g->kase == E3SM_GEN_I && !strcmp(t, "levels")) {
            rc = parse_levels(eq + 1, g, err, errlen);
            continue;
        }
        const struct key *k = keys;
        while (k->name && strcmp(k->name, t))
            k++;
        if (!k->name) {
            snprintf(err, errlen, "--generate %s: unknown parameter '%s' (keys: %s)", spec, t,
                     names);
            rc = -1;
            break;
        }
        char *end;
        long long v = strtoll(eq + 1, &end, 10);
        if (end == eq + 1 || *end || v < k->min || v > k->max) {
            snprintf(err, errlen, "--generate %s: %s=%s must be an integer in %lld..%lld", spec, t,
                     eq + 1, (long long)k->min, (long long)k->max);
            rc = -1;
            break;
        }
        *(int64_t *)((char *)g + k->at) = v;
        edges_given |= !strcmp(t, "edges");
        vert_given |= !strcmp(t, "vertices");
        land_given |= !strcmp(t, "land");
    }
    free(copy);
    if (rc)
        return rc;
    /* edges and vertices: the shipped mesh's at its 285 cells (879 and 593:
     * the generated mesh has 878 and 593), else the mesh's own
     * (e3sm_gen_g.c) unless given; land: the shipped grid's proportion, 5663
     * cells of 96 x 144 */
    if (!edges_given)
        g->edges = g->cells == 285 ? 879 : 0;
    if (!vert_given)
        g->vertices = g->cells == 285 ? 593 : 0;
    if (!land_given)
        g->land = (g->nlat * g->nlon * 5663 + 6912) / 13824;
    if (g->kase == E3SM_GEN_I && g->land > g->nlat * g->nlon) {
        snprintf(err, errlen, "--generate %s: land=%lld exceeds the %lld x %lld grid", spec,
                 (long long)g->land, (long long)g->nlat, (long long)g->nlon);
        return -1;
    }
    if (g->kase == E3SM_GEN_G) { /* the mesh first: it counts the edges and vertices */
        char why[400];
        if (e3sm_gen_g_setup(g, why, sizeof why)) {
            snprintf(err, errlen, "--generate %s: %s", spec, why);
            return -1;
        }
    }
    set_dims(g);
    if (g->kase == E3SM_GEN_F)
        snprintf(g->spec, sizeof g->spec, "f:ne=%lld,np=%lld,nlev=%lld,pcols=%lld,procs=%lld",
                 (long long)g->ne, (long long)g->np, (long long)g->nlev, (long long)g->pcols,
                 (long long)g->procs);
    else if (g->kase == E3SM_GEN_G)
        snprintf(g->spec, sizeof g->spec,
                 "g:cells=%lld,edges=%lld,vertices=%lld,nlev=%lld,procs=%lld", (long long)g->cells,
                 (long long)g->edges, (long long)g->vertices, (long long)g->vlev,
                 (long long)g->procs);
    else
        snprintf(g->spec, sizeof g->spec,
                 "i:nlat=%lld,nlon=%lld,land=%lld,levels=%lld/%lld/%lld/%lld,procs=%lld",
                 (long long)g->nlat, (long long)g->nlon, (long long)g->land, (long long)g->lev[0],
                 (long long)g->lev[1], (long long)g->lev[2], (long long)g->lev[3],
                 (long long)g->procs);
    return g->kase == E3SM_GEN_F   ? e3sm_gen_f_setup(g, err, errlen)
           : g->kase == E3SM_GEN_G ? 0
                                   : e3sm_gen_i_setup(g, err, errlen);
}

void
e3sm_gen_free(struct e3sm_gen *g)
{
    if (g->tab) {
        void **t = g->tab; /* every case's table: an array of malloc'ed pointers, NULL-ended */
        for (int i = 0; t[i]; i++)
            free(t[i]);
        free(t);
    }
    g->tab = NULL;
}

int
e3sm_gen_pairs(const struct e3sm_gen *g, int d, int64_t r, struct e3sm_pairs *out)
{
    if (r < 0 || r >= g->procs)
        return 0;
    return g->kase == E3SM_GEN_F   ? e3sm_gen_f_pairs(g, d, r, out)
           : g->kase == E3SM_GEN_G ? e3sm_gen_g_pairs(g, d, r, out)
                                   : e3sm_gen_i_pairs(g, d, r, out);
}

int
e3sm_gen_runs(const struct e3sm_gen *g, int d, int64_t first, int64_t count, struct e3sm_runs *out,
              int64_t *pairs, char *err, size_t errlen)
{
    struct e3sm_pairs p = {0};
    int64_t total = 1;
    for (int k = 0; k < g->ndims[d]; k++)
        total *= g->dims[d][k];
    for (int64_t r = first; r < first + count; r++)
        if (e3sm_gen_pairs(g, d, r, &p)) {
            e3sm_pairs_free(&p);
            snprintf(err, errlen, "out of memory generating D%d", d + 1);
            return -1;
        }
    if (pairs)
        *pairs = p.n;
    int rc =
        e3sm_runs_build(p.off, p.len, p.n, g->dims[d][g->ndims[d] - 1], total, out, err, errlen);
    e3sm_pairs_free(&p);
    return rc;
}

int
e3sm_gen_decomps(const struct e3sm_gen *g, MPI_Comm comm, struct e3sm_decomps *out)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    memset(out, 0, sizeof *out);
    out->ndecomp = g->ndecomp;
    out->decomp_nprocs = g->procs;
    out->layout = E3SM_LAYOUT_MAP;
    snprintf(out->format, sizeof out->format, "generated");
    int64_t first, count;
    e3sm_assign(g->procs, nprocs, rank, &first, &count);
    for (int d = 0; d < g->ndecomp; d++) {
        struct e3sm_decomp *x = &out->d[d];
        x->ndims = g->ndims[d];
        x->total = 1;
        for (int k = 0; k < x->ndims; k++) {
            x->dims[k] = g->dims[d][k];
            x->total *= x->dims[k];
        }
        char why[256];
        if (e3sm_gen_runs(g, d, first, count, &x->runs, &x->file_pairs, why, sizeof why)) {
            e3sm_decomps_free(out);
            return iok_error(IOK_EIO, "--generate %s: D%d: %s", g->spec, d + 1, why);
        }
    }
    return IOK_OK;
}

int
e3sm_gen_load(const char *spec, MPI_Comm comm, struct e3sm_decomps *out, char *label, size_t len)
{
    struct e3sm_gen g;
    char why[512];
    memset(out, 0, sizeof *out);
    if (e3sm_gen_parse(spec, &g, why, sizeof why)) {
        e3sm_gen_free(&g);
        return iok_error(IOK_EUSAGE, "%s", why);
    }
    snprintf(label, len, "generated %s", g.spec);
    int rc = e3sm_gen_decomps(&g, comm, out);
    e3sm_gen_free(&g);
    return rc;
}
