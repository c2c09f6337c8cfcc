/* SPDX-License-Identifier: BSD-3-Clause */
/* The replay's plan (replay_plan.h). Steps: per file, the writes and then
 * the reads, each rank's in its order. A step where some rank's next
 * operation is independent (MPI-IO independent or POSIX) runs every such
 * rank's next operation, the others joining with nothing; otherwise every
 * rank's next operation is collective and the step is the next collective
 * call, a rank without one joining it with an empty request. So the k-th
 * collective call of each rank on a file meets the k-th of the others. */
#include "replay_plan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

/* The segments of file f's ops of one kind (all ranks), merged. */
static struct iok_logseg *
kind_segs(const struct rp_trace *t, int f, int write, int64_t *n)
{
    int64_t total = 0;
    for (int64_t i = 0; i < t->nops; i++)
        if (t->ops[i].file == f && t->ops[i].write == write)
            total += t->ops[i].nseg;
    struct iok_logseg *s = malloc((size_t)(total ? total : 1) * sizeof *s);
    if (!s)
        return NULL;
    int64_t k = 0;
    for (int64_t i = 0; i < t->nops; i++)
        if (t->ops[i].file == f && t->ops[i].write == write && t->ops[i].nseg) {
            memcpy(s + k, t->segs + t->ops[i].seg0, (size_t)t->ops[i].nseg * sizeof *s);
            k += t->ops[i].nseg;
        }
    *n = iok_segs_merge(s, total, IOK_SEGS_SORTED);
    return s;
}

/* Bytes read but never written: reads minus writes, both merged. */
static int
fill_of(const struct rp_trace *t, int f, struct rp_fileplan *fp)
{
    int64_t nw, nr;
    struct iok_logseg *w = kind_segs(t, f, 1, &nw), *r = kind_segs(t, f, 0, &nr);
    /* a read range yields one piece per write gap it spans, and one more */
    struct iok_logseg *out = w && r ? malloc((size_t)(nr + nw + 1) * sizeof *out) : NULL;
    if (!w || !r || !out) {
        free(w);
        free(r);
        free(out);
        return -1;
    }
    int64_t n = 0, j = 0;
    for (int64_t i = 0; i < nr; i++) {
        int64_t a = r[i].off, b = r[i].off + r[i].len;
        while (j < nw && w[j].off + w[j].len <= a)
            j++;
        for (int64_t k = j; k < nw && w[k].off < b && a < b; k++) {
            if (w[k].off > a)
                out[n++] = (struct iok_logseg){a, w[k].off - a};
            a = w[k].off + w[k].len > a ? w[k].off + w[k].len : a;
        }
        if (a < b)
            out[n++] = (struct iok_logseg){a, b - a};
    }
    fp->fill = out;
    fp->nfill = n;
    for (int64_t i = 0; i < n; i++)
        fp->fill_bytes += out[i].len;
    free(w);
    free(r);
    return 0;
}

static const struct rp_trace *sort_trace; /* for cmp_rank_order (plans are built serially) */

static int
cmp_rank_order(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int rx = sort_trace->ops[x].rank, ry = sort_trace->ops[y].rank;
    return rx != ry ? (rx < ry ? -1 : 1) : (x > y) - (x < y);
}

/* Each job rank's operations of file f and one kind, in order: the trace
 * ranks folded onto it one after the other (r = p, p + P, ...). */
