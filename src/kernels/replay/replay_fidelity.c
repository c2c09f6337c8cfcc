/* SPDX-License-Identifier: BSD-3-Clause */
/* The fidelity score (replay_fidelity.h). The trace and the log hold the
 * same operation type (iokernels/reqlog.h), so one counter serves both:
 * the log's files are mapped back to the traced ones, its ranks are the
 * job's. Within one operation, segments that
 * continue one another count as one run (the I/O library sees one block):
 * a segment the replay splits between two variables, or two adjacent
 * segments of a trace, are compared as the bytes they are. */
#include "replay_fidelity.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

struct item {
    int rank, file;
    int64_t off;
};

static int
cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return x->off < y->off ? -1 : x->off > y->off;
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

struct acc {
    struct rp_counts *per, total;
    int64_t *sizes, nsizes;
    double time[RP_NT];
};

/* One side's counts: its operations of the kinds kept (writes, reads),
 * their files mapped to the traced ones by file_traced (NULL: they are). */
static int
count_side(const struct iok_logop *ops, int64_t nops, const struct iok_logseg *segs,
           const int *file_traced, int writes, int reads, int nranks, struct acc *a)
{
    int64_t nsegs = 0;
    for (int64_t i = 0; i < nops; i++)
        nsegs += ops[i].nseg;
    struct item *it = malloc((size_t)(nsegs ? nsegs : 1) * sizeof *it);
    struct iok_logseg *run = malloc((size_t)(nsegs ? nsegs : 1) * sizeof *run);
    a->sizes = malloc((size_t)(nsegs ? nsegs : 1) * sizeof *a->sizes);
    a->per = calloc((size_t)nranks, sizeof *a->per);
    if (!it || !run || !a->sizes || !a->per) {
        free(it);
        free(run);
        return -1;
    }
    double lo[RP_NT], hi[RP_NT];
    for (int k = 0; k < RP_NT; k++) {
        lo[k] = 1e300;
        hi[k] = -1;
    }
    int64_t n = 0;
    for (int64_t i = 0; i < nops; i++) {
        const struct iok_logop *o = &ops[i];
        if (!(o->write ? writes : reads))
            continue;
        struct rp_counts *c = &a->per[o->rank];
        int file = file_traced ? file_traced[o->file] : o->file;
        c->ops++;
        a->total.ops++;
        for (int64_t j = 0; j < o->nseg; j++) {
            c->bytes += segs[o->seg0 + j].len;
            a->total.bytes += segs[o->seg0 + j].len;
        }
        /* this op's runs: segments that continue one another merge */
        if (o->nseg)
            memcpy(run, segs + o->seg0, (size_t)o->nseg * sizeof *run);
        int64_t m = iok_segs_merge(run, o->nseg, IOK_SEGS_IN_ORDER);
        for (int64_t j = 0; j < m; j++) {
            a->sizes[n] = run[j].len;
            it[n++] = (struct item){o->rank, file, run[j].off};
        }
        if (o->start >= 0 && o->end >= 0)
            for (int k = 0; k < RP_NT; k++)
                if (k == RP_T_TOTAL || (k == RP_T_WRITE) == (o->write != 0)) {
                    lo[k] = o->start < lo[k] ? o->start : lo[k];
                    hi[k] = o->end > hi[k] ? o->end : hi[k];
                }
    }
    free(run);
    a->nsizes = n;
    qsort(a->sizes, (size_t)n, sizeof *a->sizes, cmp_i64);
    qsort(it, (size_t)n, sizeof *it, cmp_item);
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || cmp_item(&it[i], &it[i - 1]))
            a->per[it[i].rank].offsets++;
    for (int64_t i = 0; i < n; i++) /* distinct over ranks: by file and offset */
        it[i].rank = 0;
    qsort(it, (size_t)n, sizeof *it, cmp_item);
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || cmp_item(&it[i], &it[i - 1]))
            a->total.offsets++;
    for (int k = 0; k < RP_NT; k++)
        a->time[k] = hi[k] >= 0 ? hi[k] - lo[k] : -1;
    free(it);
    return 0;
}

/* The largest gap between the two empirical distributions (sorted). */
static double
ks_distance(const int64_t *x, int64_t nx, const int64_t *y, int64_t ny)
{
    if (!nx || !ny)
        return nx == ny ? 0 : 1;
    int64_t i = 0, j = 0;
    double d = 0;
    while (i < nx && j < ny) {
        int64_t v = x[i] < y[j] ? x[i] : y[j];
        while (i < nx && x[i] == v)
            i++;
        while (j < ny && y[j] == v)
            j++;
        double g = (double)i / nx - (double)j / ny;
        d = g < 0 ? (-g > d ? -g : d) : (g > d ? g : d);
    }
    return d;
}

