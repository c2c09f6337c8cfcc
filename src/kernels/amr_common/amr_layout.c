/* SPDX-License-Identifier: BSD-3-Clause */
/* The AMR plotfile layout: schemas (flat NetCDF names or HDF5 groups and
 * compounds) and request lists of a hierarchy of boxes. */
#include "amr_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

static const char *const box_fields[6] = {"lo_i", "lo_j", "lo_k", "hi_i", "hi_j", "hi_k"};
static const char *const intvect_fields[3] = {"intvecti", "intvectj", "intvectk"};

void
amr_hier_free(struct amr_hier *h)
{
    for (int l = 0; l < AMR_MAX_LEVELS; l++) {
        free(h->lev[l].boxes);
        free(h->lev[l].procs);
        free(h->lev[l].offsets);
    }
    memset(h, 0, sizeof *h);
}

int
amr_level_set(struct amr_level *L, const struct amr_box *boxes, const int *rank,
              const int *file_order, int n, int ncomp)
{
    free(L->boxes);
    free(L->procs);
    free(L->offsets);
    L->nboxes = n;
    L->boxes = malloc((size_t)(n ? n : 1) * sizeof *L->boxes);
    L->procs = malloc((size_t)(n ? n : 1) * sizeof *L->procs);
    L->offsets = malloc((size_t)(n + 1) * sizeof *L->offsets);
    if (!L->boxes || !L->procs || !L->offsets)
        return -1;
    L->offsets[0] = 0;
    for (int i = 0; i < n; i++) {
        L->boxes[i] = boxes[file_order[i]];
        L->procs[i] = rank[file_order[i]];
        L->offsets[i + 1] = L->offsets[i] + amr_box_cells(&L->boxes[i]) * ncomp;
    }
    return 0;
}

void
amr_order_by_rank(const int *rank, int n, int nprocs, int *order)
{
    int k = 0;
    for (int r = 0; r < nprocs; r++)
        for (int i = 0; i < n; i++)
            if (rank[i] == r)
                order[k++] = i;
}

/* ---- schema ---- */

struct build {
    struct iok_schema *s;
    int failed;
    int box_type, intvect_type; /* compounds (hdf5), or -1 */
};

static int
check(struct build *b, int id)
{
    if (id < 0)
        b->failed = 1;
    return id;
}

static void
attr_int(struct build *b, int owner, const char *name, int v)
{
    check(b, iok_schema_add_attr(b->s, owner, name, IOK_INT, 1, &v));
}

static void
attr_double(struct build *b, int owner, const char *name, double v)
{
    check(b, iok_schema_add_attr(b->s, owner, name, IOK_DOUBLE, 1, &v));
}

static void
attr_text(struct build *b, int owner, const char *name, const char *text)
{
    check(b, iok_schema_add_text_attr(b->s, owner, name, text));
}

/* n ints, one compound value when the layout has that compound. */
static void
attr_ints(struct build *b, int owner, const char *name, int n, const int *v, int compound)
{
    int a = check(b, iok_schema_add_attr(b->s, owner, name, IOK_INT, (size_t)n, v));
    if (a >= 0 && compound >= 0 && iok_schema_set_attr_compound(b->s, a, compound))
        b->failed = 1;
}

static int
cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* num_components, num_levels, then the strings sorted by name (a std::map
 * in the originals): component_N (component_10 before component_2),
 * filetype, and for AMReX testString. */
static void
root_attrs(struct build *b, const struct amr_hier *h, enum amr_flavor fl, int owner,
           const char *prefix)
{
    char name[128];
    snprintf(name, sizeof name, "%snum_components", prefix);
    attr_int(b, owner, name, h->ncomp);
    snprintf(name, sizeof name, "%snum_levels", prefix);
    attr_int(b, owner, name, h->nlevels);
    char **comp = calloc((size_t)h->ncomp + 1, sizeof *comp);
    if (!comp) {
        b->failed = 1;
        return;
    }
    for (int c = 0; c < h->ncomp; c++) {
        comp[c] = malloc(32);
        if (comp[c])
            snprintf(comp[c], 32, "component_%d", c);
        else
            b->failed = 1;
    }
    if (!b->failed) {
        qsort(comp, (size_t)h->ncomp, sizeof *comp, cmp_str);
        for (int c = 0; c < h->ncomp; c++) {
            snprintf(name, sizeof name, "%s%s", prefix, comp[c]);
            attr_text(b, owner, name, comp[c]);
        }
    }
    for (int c = 0; c < h->ncomp; c++)
        free(comp[c]);
    free(comp);
    snprintf(name, sizeof name, "%sfiletype", prefix);
    attr_text(b, owner, name, "VanillaAMRFileType");
    if (fl == AMR_AMREX) {
        snprintf(name, sizeof name, "%stestString", prefix);
        attr_text(b, owner, name, "vMString::testString");
    }
}