static int
schedule(const struct rp_trace *t, int f, int write, int nprocs, struct rp_sched *sc)
{
    int64_t *len = calloc((size_t)nprocs, sizeof *len), *pos = calloc((size_t)nprocs, sizeof *pos);
    int **seq = calloc((size_t)nprocs, sizeof *seq);
    int64_t n = 0;
    int *all = malloc((size_t)(t->nops + 1) * sizeof *all);
    int rc = len && pos && seq && all ? 0 : -1;
    for (int64_t i = 0; rc == 0 && i < t->nops; i++)
        if (t->ops[i].file == f && t->ops[i].write == write) {
            len[t->ops[i].rank % nprocs]++;
            all[n++] = (int)i;
        }
    sort_trace = t; /* by trace rank, each rank's in its order */
    if (rc == 0)
        qsort(all, (size_t)n, sizeof *all, cmp_rank_order);
    for (int p = 0; rc == 0 && p < nprocs; p++)
        if (!(seq[p] = malloc((size_t)(len[p] ? len[p] : 1) * sizeof **seq)))
            rc = -1;
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        int p = t->ops[all[i]].rank % nprocs;
        seq[p][pos[p]++] = all[i];
    }
    free(all);
    memset(pos, 0, (size_t)nprocs * sizeof *pos);
    int cap = 0;
    sc->nsteps = 0;
    while (rc == 0) {
        int left = 0, indep = 0;
        for (int p = 0; p < nprocs; p++)
            if (pos[p] < len[p]) {
                left = 1;
                indep |= t->ops[seq[p][pos[p]]].level != IOK_LEVEL_COLL;
            }
        if (!left)
            break;
        if (sc->nsteps == cap) {
            cap = cap ? 2 * cap : 16;
            int *o = realloc(sc->op, (size_t)cap * nprocs * sizeof *o);
            int *l = o ? realloc(sc->level, (size_t)cap * sizeof *l) : NULL;
            if (o)
                sc->op = o;
            if (l)
                sc->level = l;
            if (!o || !l) {
                rc = -1;
                break;
            }
        }
        int *row = sc->op + (size_t)sc->nsteps * nprocs;
        for (int p = 0; p < nprocs; p++) {
            int take =
                pos[p] < len[p] && (!indep || t->ops[seq[p][pos[p]]].level != IOK_LEVEL_COLL);
            row[p] = take ? seq[p][pos[p]++] : -1;
        }
        sc->level[sc->nsteps++] = indep ? IOK_LEVEL_INDEP : IOK_LEVEL_COLL;
    }
    for (int p = 0; seq && p < nprocs; p++)
        free(seq[p]);
    free(seq);
    free(len);
    free(pos);
    return rc;
}

static int
add_region(struct rp_fileplan *fp, int64_t off, int64_t bytes, int rec, int64_t elems, int esize)
{
    struct rp_region *r = realloc(fp->regions, (size_t)(fp->nregions + 1) * sizeof *r);
    if (!r)
        return -1;
    fp->regions = r;
    fp->regions[fp->nregions++] = (struct rp_region){off, bytes, -1, rec, elems, esize};
    return 0;
}

/* The file's variables: its data lines' and bytes between and after them,
 * tiling [0, extent); the schema with one dimension per variable (and the
 * record dimension). */
static int
layout(const struct rp_file *tf, struct rp_fileplan *fp, struct iok_schema *s)
{
    int64_t at = 0, nrec = 0;
    for (int d = 0; d < tf->ndata; d++)
        nrec = tf->data[d].nrec ? tf->data[d].nrec : nrec;
    int recdim = nrec ? iok_schema_add_dim(s, "record", nrec, 1) : -1;
    for (int d = 0; d <= tf->ndata; d++) {
        const struct rp_data *dl = d < tf->ndata ? &tf->data[d] : NULL;
        int64_t until = dl ? dl->off : fp->extent;
        if (until > at) { /* bytes no data line describes */
            char name[64];
            int dim;
            if (tf->ndata)
                snprintf(name, sizeof name, "bytes_%lld", (long long)at);
            else
                snprintf(name, sizeof name, "bytes");
            if (add_region(fp, at, until - at, 0, until - at, 1) ||
                (dim = iok_schema_add_dim(s, name, until - at, 0)) < 0 ||
                (fp->regions[fp->nregions - 1].var =
                     iok_schema_add_var(s, name, IOK_BYTE, 1, &dim)) < 0)
                return -1;
            at = until;
        }
        if (!dl)
            break;
        char dname[32];
        snprintf(dname, sizeof dname, "n%d", d);
        int dim = iok_schema_add_dim(s, dname, dl->elems, 0), dims[2] = {recdim, dim};
        int rec = dl->nrec > 0;
        if (dim < 0 || add_region(fp, dl->off, rp_data_bytes(dl), rec, dl->elems,
                                  (int)iok_type_size(dl->type)))
            return -1;
        int v = iok_schema_add_var(s, dl->name, dl->type, rec ? 2 : 1, rec ? dims : dims + 1);
        if (v < 0)
            return -1;
        s->vars[v].name_hash = dl->hash; /* the exporting kernel's values */
        fp->regions[fp->nregions - 1].var = v;
        at = dl->off + rp_data_bytes(dl);
    }
    fp->extent = at;
    return 0;
}

