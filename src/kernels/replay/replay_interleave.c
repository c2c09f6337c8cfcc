/* SPDX-License-Identifier: BSD-3-Clause */
/* The replay's interleaved passes (replay_plan.h, rp_groups_build): a
 * file's writes and its reads are its two passes; passes whose operations
 * interleave in some rank's traced order (one's first operation before
 * another's last, and after its first), and a file's two passes where a
 * read (by any rank) comes before its last write, are open at the same
 * time, and the connected sets of them become one group each
 * (iok_filegroup; a group that reads a file takes the file's writes too,
 * so the file exists when the group opens it), run by the
 * core as one pass with the files open together. A group's steps are its
 * passes' steps merged in traced order: each pass's own steps in their
 * order, the next step taken from the pass whose next step's earliest
 * operation (over the ranks) comes first in the replay file. */
#include <stdlib.h>
#include <string.h>

#include "iokernels/reqlog.h"
#include "replay_plan.h"

static int
find(int *up, int q)
{
    while (up[q] != q)
        q = up[q] = up[up[q]];
    return q;
}

static const int64_t *sort_first; /* for cmp_first (plans are built serially) */

static int
cmp_first(const void *a, const void *b)
{
    int64_t x = sort_first[*(const int *)a], y = sort_first[*(const int *)b];
    return (x > y) - (x < y);
}

/* Unites the passes whose spans in rank r's operations overlap: sorted by
 * their first operation, a pass that starts before the furthest last
 * operation so far joins that one. */
static void
unite_rank(const int64_t *first, const int64_t *last, int npass, int *idx, int *up)
{
    int n = 0;
    for (int q = 0; q < npass; q++)
        if (first[q] >= 0)
            idx[n++] = q;
    sort_first = first;
    qsort(idx, (size_t)n, sizeof *idx, cmp_first);
    for (int i = 1, reach = n ? idx[0] : 0; i < n; i++) {
        int q = idx[i];
        if (first[q] < last[reach])
            up[find(up, q)] = find(up, reach);
        if (last[q] > last[reach])
            reach = q;
    }
}

/* The earliest operation of step k of a schedule, over the job ranks. */
static int64_t
step_key(const struct rp_sched *sc, int k, int nprocs)
{
    int64_t key = INT64_MAX;
    for (int p = 0; p < nprocs; p++) {
        int oi = sc->op[(size_t)k * nprocs + p];
        if (oi >= 0 && oi < key)
            key = oi;
    }
    return key;
}

/* Group g's steps: a fill of a file it writes first, then its passes'
 * steps merged in traced order. */
static int
group_steps(const struct rp_plan *p, const int *member, int nmember, struct iok_filegroup_step *out)
{
    int n = 0;
    int *at = calloc((size_t)nmember + 1, sizeof *at);
    if (!at)
        return -1;
    for (int m = 0; m < nmember; m++)
        if (member[m] % 2 == 0 && p->files[member[m] / 2].nfill)
            out[n++] = (struct iok_filegroup_step){member[m] / 2, IOK_OP_WRITE, 0};
    for (;;) {
        int best = -1;
        int64_t bkey = INT64_MAX;
        for (int m = 0; m < nmember; m++) {
            const struct rp_fileplan *fp = &p->files[member[m] / 2];
            const struct rp_sched *sc = member[m] % 2 ? &fp->r : &fp->w;
            if (at[m] >= sc->nsteps)
                continue;
            int64_t key = step_key(sc, at[m], p->nprocs);
            if (best < 0 || key < bkey) {
                best = m;
                bkey = key;
            }
        }
        if (best < 0)
            break;
        int f = member[best] / 2, rd = member[best] % 2;
        int step = at[best]++ + (rd ? 0 : p->files[f].nfill > 0);
        out[n++] = (struct iok_filegroup_step){f, rd ? IOK_OP_READ : IOK_OP_WRITE, step};
    }
    free(at);
    return n;
}

/* The bytes one file holds so far in a group's run: merged when read. */
struct held {
    struct iok_logseg *s;
    int64_t n, cap, merged;
};

static int
held_add(struct held *h, const struct iok_logseg *segs, int64_t n)
{
    if (h->n + n > h->cap) {
        int64_t cap = 2 * (h->n + n) + 16;
        struct iok_logseg *s = realloc(h->s, (size_t)cap * sizeof *s);
        if (!s)
            return -1;
        h->s = s;
        h->cap = cap;
    }
    memcpy(h->s + h->n, segs, (size_t)n * sizeof *segs);
    h->n += n;
    return 0;
}