int
rp_fidelity(const struct rp_trace *t, const struct iok_reqlog *log, int nprocs,
            const int *file_traced, int writes, int reads, struct rp_fidelity *out)
{
    memset(out, 0, sizeof *out);
    out->nranks = t->ranks > nprocs ? t->ranks : nprocs;
    out->writes = writes;
    out->reads = reads;
    struct acc ta = {0}, la = {0};
    int rc = count_side(t->ops, t->nops, t->segs, NULL, writes, reads, out->nranks, &ta) ||
                     count_side(log->ops, log->nops, log->segs, file_traced, 1, 1, out->nranks, &la)
                 ? -1
                 : 0;
    if (rc == 0) {
        out->trace = ta.per;
        out->replay = la.per;
        out->trace_total = ta.total;
        out->replay_total = la.total;
        out->ks = ks_distance(ta.sizes, ta.nsizes, la.sizes, la.nsizes);
        memcpy(out->trace_time, ta.time, sizeof ta.time);
        memcpy(out->replay_time, la.time, sizeof la.time);
    } else {
        free(ta.per);
        free(la.per);
    }
    free(ta.sizes);
    free(la.sizes);
    return rc ? iok_error(IOK_EIO, "out of memory scoring the replay") : IOK_OK;
}

void
rp_fidelity_free(struct rp_fidelity *f)
{
    free(f->trace);
    free(f->replay);
    memset(f, 0, sizeof *f);
}

int
rp_counts_equal(const struct rp_counts *a, const struct rp_counts *b)
{
    return a->ops == b->ops && a->bytes == b->bytes && a->offsets == b->offsets;
}

void
rp_fidelity_reason(struct rp_fidelity *f, const char *text)
{
    if (f->nreasons < 4)
        snprintf(f->reasons[f->nreasons++], sizeof f->reasons[0], "%s", text);
}

static int
seq_exact(const struct rp_fidelity *f)
{
    return f->have_seq && !f->seq.differ && !f->seq.order_differ && !f->seq.edited;
}

int
rp_fidelity_exact(const struct rp_fidelity *f)
{
    if (!seq_exact(f) || f->nreasons)
        return 0;
    for (int r = 0; r < f->nranks; r++)
        if (!rp_counts_equal(&f->trace[r], &f->replay[r]))
            return 0;
    return rp_counts_equal(&f->trace_total, &f->replay_total) && f->ks == 0;
}

static const char *const phase_names[RP_NT] = {"total", "write", "read"};