typedef void (*sub_fn)(void *ctx, int region, const int64_t *st, const int64_t *ct);
static int subarrays(const struct rp_fileplan *fp, int64_t off, int64_t len, int round, sub_fn fn,
                     void *ctx);

static void
no_sub(void *ctx, int region, const int64_t *st, const int64_t *ct)
{
    (void)ctx, (void)region, (void)st, (void)ct;
}

/* Segments of a file with data lines hold whole elements of its typed
 * variables: checked here, naming the line, not when the step runs. */
static int
check_elements(const struct rp_trace *t, int f, const struct rp_fileplan *fp, const char *path)
{
    for (int64_t i = 0; t->files[f].ndata && i < t->nops; i++) {
        const struct iok_logop *o = &t->ops[i];
        for (int64_t j = 0; o->file == f && j < o->nseg; j++) {
            const struct iok_logseg *g = &t->segs[o->seg0 + j];
            if (subarrays(fp, g->off, g->len, 0, no_sub, NULL))
                return iok_error(IOK_EUSAGE,
                                 "%s line %d: segment %lld+%lld cuts an element of a typed "
                                 "variable of its file (a data line): segments there must hold "
                                 "whole elements",
                                 path, o->line, (long long)g->off, (long long)g->len);
        }
    }
    return IOK_OK;
}

int
rp_plan_build(const struct rp_trace *t, int nprocs, int fold, const char *path, struct rp_plan *p,
              struct iok_schema *schemas, int max_files)
{
    memset(p, 0, sizeof *p);
    p->nprocs = nprocs;
    p->fold = fold;
    p->files = calloc((size_t)t->nfiles + 1, sizeof *p->files);
    if (!p->files)
        return iok_error(IOK_EIO, "out of memory planning %s", path);
    for (int f = 0; f < t->nfiles; f++) {
        int64_t extent = 0, nops = 0;
        for (int64_t i = 0; i < t->nops; i++) {
            const struct iok_logop *o = &t->ops[i];
            if (o->file != f)
                continue;
            nops++;
            for (int64_t j = 0; j < o->nseg; j++) {
                int64_t end = t->segs[o->seg0 + j].off + t->segs[o->seg0 + j].len;
                extent = end > extent ? end : extent;
            }
        }
        if (nops == 0) {
            p->nskipped++;
            continue;
        }
        if (p->nfiles == max_files)
            return iok_error(IOK_EUSAGE,
                             "%s: the trace reads or writes more than %d files, the most one run "
                             "replays: split it",
                             path, max_files);
        struct rp_fileplan *fp = &p->files[p->nfiles];
        struct iok_schema *s = &schemas[p->nfiles];
        p->nfiles++;
        fp->traced = f;
        fp->extent = extent;
        iok_schema_init(s);
        if (layout(&t->files[f], fp, s) || fill_of(t, f, fp) || schedule(t, f, 1, nprocs, &fp->w) ||
            schedule(t, f, 0, nprocs, &fp->r))
            return iok_error(IOK_EIO, "out of memory planning %s", path);
        IOK_TRY(check_elements(t, f, fp, path));
    }
    return IOK_OK;
}

struct pass_key {
    double key;
    int entry;
};

/* Ties: files' passes by entry, then groups' (IOK_PASS_FILEGROUP, negative) by group. */
static int64_t
tie_rank(int entry)
{
    return entry >= 0 ? entry : (int64_t)INT32_MAX + IOK_PASS_GROUP_OF(entry);
}

static int
cmp_pass_key(const void *a, const void *b)
{
    const struct pass_key *x = a, *y = b;
    int64_t tx = tie_rank(x->entry), ty = tie_rank(y->entry);
    return x->key != y->key ? (x->key < y->key ? -1 : 1) : (tx > ty) - (tx < ty);
}