static int
held_covers(struct held *h, const struct iok_logseg *g)
{
    if (h->merged != h->n)
        h->merged = h->n = iok_segs_merge(h->s, h->n, IOK_SEGS_SORTED);
    int64_t lo = 0, hi = h->n - 1;
    while (lo < hi) { /* the last segment starting at or before g */
        int64_t mid = (lo + hi + 1) / 2;
        if (h->s[mid].off <= g->off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return g->len == 0 ||
           (h->n && h->s[lo].off <= g->off && h->s[lo].off + h->s[lo].len >= g->off + g->len);
}

/* Bytes a group reads before any earlier step (or the fill) writes them:
 * the trace read what the file held before (a read before a later
 * write). They join the file's fill (untimed, before the group's steps,
 * the deterministic values its later writes write too, so --verify's
 * check of that read holds). Files the group only reads were written and
 * filled before it. Returns the files whose fill grew, or -1 when memory
 * runs out. */
static int
fill_gaps(const struct rp_trace *t, struct rp_plan *p, const struct iok_filegroup *g,
          const int *of_pass, int gi)
{
    struct held *h = calloc((size_t)p->nfiles + 1, sizeof *h), *gap = NULL;
    int rc = h && (gap = calloc((size_t)p->nfiles + 1, sizeof *gap)) ? 0 : -1;
    for (int i = 0; rc == 0 && i < g->nsteps; i++) {
        const struct iok_filegroup_step *st = &g->steps[i];
        struct rp_fileplan *fp = &p->files[st->file];
        int rd = st->op == IOK_OP_READ;
        if (rd && of_pass[2 * st->file] != gi)
            continue;
        if (!rd && st->step == 0 && fp->nfill) {
            rc = held_add(&h[st->file], fp->fill, fp->nfill);
            continue;
        }
        const struct rp_sched *sc = rd ? &fp->r : &fp->w;
        int k = rd ? st->step : st->step - (fp->nfill > 0);
        for (int q = 0; rc == 0 && q < p->nprocs; q++) {
            int oi = sc->op[(size_t)k * p->nprocs + q];
            const struct iok_logop *o = oi >= 0 ? &t->ops[oi] : NULL;
            for (int64_t j = 0; o && rc == 0 && j < o->nseg; j++) {
                const struct iok_logseg *sg = &t->segs[o->seg0 + j];
                if (rd && !held_covers(&h[st->file], sg))
                    rc = held_add(&gap[st->file], sg, 1);
                if (rc == 0 && (!rd || gap[st->file].n))
                    rc = held_add(&h[st->file], sg, 1);
            }
        }
    }
    int grew = 0;
    for (int f = 0; rc == 0 && f < p->nfiles; f++) {
        struct rp_fileplan *fp = &p->files[f];
        if (!gap[f].n)
            continue;
        if (held_add(&gap[f], fp->fill, fp->nfill)) {
            rc = -1;
            break;
        }
        free(fp->fill);
        fp->nfill = iok_segs_merge(gap[f].s, gap[f].n, IOK_SEGS_SORTED);
        fp->fill = gap[f].s;
        gap[f].s = NULL;
        fp->fill_bytes = 0;
        for (int64_t i = 0; i < fp->nfill; i++)
            fp->fill_bytes += fp->fill[i].len;
        grew++;
    }
    for (int f = 0; h && f < p->nfiles; f++) {
        free(h[f].s);
        free(gap ? gap[f].s : NULL);
    }
    free(h);
    free(gap);
    return rc ? -1 : grew;
}

int
rp_groups_build(const struct rp_trace *t, struct rp_plan *p, int writes, int reads, int verify,
                int fill, struct rp_groups *out)
{
    memset(out, 0, sizeof *out);
    int npass = 2 * p->nfiles, nranks = t->ranks > 0 ? t->ranks : 1;
    int *plan_of = malloc((size_t)(t->nfiles + 1) * sizeof *plan_of);
    int *up = malloc((size_t)(npass + 1) * sizeof *up),
        *idx = malloc((size_t)(npass + 1) * sizeof *idx);
    int64_t *first = malloc((size_t)(npass + 1) * sizeof *first);
    int64_t *last = malloc((size_t)(npass + 1) * sizeof *last);
    int *size = calloc((size_t)npass + 1, sizeof *size);
    out->of_pass = malloc((size_t)(npass + 1) * sizeof *out->of_pass);
    int rc = plan_of && up && idx && first && last && size && out->of_pass ? 0 : -1;
    for (int f = 0; rc == 0 && f < t->nfiles; f++)
        plan_of[f] = -1;
    for (int f = 0; rc == 0 && f < p->nfiles; f++)
        plan_of[p->files[f].traced] = f;
    for (int q = 0; rc == 0 && q < npass; q++)
        up[q] = q;
    /* each trace rank's spans: its operations (in trace order) by rank */
    int64_t *rs = calloc((size_t)nranks + 2, sizeof *rs);
    int64_t *byr = malloc((size_t)(t->nops + 1) * sizeof *byr);
    rc = rc == 0 && rs && byr ? 0 : -1;
    for (int64_t i = 0; rc == 0 && i < t->nops; i++)
        rs[t->ops[i].rank + 2]++;
    for (int r = 0; rc == 0 && r < nranks; r++)
        rs[r + 2] += rs[r + 1];
    for (int64_t i = 0; rc == 0 && i < t->nops; i++)
        byr[rs[t->ops[i].rank + 1]++] = i;
    for (int r = 0; rc == 0 && r < nranks; r++) {
        for (int q = 0; q < npass; q++)
            first[q] = last[q] = -1;
        for (int64_t k = r ? rs[r] : 0; k < rs[r + 1]; k++) {
            int64_t i = byr[k];
            const struct iok_logop *o = &t->ops[i];
            int f = o->file >= 0 && o->file < t->nfiles ? plan_of[o->file] : -1;
            if (f < 0 || !(o->write ? writes : reads))
                continue;
            int q = 2 * f + !o->write;
            first[q] = first[q] < 0 ? i : first[q];
            last[q] = i;
        }
        unite_rank(first, last, npass, idx, up);
    }
    free(rs);
    free(byr);
    /* a file read (by any rank) before its last write (by any rank): its
     * reads among its writes, in one group */
    for (int q = 0; rc == 0 && q < npass; q++)
        first[q] = last[q] = -1;
    for (int64_t i = 0; rc == 0 && i < t->nops; i++) {
        const struct iok_logop *o = &t->ops[i];
        int f = o->file >= 0 && o->file < t->nfiles ? plan_of[o->file] : -1;
        if (f >= 0 && (o->write ? writes : reads)) {
            int q = 2 * f + !o->write;
            first[q] = first[q] < 0 ? i : first[q];
            last[q] = i;
        }
    }
    for (int q = 0; rc == 0 && q < npass; q += 2)
        if (first[q + 1] >= 0 && first[q] >= 0 && first[q + 1] < last[q])
            up[find(up, q + 1)] = find(up, q);
    for (int q = 0; rc == 0 && q < npass; q++)
        size[find(up, q)]++;
    /* a group that reads a file the trace wrote (all before its reads)
     * takes those writes too: the file exists when the group opens it,
     * however early the group starts */
    for (int q = 0; rc == 0 && q < npass; q += 2) {
        int rr = find(up, q + 1), wr = find(up, q);
        if (size[rr] >= 2 && first[q] >= 0 && rr != wr) {
            up[wr] = rr;
            size[rr] += size[wr];
        }
    }
    int nsteps = 0;
    for (int q = 0; rc == 0 && q < npass; q++) {
        out->of_pass[q] = -1;
        if (size[find(up, q)] < 2)
            continue;
        const struct rp_fileplan *fp = &p->files[q / 2];
        nsteps += (q % 2 ? fp->r.nsteps : fp->w.nsteps) + (q % 2 == 0 && fp->nfill > 0);
    }
    /* a fill step per file that gets one (fill_gaps), and with --verify a
     * read-back step per file the group reads */
    out->steps = malloc((size_t)(nsteps + 2 * npass + 1) * sizeof *out->steps);
    out->g = malloc((size_t)(npass / 2 + 1) * sizeof *out->g);
    rc = rc == 0 && out->steps && out->g ? 0 : -1;
    /* a group per root with two passes or more, in the order of its first pass */
    int at = 0;
    for (int q = 0; rc == 0 && q < npass; q++) {
        int root = find(up, q);
        if (size[root] < 2 || out->of_pass[q] >= 0)
            continue;
        int nm = 0, g = out->n++;
        for (int m = q; m < npass; m++)
            if (find(up, m) == root) {
                idx[nm++] = m;
                out->of_pass[m] = g;
                out->needs_rw |= m % 2 && out->of_pass[m - 1] == g;
            }
        int n = group_steps(p, idx, nm, out->steps + at);
        out->g[g] = (struct iok_filegroup){n, out->steps + at};
        int grew = n < 0 ? -1 : fill ? fill_gaps(t, p, &out->g[g], out->of_pass, g) : 0;
        if (grew > 0) /* the steps again: a new fill step shifts the write steps */
            n = group_steps(p, idx, nm, out->steps + at);
        if (grew < 0 || n < 0)
            rc = -1;
        for (int m = 0; verify && rc == 0 && m < nm; m++) /* its read pass's last step */
            if (idx[m] % 2)
                out->steps[at + n++] = (struct iok_filegroup_step){idx[m] / 2, IOK_OP_READ,
                                                                   p->files[idx[m] / 2].r.nsteps};
        out->g[g].nsteps = n;
        at += n;
    }
    free(plan_of);
    free(up);
    free(idx);
    free(first);
    free(last);
    free(size);
    if (rc)
        rp_groups_free(out);
    return rc;
}

void
rp_groups_free(struct rp_groups *g)
{
    free(g->g);
    free(g->steps);
    free(g->of_pass);
    memset(g, 0, sizeof *g);
}
