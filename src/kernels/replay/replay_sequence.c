/* SPDX-License-Identifier: BSD-3-Clause */
/* Fidelity by sequence (replay_sequence.h). Both sides become the same
 * canonical operations: kind, level (POSIX calls count as independent: the
 * replay makes them as independent MPI-IO calls) and runs (the segments
 * sorted, touching ones merged, empty ones dropped: one library call moves
 * its bytes whatever their split into variables or rows). */
#include "replay_sequence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"
#include "iokernels/request.h"

struct cop {
    int rank, file, write, coll;
    int64_t nrun, run0;
};

struct side {
    int64_t n;
    struct cop *ops;
    struct iok_logseg *runs;
    int64_t nruns, runs_cap;
};

static void
side_free(struct side *s)
{
    free(s->ops);
    free(s->runs);
}

/* Appends one canonical operation (segs copied, then merged). */
static int
side_add(struct side *s, int64_t *cap, int rank, int file, int write, int coll,
         const struct iok_logseg *segs, int64_t n)
{
    if (s->nruns + n + 1 > s->runs_cap) { /* doubling: one copy per op would be quadratic */
        int64_t ncap = 2 * (s->nruns + n + 1);
        struct iok_logseg *r = realloc(s->runs, (size_t)ncap * sizeof *r);
        if (!r)
            return -1;
        s->runs = r;
        s->runs_cap = ncap;
    }
    struct iok_logseg *r = s->runs;
    if (n)
        memcpy(r + s->nruns, segs, (size_t)n * sizeof *r);
    int64_t m = iok_segs_merge(r + s->nruns, n, IOK_SEGS_SORTED);
    if (s->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        struct cop *o = realloc(s->ops, (size_t)*cap * sizeof *o);
        if (!o)
            return -1;
        s->ops = o;
    }
    s->ops[s->n++] = (struct cop){rank, file, write, coll, m, s->nruns};
    s->nruns += m;
    return 0;
}

static int
cop_equal(const struct side *a, const struct cop *x, const struct side *b, const struct cop *y)
{
    if (x->write != y->write || x->coll != y->coll || x->nrun != y->nrun)
        return 0;
    for (int64_t i = 0; i < x->nrun; i++)
        if (a->runs[x->run0 + i].off != b->runs[y->run0 + i].off ||
            a->runs[x->run0 + i].len != b->runs[y->run0 + i].len)
            return 0;
    return 1;
}

/* "write coll 0+4096 16384+4096", at most three runs, or "(none)". */
static void
describe(const struct side *s, const struct cop *o, char *out, size_t len)
{
    if (!o) {
        snprintf(out, len, "(none)");
        return;
    }
    int k = snprintf(out, len, "%s %s", o->write ? "write" : "read", o->coll ? "coll" : "indep");
    if (!o->nrun)
        k += snprintf(out + k, len - (size_t)k, " (no data)");
    for (int64_t i = 0; i < o->nrun && i < 3 && (size_t)k < len; i++)
        k += snprintf(out + k, len - (size_t)k, " %lld+%lld", (long long)s->runs[o->run0 + i].off,
                      (long long)s->runs[o->run0 + i].len);
    if (o->nrun > 3 && (size_t)k < len)
        snprintf(out + k, len - (size_t)k, " ... (%lld runs)", (long long)o->nrun);
}

/* Each (rank, file)'s operations in order: idx[start[g] .. start[g+1]). */
static int
group(const struct side *s, int nranks, int nfiles, int64_t **start, int64_t **idx)
{
    int64_t ng = (int64_t)nranks * nfiles;
    *start = calloc((size_t)ng + 1, sizeof **start);
    *idx = malloc((size_t)(s->n + 1) * sizeof **idx);
    int64_t *pos = calloc((size_t)ng + 1, sizeof *pos);
    if (!*start || !*idx || !pos) {
        free(pos);
        return -1;
    }
    for (int64_t i = 0; i < s->n; i++)
        (*start)[(int64_t)s->ops[i].rank * nfiles + s->ops[i].file + 1]++;
    for (int64_t g = 0; g < ng; g++)
        (*start)[g + 1] += (*start)[g];
    for (int64_t i = 0; i < s->n; i++) {
        int64_t g = (int64_t)s->ops[i].rank * nfiles + s->ops[i].file;
        (*idx)[(*start)[g] + pos[g]++] = i;
    }
    free(pos);
    return 0;
}