static void
global_attrs(struct build *b, enum amr_flavor fl, int owner, const char *prefix)
{
    char name[128];
    snprintf(name, sizeof name, "%sSpaceDim", prefix);
    attr_int(b, owner, name, 3);
    snprintf(name, sizeof name, "%stestReal", prefix);
    attr_double(b, owner, name, 0.0);
    if (fl == AMR_AMREX) {
        snprintf(name, sizeof name, "%stestString", prefix);
        attr_text(b, owner, name, "vMString::testString");
    }
}

/* comps, (Chombo: objectType), ghost, (Chombo: outputGhost): all zeros. */
static void
data_attrs(struct build *b, const struct amr_hier *h, enum amr_flavor fl, int owner,
           const char *prefix)
{
    static const int zero[3] = {0, 0, 0};
    char name[128];
    snprintf(name, sizeof name, "%scomps", prefix);
    attr_int(b, owner, name, h->ncomp);
    if (fl == AMR_CHOMBO) {
        snprintf(name, sizeof name, "%sobjectType", prefix);
        attr_text(b, owner, name, "FArrayBox");
    }
    snprintf(name, sizeof name, "%sghost", prefix);
    attr_ints(b, owner, name, 3, zero, b->intvect_type);
    if (fl == AMR_CHOMBO) {
        snprintf(name, sizeof name, "%soutputGhost", prefix);
        attr_ints(b, owner, name, 3, zero, b->intvect_type);
    }
}

/* dt, dx, time, prob_domain, ref_ratio (the AMReX benchmark's order). */
static void
level_attrs(struct build *b, const struct amr_level *L, int owner, const char *prefix)
{
    const struct amr_box *d = &L->domain;
    int dom[6] = {d->lo[0], d->lo[1], d->lo[2], d->hi[0], d->hi[1], d->hi[2]};
    char name[128];
    snprintf(name, sizeof name, "%sdt", prefix);
    attr_double(b, owner, name, 0.0);
    snprintf(name, sizeof name, "%sdx", prefix);
    attr_double(b, owner, name, L->dx);
    snprintf(name, sizeof name, "%stime", prefix);
    attr_double(b, owner, name, 0.0);
    snprintf(name, sizeof name, "%sprob_domain", prefix);
    attr_ints(b, owner, name, 6, dom, b->box_type);
    snprintf(name, sizeof name, "%sref_ratio", prefix);
    attr_int(b, owner, name, L->ref_ratio);
}

/* Dimensions and variables of level l. Flat: the AMReX benchmark's names
 * (level 0 dimensions unprefixed, as the original; finer levels' prefixed
 * "level_N."); hdf5: datasets of group level_N. */
static void
level_vars(struct build *b, const struct amr_level *L, int l, int hdf5, struct amr_vars *ids)
{
    char dp[32] = "", vp[32], name[128];
    if (l > 0 || hdf5)
        snprintf(dp, sizeof dp, "level_%d.", l);
    snprintf(vp, sizeof vp, hdf5 ? "level_%d/" : "level_%d.", l);
#define DIM(suffix, len)                                                                           \
    (snprintf(name, sizeof name, "%s%s", dp, suffix),                                              \
     check(b, iok_schema_add_dim(b->s, name, (len), 0)))
    int procs = DIM("procdataspace_0", L->nboxes);
    int boxes[2] = {DIM("boxdataspace_0", L->nboxes), DIM("boxdataspace_1", 6)};
    int offsets = DIM("offsetdataspace_0", L->nboxes + 1);
    int data = DIM("dataspace", L->offsets[L->nboxes]);
#undef DIM
    if (b->failed)
        return;
#define VAR(suffix, type, nd, dims)                                                                \
    (snprintf(name, sizeof name, "%s%s", vp, suffix),                                              \
     check(b, iok_schema_add_var(b->s, name, (type), (nd), (dims))))
    ids->procs[l] = VAR("Processors", IOK_INT, 1, &procs);
    ids->boxes[l] = VAR("boxes", IOK_INT, 2, boxes);
    ids->offsets[l] = VAR("data:offsets=0", IOK_INT64, 1, &offsets);
    ids->data[l] = VAR("data:datatype=0", IOK_DOUBLE, 1, &data);
#undef VAR
    if (!b->failed && b->box_type >= 0 &&
        iok_schema_set_var_compound(b->s, ids->boxes[l], b->box_type))
        b->failed = 1;
}