void
rp_fidelity_report(const struct rp_fidelity *f, FILE *out)
{
    const struct rp_counts *t = &f->trace_total, *r = &f->replay_total;
    int bad = 0;
    fprintf(out, "Fidelity: %s", rp_fidelity_exact(f) ? "exact" : "not exact");
    if (f->cov_counted)
        fprintf(out, " (of a trace holding %lld of the %lld calls the application made, %.1f%%)",
                (long long)f->cov_traced, (long long)f->cov_counted,
                100.0 * (double)f->cov_traced / (double)f->cov_counted);
    fputc('\n', out);
    for (int i = 0; i < f->nreasons; i++)
        fprintf(out, "  not exact: %s\n", f->reasons[i]);
    const struct rp_sequences *q = &f->seq;
    if (f->have_seq) {
        fprintf(out,
                "  sequences: %lld (rank, file) sequences of (kind, offset, length, level) "
                "compared in order, %lld differ\n",
                (long long)q->compared, (long long)q->differ);
        if (q->have_first)
            fprintf(out,
                    "  first difference: rank %d, file %d, operation %lld: traced %s, "
                    "replayed %s\n",
                    q->first.rank, q->first.file, (long long)q->first.index, q->first.traced,
                    q->first.replayed);
        if (q->order_ranks)
            fprintf(out,
                    "  order across files open at the same time: %d ranks, %d replayed in "
                    "another order\n",
                    q->order_ranks, q->order_differ);
        if (q->have_order)
            fprintf(out, "  first: rank %d, its operation %lld: traced on %s, replayed on %s\n",
                    q->order.rank, (long long)q->order.index, q->order.traced, q->order.replayed);
        if (!q->checked)
            fprintf(out, "  against the replay file itself: it carries no digest of a trace "
                         "(written by hand, or before digests)\n");
        else if (q->edited)
            fprintf(out,
                    "  the replay file differs from its trace in %lld sequences (edited after "
                    "conversion?): first rank %d, file %d: trace %s; %s\n",
                    (long long)q->edited, q->edit.rank, q->edit.file, q->edit.traced,
                    q->edit.replayed);
        else
            fprintf(out, "  the replay file matches its trace's digests\n");
    }
    if (f->posix_ops)
        fprintf(out,
                "  levels: the trace's %lld POSIX calls scored as independent MPI-IO calls (the "
                "level a POSIX trace cannot say; the replay makes them so)\n",
                (long long)f->posix_ops);
    for (int i = 0; i < f->nnotes; i++)
        fprintf(out, "  conversion note: %s\n", f->notes[i]);
    fprintf(
        out,
        "  counts: operations %lld of %lld traced, bytes %lld of %lld, distinct offsets %lld of "
        "%lld\n",
        (long long)r->ops, (long long)t->ops, (long long)r->bytes, (long long)t->bytes,
        (long long)r->offsets, (long long)t->offsets);
    for (int k = 0; k < f->nranks; k++)
        if (!rp_counts_equal(&f->trace[k], &f->replay[k]) && bad++ < 4)
            fprintf(out,
                    "  rank %d differs: operations %lld (traced %lld), bytes %lld (%lld), "
                    "offsets %lld (%lld)\n",
                    k, (long long)f->replay[k].ops, (long long)f->trace[k].ops,
                    (long long)f->replay[k].bytes, (long long)f->trace[k].bytes,
                    (long long)f->replay[k].offsets, (long long)f->trace[k].offsets);
    if (bad > 4)
        fprintf(out, "  ... %d ranks differ in all\n", bad);
    else if (!bad)
        fprintf(out, "  every rank: operations, bytes and offsets as traced\n");
    fprintf(out, "  request sizes: Kolmogorov-Smirnov distance %.4f\n", f->ks);
    for (int k = 0; k < RP_NT; k++) {
        if (f->replay_time[k] < 0 && f->trace_time[k] < 0)
            continue;
        fprintf(out, "  time (%s): replay %.6f s", phase_names[k],
                f->replay_time[k] < 0 ? 0 : f->replay_time[k]);
        if (f->trace_time[k] >= 0)
            fprintf(out, ", traced %.6f s (ratio %.3f)\n", f->trace_time[k],
                    f->trace_time[k] > 0 ? f->replay_time[k] / f->trace_time[k] : 0.0);
        else
            fprintf(out, ", traced: unknown (no times in the trace)\n");
    }
}

/* Appends printf text to a growing buffer. */
__attribute__((format(printf, 4, 5))) static int
put(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return -1;
        if (*buf && *len + (size_t)n < *cap) {
            *len += (size_t)n;
            return 0;
        }
        size_t ncap = (*cap ? *cap * 2 : 4096) + (size_t)n;
        char *p = realloc(*buf, ncap);
        if (!p)
            return -1;
        *buf = p;
        *cap = ncap;
    }
}

static int
put_counts(char **b, size_t *l, size_t *c, const struct rp_counts *t, const struct rp_counts *r)
{
    const char *names[3] = {"operations", "bytes", "offsets"};
    const int64_t tv[3] = {t->ops, t->bytes, t->offsets}, rv[3] = {r->ops, r->bytes, r->offsets};
    int rc = 0;
    for (int k = 0; k < 3; k++)
        rc |= put(b, l, c, "%s\"%s\":{\"trace\":%lld,\"replay\":%lld,\"exact\":%s}", k ? "," : "",
                  names[k], (long long)tv[k], (long long)rv[k], tv[k] == rv[k] ? "true" : "false");
    return rc;
}