int
rp_pass_order(const struct rp_trace *t, const struct rp_plan *p, const struct rp_groups *g,
              int *order)
{
    int n = 2 * p->nfiles, ng = g ? g->n : 0;
    struct pass_key *k = malloc((size_t)(n + ng + 1) * sizeof *k);
    if (!k)
        return -1;
    for (int i = 0; i < ng; i++)
        k[n + i] = (struct pass_key){(double)t->nops + p->nfiles, IOK_PASS_FILEGROUP(i)};
    for (int f = 0; f < p->nfiles; f++) {
        int64_t first[2] = {-1, -1}; /* the file's first write, first read */
        for (int64_t i = 0; i < t->nops && (first[0] < 0 || first[1] < 0); i++)
            if (t->ops[i].file == p->files[f].traced && first[!t->ops[i].write] < 0)
                first[!t->ops[i].write] = i;
        double never = (double)t->nops + f; /* after every traced operation */
        double r = first[1] >= 0 ? (double)first[1] : never;
        /* a write pass before its read pass: a file read before it is
         * written (or only read: its fill) is created just before */
        double w = first[0] >= 0 && (double)first[0] < r ? (double)first[0] : r - 0.5;
        k[2 * f] = (struct pass_key){w, 2 * f};
        k[2 * f + 1] = (struct pass_key){r, 2 * f + 1};
        for (int q = 2 * f; q < 2 * f + 2 && g; q++) /* a group starts at its first pass */
            if (g->of_pass[q] >= 0 && k[q].key < k[n + g->of_pass[q]].key)
                k[n + g->of_pass[q]].key = k[q].key;
    }
    int m = 0;
    for (int q = 0; q < n + ng; q++) {
        if (q < n && g && g->of_pass[q] >= 0)
            continue; /* run by its group */
        /* the fill-only write pass of a file a group reads: just before it */
        if (q < n && q % 2 == 0 && g && g->of_pass[q + 1] >= 0 && !p->files[q / 2].w.nsteps)
            k[q].key = k[n + g->of_pass[q + 1]].key - 0.5;
        k[m++] = k[q];
    }
    qsort(k, (size_t)m, sizeof *k, cmp_pass_key);
    for (int i = 0; i < m; i++)
        order[i] = k[i].entry;
    free(k);
    return m;
}

void
rp_plan_free(struct rp_plan *p)
{
    for (int f = 0; p->files && f < p->nfiles; f++) {
        struct rp_fileplan *fp = &p->files[f];
        free(fp->regions);
        free(fp->fill);
        free(fp->w.op);
        free(fp->w.level);
        free(fp->r.op);
        free(fp->r.level);
    }
    free(p->files);
    memset(p, 0, sizeof *p);
}

int
rp_map_path(const char *dir, const char *traced, const char *ext, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "%s/", dir), name = n;
    if (n >= len)
        return RP_MAP_TOO_LONG;
    int first = 1;
    for (const char *c = traced; *c;) {
        size_t k = strcspn(c, "/");
        int skip = k == 0 || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.');
        if (!skip) {
            if (n + !first + k >= len)
                return RP_MAP_TOO_LONG;
            if (!first)
                out[n++] = '_';
            for (size_t i = 0; i < k; i++)
                out[n++] = (unsigned char)c[i] < 0x20 || c[i] == 0x7f ? '_' : c[i];
            first = 0;
        }
        c += k + (c[k] == '/');
    }
    if (first)
        return RP_MAP_NO_NAME;
    out[n] = '\0';
    size_t el = strlen(ext);
    if (n < el || strcmp(out + n - el, ext)) {
        if (n + el >= len)
            return RP_MAP_TOO_LONG;
        memcpy(out + n, ext, el + 1);
        n += el;
    }
    return n - name > NAME_MAX ? RP_MAP_NAME_MAX : 0;
}

/* Calls fn for each subarray of segment [off, off + len) in the regions:
 * (region, start, count) in the variable's dimensions. */