int
amr_schema(struct iok_schema *s, const struct amr_hier *h, enum amr_flavor flavor, int hdf5,
           struct amr_vars *ids)
{
    struct build b = {.s = s, .box_type = -1, .intvect_type = -1};
    char prefix[64];
    iok_schema_init(s);
    if (!hdf5) {
        global_attrs(&b, flavor, IOK_GLOBAL, "Chombo_global");
        root_attrs(&b, h, flavor, IOK_GLOBAL, "");
        for (int l = 0; l < h->nlevels; l++) {
            level_vars(&b, &h->lev[l], l, 0, ids);
            snprintf(prefix, sizeof prefix, "level_%d.data_attributes.", l);
            data_attrs(&b, h, flavor, IOK_GLOBAL, prefix);
            snprintf(prefix, sizeof prefix, "level_%d.", l);
            level_attrs(&b, &h->lev[l], IOK_GLOBAL, prefix);
        }
        return b.failed ? -1 : 0;
    }
    s->scalar_attrs = 1;
    b.box_type = check(&b, iok_schema_add_compound(s, IOK_INT, 6, box_fields));
    b.intvect_type = check(&b, iok_schema_add_compound(s, IOK_INT, 3, intvect_fields));
    int global = check(&b, iok_schema_add_group(s, "Chombo_global"));
    if (b.failed)
        return -1;
    root_attrs(&b, h, flavor, IOK_GLOBAL, "");
    global_attrs(&b, flavor, IOK_GROUP(global), "");
    for (int l = 0; l < h->nlevels && !b.failed; l++) {
        snprintf(prefix, sizeof prefix, "level_%d", l);
        int g = check(&b, iok_schema_add_group(s, prefix));
        snprintf(prefix, sizeof prefix, "level_%d/data_attributes", l);
        int gda = check(&b, iok_schema_add_group(s, prefix));
        if (b.failed)
            break;
        level_attrs(&b, &h->lev[l], IOK_GROUP(g), "");
        level_vars(&b, &h->lev[l], l, 1, ids);
        data_attrs(&b, h, flavor, IOK_GROUP(gda), "");
    }
    return b.failed ? -1 : 0;
}

/* ---- requests ---- */

static struct iok_access *
add_1d(struct iok_reqlist *r, const struct iok_schema *s, int var, int nsub)
{
    return iok_reqlist_add(r, s, var, nsub);
}

/* Number of runs of adjacent boxes of `rank` (one subarray each). */
static int
rank_runs(const struct amr_level *L, int rank, int64_t *start, int64_t *count)
{
    int n = 0;
    for (int i = 0; i < L->nboxes; i++) {
        if (L->procs[i] != rank)
            continue;
        int64_t off = L->offsets[i], len = L->offsets[i + 1] - off;
        if (n > 0 && start[n - 1] + count[n - 1] == off) {
            count[n - 1] += len;
            continue;
        }
        start[n] = off;
        count[n] = len;
        n++;
    }
    return n;
}

static int
max_boxes_per_rank(const struct amr_level *L)
{
    int most = 0, top = 0;
    for (int i = 0; i < L->nboxes; i++)
        if (L->procs[i] > top)
            top = L->procs[i];
    int *n = calloc((size_t)top + 1, sizeof *n);
    if (!n)
        return -1;
    for (int i = 0; i < L->nboxes; i++)
        if (++n[L->procs[i]] > most)
            most = n[L->procs[i]];
    free(n);
    return most;
}