int
rp_trace_digests(const struct rp_trace *t, struct iok_seqdigest *d)
{
    return iok_seqdigests(t->ops, t->nops, t->segs, t->ranks, t->nfiles, d);
}

/* The replay file's sequences against its trace's digests. */
static int
check_digests(const struct rp_trace *t, struct rp_sequences *out)
{
    out->checked = t->nchecks > 0;
    if (!out->checked)
        return IOK_OK;
    int64_t ng = (int64_t)t->ranks * t->nfiles;
    struct iok_seqdigest *d = malloc((size_t)(ng ? ng : 1) * sizeof *d);
    struct rp_check *want = calloc((size_t)(ng ? ng : 1), sizeof *want);
    if (!d || !want || rp_trace_digests(t, d) != IOK_OK) {
        free(d);
        free(want);
        return iok_error(IOK_EIO, "out of memory checking the replay file's digests");
    }
    for (int64_t g = 0; g < ng; g++) /* a (rank, file) without a check line: no ops */
        want[g] = (struct rp_check){(int)(g / t->nfiles), (int)(g % t->nfiles), 0, 0,
                                    0xcbf29ce484222325ull};
    for (int i = 0; i < t->nchecks; i++)
        want[(int64_t)t->checks[i].rank * t->nfiles + t->checks[i].file] = t->checks[i];
    for (int64_t g = 0; g < ng; g++) {
        const struct rp_check *w = &want[g];
        if (d[g].hash == w->hash && d[g].ops == w->ops && d[g].bytes == w->bytes)
            continue;
        if (!out->edited++) {
            out->have_edit = 1;
            out->edit = (struct rp_seqdiff){.rank = w->rank, .file = w->file, .index = -1};
            snprintf(out->edit.traced, sizeof out->edit.traced,
                     "%lld operations, %lld bytes, digest %016llx", (long long)w->ops,
                     (long long)w->bytes, (unsigned long long)w->hash);
            snprintf(out->edit.replayed, sizeof out->edit.replayed,
                     "%lld operations, %lld bytes, digest %016llx in the replay file",
                     (long long)d[g].ops, (long long)d[g].bytes, (unsigned long long)d[g].hash);
        }
    }
    free(d);
    free(want);
    return IOK_OK;
}