static int
put_string(char **b, size_t *l, size_t *c, const char *text)
{
    int rc = put(b, l, c, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        rc |= *p == '"' || *p == '\\' ? put(b, l, c, "\\%c", *p)
              : *p < 0x20             ? put(b, l, c, "\\u%04x", *p)
                                      : put(b, l, c, "%c", *p);
    return rc | put(b, l, c, "\"");
}

static int
put_diff(char **b, size_t *l, size_t *c, int have, const struct rp_seqdiff *d)
{
    if (!have)
        return put(b, l, c, "null");
    int rc = put(b, l, c, "{\"rank\":%d,\"file\":", d->rank);
    rc |= d->file < 0 ? put(b, l, c, "null") : put(b, l, c, "%d", d->file);
    rc |= put(b, l, c, ",\"index\":");
    rc |= d->index < 0 ? put(b, l, c, "null") : put(b, l, c, "%lld", (long long)d->index);
    rc |= put(b, l, c, ",\"traced\":");
    rc |= put_string(b, l, c, d->traced);
    rc |= put(b, l, c, ",\"replayed\":");
    rc |= put_string(b, l, c, d->replayed);
    return rc | put(b, l, c, "}");
}

/* sequences, reasons, notes and coverage, each followed by a comma */
static int
put_sequences(char **b, size_t *l, size_t *c, const struct rp_fidelity *f)
{
    const struct rp_sequences *q = &f->seq;
    int rc = put(b, l, c, "\"sequences\":{\"compared\":%lld,\"differ\":%lld,\"first_difference\":",
                 (long long)q->compared, (long long)q->differ);
    rc |= put_diff(b, l, c, q->have_first, &q->first);
    rc |=
        put(b, l, c, ",\"order\":{\"ranks\":%d,\"differ\":%d,\"first_difference\":", q->order_ranks,
            q->order_differ);
    rc |= put_diff(b, l, c, q->have_order, &q->order);
    rc |= put(b, l, c, "},\"trace_digests\":%s,\"edited\":%lld,\"first_edited\":",
              q->checked ? "true" : "false", (long long)q->edited);
    rc |= put_diff(b, l, c, q->have_edit, &q->edit);
    rc |= put(b, l, c, "},\"reasons\":[");
    for (int i = 0; i < f->nreasons; i++) {
        rc |= i ? put(b, l, c, ",") : 0;
        rc |= put_string(b, l, c, f->reasons[i]);
    }
    rc |= put(b, l, c, "],\"notes\":[");
    for (int i = 0; i < f->nnotes; i++) {
        rc |= i ? put(b, l, c, ",") : 0;
        rc |= put_string(b, l, c, f->notes[i]);
    }
    rc |= put(b, l, c,
              "],\"posix_scored_as_independent\":%lld,\"coverage\":", (long long)f->posix_ops);
    rc |= f->cov_counted ? put(b, l, c, "{\"traced_calls\":%lld,\"counted_calls\":%lld}",
                               (long long)f->cov_traced, (long long)f->cov_counted)
                         : put(b, l, c, "null");
    return rc | put(b, l, c, ",");
}

char *
rp_fidelity_json(const struct rp_fidelity *f)
{
    char *b = NULL;
    size_t l = 0, c = 0;
    int rc = put(&b, &l, &c, "{\"exact\":%s,\"compared\":\"%s\",",
                 rp_fidelity_exact(f) ? "true" : "false",
                 f->writes && f->reads ? "writes and reads"
                 : f->writes           ? "writes"
                                       : "reads");
    rc |= put_sequences(&b, &l, &c, f);
    rc |= put(&b, &l, &c, "\"total\":{");
    rc |= put_counts(&b, &l, &c, &f->trace_total, &f->replay_total);
    rc |= put(&b, &l, &c, "},\"ranks\":[");
    for (int r = 0; r < f->nranks; r++) {
        rc |= put(&b, &l, &c, "%s{\"rank\":%d,", r ? "," : "", r);
        rc |= put_counts(&b, &l, &c, &f->trace[r], &f->replay[r]);
        rc |= put(&b, &l, &c, "}");
    }
    rc |= put(&b, &l, &c, "],\"request_size_ks\":%.6g,\"time\":{", f->ks);
    for (int k = 0; k < RP_NT; k++) {
        rc |= put(&b, &l, &c, "%s\"%s\":{\"replay_seconds\":", k ? "," : "", phase_names[k]);
        rc |= f->replay_time[k] < 0 ? put(&b, &l, &c, "null")
                                    : put(&b, &l, &c, "%.9g", f->replay_time[k]);
        rc |= put(&b, &l, &c, ",\"trace_seconds\":");
        rc |= f->trace_time[k] < 0 ? put(&b, &l, &c, "null")
                                   : put(&b, &l, &c, "%.9g", f->trace_time[k]);
        rc |= put(&b, &l, &c, "}");
    }
    rc |= put(&b, &l, &c, "}}");
    if (rc) {
        free(b);
        return NULL;
    }
    return b;
}