static int
data_accesses(const struct amr_level *L, int var, const struct iok_schema *s, int rank,
              enum amr_data_mode mode, struct iok_reqlist *out)
{
    if (mode == AMR_DATA_AGGREGATE) {
        int64_t *st = malloc((size_t)(L->nboxes + 1) * sizeof *st);
        int64_t *ct = malloc((size_t)(L->nboxes + 1) * sizeof *ct);
        struct iok_access *a = NULL;
        if (st && ct) {
            int n = rank_runs(L, rank, st, ct);
            if ((a = add_1d(out, s, var, n))) {
                memcpy(a->starts, st, (size_t)n * sizeof *st);
                memcpy(a->counts, ct, (size_t)n * sizeof *ct);
            }
        }
        free(st);
        free(ct);
        return a ? IOK_OK : iok_error(IOK_EIO, "out of memory building AMR requests");
    }
    int most = max_boxes_per_rank(L), mine = 0;
    if (most < 0)
        return iok_error(IOK_EIO, "out of memory building AMR requests");
    for (int i = 0; i < L->nboxes; i++) {
        if (L->procs[i] != rank)
            continue;
        struct iok_access *a = add_1d(out, s, var, 1);
        if (!a)
            return iok_error(IOK_EIO, "out of memory building AMR requests");
        a->starts[0] = L->offsets[i];
        a->counts[0] = L->offsets[i + 1] - L->offsets[i];
        mine++;
    }
    for (; mine < most; mine++) /* collective calls: as many as the busiest rank */
        if (!add_1d(out, s, var, 0))
            return iok_error(IOK_EIO, "out of memory building AMR requests");
    return IOK_OK;
}

int
amr_requests(const struct amr_hier *h, const struct amr_vars *ids, const struct iok_schema *s,
             int rank, enum amr_data_mode mode, struct iok_reqlist *out)
{
    int meta[AMR_MAX_LEVELS][3];
    for (int l = 0; l < h->nlevels; l++) {
        const struct amr_level *L = &h->lev[l];
        int me = rank == 0;
        const int vars[3] = {ids->procs[l], ids->boxes[l], ids->offsets[l]};
        const int64_t lens[3] = {L->nboxes, L->nboxes, L->nboxes + 1};
        for (int k = 0; k < 3; k++) {
            meta[l][k] = out->n;
            struct iok_access *a = add_1d(out, s, vars[k], me);
            if (!a)
                return iok_error(IOK_EIO, "out of memory building AMR requests");
            if (me) {
                a->counts[0] = lens[k];
                if (k == 1) /* boxes: N x 6, start 0 0 */
                    a->counts[1] = 6;
            }
        }
        IOK_TRY(data_accesses(L, ids->data[l], s, rank, mode, out));
    }
    if (iok_reqlist_finish(out, s))
        return iok_error(IOK_EIO, "out of memory for AMR buffers");
    if (rank != 0)
        return IOK_OK;
    for (int l = 0; l < h->nlevels; l++) {
        const struct amr_level *L = &h->lev[l];
        int *boxes = malloc((size_t)(L->nboxes ? L->nboxes : 1) * 6 * sizeof *boxes);
        if (!boxes)
            return iok_error(IOK_EIO, "out of memory for AMR box lists");
        for (int i = 0; i < L->nboxes; i++)
            for (int d = 0; d < 3; d++) {
                boxes[6 * i + d] = L->boxes[i].lo[d];
                boxes[6 * i + 3 + d] = L->boxes[i].hi[d];
            }
        int bad = iok_access_set_values(&out->acc[meta[l][0]], s, L->procs) ||
                  iok_access_set_values(&out->acc[meta[l][1]], s, boxes) ||
                  iok_access_set_values(&out->acc[meta[l][2]], s, L->offsets);
        free(boxes);
        if (bad)
            return iok_error(IOK_EIO, "out of memory for AMR box lists");
    }
    return IOK_OK;
}

int64_t
amr_rank_values(const struct amr_hier *h, int rank)
{
    int64_t n = 0;
    for (int l = 0; l < h->nlevels; l++)
        for (int i = 0; i < h->lev[l].nboxes; i++)
            if (h->lev[l].procs[i] == rank)
                n += h->lev[l].offsets[i + 1] - h->lev[l].offsets[i];
    return n;
}