static int
subarrays(const struct rp_fileplan *fp, int64_t off, int64_t len, int round, sub_fn fn, void *ctx)
{
    int lo = 0, hi = fp->nregions - 1;
    while (lo < hi) { /* the region holding off */
        int mid = (lo + hi + 1) / 2;
        if (fp->regions[mid].off <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    for (int g = lo; g < fp->nregions && len > 0; g++) {
        const struct rp_region *r = &fp->regions[g];
        int64_t a = off - r->off, b = off + len - r->off;
        if (b > r->bytes)
            b = r->bytes;
        if (a < 0 || a >= b)
            continue;
        if ((a % r->esize || b % r->esize) && !round)
            return -1;
        int64_t e0 = a / r->esize, e1 = (b + r->esize - 1) / r->esize;
        if (!r->rec) {
            int64_t st[1] = {e0}, ct[1] = {e1 - e0};
            fn(ctx, g, st, ct);
        } else { /* rows of records: a partial first, whole ones, a partial last */
            while (e0 < e1) {
                int64_t rec = e0 / r->elems, i = e0 % r->elems;
                int64_t st[2] = {rec, i}, ct[2] = {1, 0};
                if (i == 0 && e1 - e0 >= r->elems) {
                    ct[0] = (e1 - e0) / r->elems;
                    ct[1] = r->elems;
                } else
                    ct[1] = (e1 - e0 < r->elems - i) ? e1 - e0 : r->elems - i;
                fn(ctx, g, st, ct);
                e0 += ct[0] * ct[1];
            }
        }
        len -= b - a;
        off = r->off + b;
    }
    return 0;
}

struct sub_ctx {
    const struct rp_fileplan *fp;
    int *count;              /* per region: subarrays (counting pass) */
    struct iok_reqlist *out; /* region g's access: out->acc[base + g] (filling pass) */
    int base;
    int *at; /* per region: subarrays filled */
};

static void
count_sub(void *vctx, int g, const int64_t *st, const int64_t *ct)
{
    (void)st;
    (void)ct;
    ((struct sub_ctx *)vctx)->count[g]++;
}

static void
put_sub(void *vctx, int g, const int64_t *st, const int64_t *ct)
{
    struct sub_ctx *c = vctx;
    int nd = c->fp->regions[g].rec ? 2 : 1, k = c->at[g]++;
    struct iok_access *a = &c->out->acc[c->base + g];
    memcpy(a->starts + (size_t)k * nd, st, (size_t)nd * sizeof *st);
    memcpy(a->counts + (size_t)k * nd, ct, (size_t)nd * sizeof *ct);
}

int
rp_requests(const struct rp_fileplan *fp, const struct iok_schema *s, const struct iok_logseg *segs,
            int64_t n, int round, struct iok_reqlist *out)
{
    int ng = fp->nregions, rc = IOK_OK;
    int *count = calloc((size_t)ng + 1, sizeof *count), *at = calloc((size_t)ng + 1, sizeof *at);
    struct sub_ctx c = {fp, count, out, out->n, at};
    if (!count || !at)
        rc = iok_error(IOK_EIO, "out of memory building replay requests");
    for (int64_t i = 0; rc == IOK_OK && i < n; i++)
        if (subarrays(fp, segs[i].off, segs[i].len, round, count_sub, &c))
            rc = iok_error(IOK_EUSAGE,
                           "segment %lld+%lld cuts an element of a typed variable (a data line): "
                           "the segments of such a file must hold whole elements",
                           (long long)segs[i].off, (long long)segs[i].len);
    for (int g = 0; rc == IOK_OK && g < ng; g++)
        if (!iok_reqlist_add(out, s, fp->regions[g].var, count[g]))
            rc = iok_error(IOK_EIO, "out of memory building replay requests");
    for (int64_t i = 0; rc == IOK_OK && i < n; i++)
        subarrays(fp, segs[i].off, segs[i].len, round, put_sub, &c);
    if (rc == IOK_OK && iok_reqlist_finish(out, s))
        rc = iok_error(IOK_EIO, "out of memory for replay buffers");
    free(count);
    free(at);
    return rc;
}