static int
cmp_first(const void *a, const void *b)
{
    const int64_t *x = a, *y = b; /* (first, last) pairs */
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Whether two of a rank's files interleave: one's operations begin before
 * another's end (spans sorted by their first operation). */
static int
interleaved(int64_t *span, int nfiles)
{
    int n = 0;
    for (int f = 0; f < nfiles; f++)
        if (span[2 * f] >= 0) {
            span[2 * n] = span[2 * f];
            span[2 * n + 1] = span[2 * f + 1];
            n++;
        }
    qsort(span, (size_t)n, 2 * sizeof *span, cmp_first);
    int64_t reach = -1;
    for (int i = 0; i < n; i++) {
        if (span[2 * i] < reach)
            return 1;
        reach = span[2 * i + 1] > reach ? span[2 * i + 1] : reach;
    }
    return 0;
}

/* Each rank's operations in order (all files): idx[start[r] .. start[r+1]). */
static int
by_rank(const struct side *s, int nranks, int64_t **start, int64_t **idx)
{
    *start = calloc((size_t)nranks + 1, sizeof **start);
    *idx = malloc((size_t)(s->n + 1) * sizeof **idx);
    int64_t *pos = calloc((size_t)nranks + 1, sizeof *pos);
    if (!*start || !*idx || !pos) {
        free(pos);
        return -1;
    }
    for (int64_t i = 0; i < s->n; i++)
        (*start)[s->ops[i].rank + 1]++;
    for (int r = 0; r < nranks; r++)
        (*start)[r + 1] += (*start)[r];
    for (int64_t i = 0; i < s->n; i++)
        (*idx)[(*start)[s->ops[i].rank] + pos[s->ops[i].rank]++] = i;
    free(pos);
    return 0;
}

/* Ranks whose files were open at the same time in the trace (their
 * operations interleave): their order across files, traced against
 * replayed. */
static int
check_order(const struct side *ts, const struct side *ls, int nranks, int nfiles,
            struct rp_sequences *out)
{
    int64_t *span = malloc((size_t)(2 * nfiles + 2) * sizeof *span);
    int64_t *tst = NULL, *tix = NULL, *lst = NULL, *lix = NULL;
    int rc = span && !by_rank(ts, nranks, &tst, &tix) && !by_rank(ls, nranks, &lst, &lix) ? 0 : -1;
    for (int r = 0; rc == 0 && r < nranks; r++) {
        for (int f = 0; f < 2 * nfiles; f++)
            span[f] = -1;
        for (int64_t k = 0; k < tst[r + 1] - tst[r]; k++) {
            int f = ts->ops[tix[tst[r] + k]].file;
            if (span[2 * f] < 0)
                span[2 * f] = k;
            span[2 * f + 1] = k;
        }
        if (!interleaved(span, nfiles))
            continue;
        out->order_ranks++;
        int64_t tn = tst[r + 1] - tst[r], ln = lst[r + 1] - lst[r];
        for (int64_t k = 0; k < tn || k < ln; k++) {
            int tf = k < tn ? ts->ops[tix[tst[r] + k]].file : -1;
            int lf = k < ln ? ls->ops[lix[lst[r] + k]].file : -1;
            if (tf == lf)
                continue;
            if (!out->order_differ++) {
                out->have_order = 1;
                out->order = (struct rp_seqdiff){.rank = r, .file = -1, .index = k};
                snprintf(out->order.traced, sizeof out->order.traced, tf < 0 ? "(none)" : "file %d",
                         tf);
                snprintf(out->order.replayed, sizeof out->order.replayed,
                         lf < 0 ? "(none)" : "file %d", lf);
            }
            break;
        }
    }
    free(span);
    free(tst);
    free(tix);
    free(lst);
    free(lix);
    return rc;
}

int
rp_sequences(const struct rp_trace *t, const struct iok_reqlog *log, int nprocs, int fold,
             const int *file_traced, int writes, int reads, struct rp_sequences *out)
{
    memset(out, 0, sizeof *out);
    int nranks = fold ? nprocs : (t->ranks > nprocs ? t->ranks : nprocs), nfiles = t->nfiles;
    struct side ts = {0}, ls = {0};
    int64_t tcap = 0, lcap = 0, *tst = NULL, *tix = NULL, *lst = NULL, *lix = NULL;
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < t->nops; i++) {
        const struct iok_logop *o = &t->ops[i];
        if (o->write ? writes : reads)
            rc = side_add(&ts, &tcap, fold ? o->rank % nprocs : o->rank, o->file, o->write,
                          o->level == IOK_LEVEL_COLL, o->nseg ? t->segs + o->seg0 : NULL, o->nseg);
    }
    for (int64_t i = 0; rc == 0 && i < log->nops; i++) {
        const struct iok_logop *o = &log->ops[i];
        rc = side_add(&ls, &lcap, o->rank, file_traced[o->file], o->write,
                      o->level == IOK_LEVEL_COLL, log->segs + o->seg0, o->nseg);
    }
    if (rc == 0)
        rc = group(&ts, nranks, nfiles, &tst, &tix) || group(&ls, nranks, nfiles, &lst, &lix);
    for (int r = 0; rc == 0 && r < nranks; r++)
        for (int f = 0; f < nfiles; f++) {
            int64_t g = (int64_t)r * nfiles + f;
            int64_t tn = tst[g + 1] - tst[g], ln = lst[g + 1] - lst[g];
            if (!tn && !ln)
                continue;
            out->compared++;
            int64_t k = 0;
            while (k < tn && k < ln &&
                   cop_equal(&ts, &ts.ops[tix[tst[g] + k]], &ls, &ls.ops[lix[lst[g] + k]]))
                k++;
            if (k == tn && k == ln)
                continue;
            if (!out->differ++) {
                out->have_first = 1;
                out->first = (struct rp_seqdiff){.rank = r, .file = f, .index = k};
                describe(&ts, k < tn ? &ts.ops[tix[tst[g] + k]] : NULL, out->first.traced,
                         sizeof out->first.traced);
                describe(&ls, k < ln ? &ls.ops[lix[lst[g] + k]] : NULL, out->first.replayed,
                         sizeof out->first.replayed);
            }
        }
    if (rc == 0)
        rc = check_order(&ts, &ls, nranks, nfiles, out);
    if (rc == 0 && check_digests(t, out) != IOK_OK)
        rc = -1;
    side_free(&ts);
    side_free(&ls);
    free(tst);
    free(tix);
    free(lst);
    free(lix);
    return rc ? iok_error(IOK_EIO, "out of memory comparing the replay's sequences") : IOK_OK;
}
