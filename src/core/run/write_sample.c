/* SPDX-License-Identifier: BSD-3-Clause */
/* A sample of what each rank wrote, read back after the write pass (untimed,
 * after its span). A library can report success for writes that never
 * reached the file: Open MPI 4.1's OMPIO prints "fbtl_pwritev failed" and
 * returns MPI_SUCCESS when one pwritev of a collective write fails
 * (ENOSPC on a full OST, a quota), and with cb_buffer_size 0 or 1 it writes
 * nothing at all. A run must not say "completed" for a file that does not
 * hold its values, wherever in the file they went missing.
 *
 * Three kinds of samples, per rank:
 *  - the ends: per variable, the first and the last element of the rank's
 *    last access to it (what a short write or a lost tail loses first);
 *  - a uniform random sample of NRANDOM elements over everything the rank
 *    wrote in the pass (every step, access and variable);
 *  - the last element of each of NCALLS runs (elements that lie one
 *    after another in the variable's layout: a row of a block) drawn
 *    uniformly from all the rank's runs: every run while they number
 *    NCALLS or fewer, so a write call lost whole (an independent write
 *    covers one run or more) is found for certain there.
 * Both random samples are reservoirs (Li's Algorithm L: O(n log(N/n))
 * draws, whatever N) from a generator seeded by --seed and the rank.
 * A lost region holding a fraction f of a rank's elements escapes the
 * random sample with probability (1 - f)^NRANDOM: 7.6% for f = 1%, 0.57%
 * for 2%, 2e-6 for 5%, below 1e-30 for a quarter (docs/reliability.md).
 * The values are compared as bytes, so kernel metadata and --values once
 * are checked as written; a position other ranks also write holds the same
 * deterministic value (replay). */
#define _GNU_SOURCE /* SEEK_HOLE, SEEK_DATA */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/run/run.h"
#include "iokernels/data.h"
#include "iokernels/error.h"

enum { NENDS = 2, NRANDOM = 256, NCALLS = 1024, VALUE_MAX = 16 };

struct sample {
    int varid;
    int64_t pos[IOK_MAX_DIMS];
    unsigned char val[VALUE_MAX];
};

/* A uniform sample of `cap` items of a stream whose length is not known
 * (Li's Algorithm L): every item up to cap, then skips drawn so that each
 * item stays with probability cap / seen. */
struct reservoir {
    struct sample *x;
    int cap, n;
    int64_t seen; /* items offered so far */
    int64_t next; /* the index of the next item taken */
    double w;     /* Algorithm L's W; 0 until the reservoir is full */
};

struct iok_wsample {
    int nvars;
    struct sample *ends; /* NENDS per variable */
    int *nends;
    struct sample elems[NRANDOM], calls[NCALLS];
    struct reservoir by_elem; /* uniform over the elements */
    struct reservoir by_run;  /* the last element of up to NCALLS runs of the file */
    uint64_t rng;
};

/* uniform in (0, 1), never 0 (its log is taken) */
static double
uniform(uint64_t *x)
{
    return ((double)(iok_rand_next(x) >> 11) + 0.5) / 9007199254740992.0;
}

/* The slot for the item at r->next, just reached; r->next moves on. */
static struct sample *
slot_for_next(struct reservoir *r, uint64_t *rng)
{
    int slot = r->n < r->cap ? r->n++ : (int)(iok_rand_next(rng) % (uint64_t)r->cap);
    if (r->n < r->cap) {
        r->next++;
        return &r->x[slot];
    }
    if (r->w == 0) /* just filled */
        r->w = exp(log(uniform(rng)) / r->cap);
    double gap = floor(log(uniform(rng)) / log1p(-r->w));
    r->next += 1 + (gap < 4e18 ? (int64_t)gap : (int64_t)4e18);
    r->w *= exp(log(uniform(rng)) / r->cap);
    return &r->x[slot];
}

struct iok_wsample *
iok_wsample_new(const struct iok_schema *s, uint64_t seed, int rank)
{
    struct iok_wsample *w = calloc(1, sizeof *w);
    size_t nv = (size_t)(s->nvars ? s->nvars : 1);
    if (w && (!(w->ends = calloc(nv * NENDS, sizeof *w->ends)) ||
              !(w->nends = calloc(nv, sizeof *w->nends)))) {
        iok_wsample_free(w);
        return NULL;
    }
    if (w) {
        w->nvars = s->nvars;
        w->rng = seed * 0x100000001b3ULL ^ ((uint64_t)rank << 32 | 0x5a17);
        w->by_elem = (struct reservoir){.x = w->elems, .cap = NRANDOM};
        w->by_run = (struct reservoir){.x = w->calls, .cap = NCALLS};
    }
    return w;
}

void
iok_wsample_free(struct iok_wsample *w)
{
    if (w) {
        free(w->ends);
        free(w->nends);
    }
    free(w);
}

/* row-major order of two positions: <0, 0, >0 */
static int
pos_cmp(const int64_t *a, const int64_t *b, int nd)
{
    for (int d = 0; d < nd; d++)
        if (a[d] != b[d])
            return a[d] < b[d] ? -1 : 1;
    return 0;
}

/* Element `r` (row-major) of the subarray start `st`, count `ct`. */
static void
unravel(int64_t r, const int64_t *st, const int64_t *ct, int nd, int64_t *pos)
{
    for (int d = nd - 1; d >= 0; d--) {
        pos[d] = st[d] + (ct[d] ? r % ct[d] : 0);
        r = ct[d] ? r / ct[d] : 0;
    }
}

static int
sampled(const struct iok_schema *s, const struct iok_access *a, const struct iok_wsample *w)
{
    const struct iok_var *var = &s->vars[a->varid];
    /* a compound is read whole by its backend: not sampled by element */
    return a->nsub > 0 && a->nelems > 0 && iok_type_size(var->type) <= VALUE_MAX &&
           var->compound < 0 && a->varid < w->nvars;
}

/* The first element of the first subarray with elements, the last of the last. */
static void
take_ends(struct iok_wsample *w, const struct iok_schema *s, const struct iok_access *a)
{
    int nd = s->vars[a->varid].ndims, stride = nd ? nd : 1;
    size_t es = iok_type_size(s->vars[a->varid].type);
    struct sample *e = w->ends + (size_t)a->varid * NENDS;
    int n = 0;
    for (int end = 0; end < NENDS; end++)
        for (int j0 = 0; j0 < a->nsub; j0++) {
            int j = end ? a->nsub - 1 - j0 : j0;
            const int64_t *st = a->starts + (size_t)j * stride,
                          *ct = a->counts + (size_t)j * stride;
            int64_t ne = 1;
            for (int d = 0; d < nd; d++)
                ne *= ct[d];
            if (ne == 0)
                continue;
            e[n].varid = a->varid;
            unravel(end ? ne - 1 : 0, st, ct, nd, e[n].pos);
            memcpy(e[n].val, (const char *)a->buf + (size_t)(end ? a->nelems - 1 : 0) * es, es);
            n++;
            break;
        }
    w->nends[a->varid] = n;
}

static void
keep(struct sample *x, const struct iok_access *a, size_t es, int64_t e, const int64_t *st,
     const int64_t *ct, int nd, int64_t r)
{
    x->varid = a->varid;
    unravel(r, st, ct, nd, x->pos);
    memcpy(x->val, (const char *)a->buf + (size_t)e * es, es);
}

/* Elements of the subarray (start st, count ct) that lie one after another
 * in the variable's row-major layout: its runs, each as long as this. */
static int64_t
run_length(const struct iok_schema *s, const struct iok_var *var, const int64_t *ct)
{
    int64_t len = 1;
    for (int d = var->ndims - 1; d >= 0; d--) {
        len *= ct[d];
        if (ct[d] != s->dims[var->dimids[d]].len) /* the run ends in this dimension */
            break;
    }
    return len > 0 ? len : 1;
}

/* The reservoirs' items among this access's elements and runs, found in
 * one walk over its subarrays (the indices taken only grow). A write call
 * covers one contiguous run of the file or more (an independent write of a
 * row), or a span of many (a collective buffer's): the last element of
 * each run sampled finds any call lost whole or cut short, while the rank's
 * runs number NCALLS or fewer; beyond, each run is sampled with
 * probability NCALLS / runs. */
static void
take_random(struct iok_wsample *w, const struct iok_schema *s, const struct iok_access *a)
{
    const struct iok_var *var = &s->vars[a->varid];
    int nd = var->ndims, stride = nd ? nd : 1;
    size_t es = iok_type_size(var->type);
    struct reservoir *re = &w->by_elem, *rr = &w->by_run;
    int64_t base = 0; /* elements of the subarrays before j */
    for (int j = 0; j < a->nsub; j++) {
        const int64_t *st = a->starts + (size_t)j * stride, *ct = a->counts + (size_t)j * stride;
        int64_t ne = 1;
        for (int d = 0; d < nd; d++)
            ne *= ct[d];
        if (ne == 0)
            continue;
        while (re->next < re->seen + base + ne) {
            int64_t e = re->next - re->seen; /* in the access's buffer */
            keep(slot_for_next(re, &w->rng), a, es, e, st, ct, nd, e - base);
        }
        int64_t run = run_length(s, var, ct), nruns = ne / run;
        while (rr->next < rr->seen + nruns) {
            int64_t r = (rr->next - rr->seen + 1) * run - 1; /* its last: a short write's loss */
            keep(slot_for_next(rr, &w->rng), a, es, base + r, st, ct, nd, r);
        }
        rr->seen += nruns;
        base += ne;
    }
    re->seen += a->nelems;
}

void
iok_wsample_take(struct iok_wsample *w, const struct iok_schema *s, const struct iok_reqlist *r)
{
    for (int i = 0; w && i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        if (!sampled(s, a, w))
            continue;
        take_ends(w, s, a);
        take_random(w, s, a);
    }
}

/* "name[i][j]" of a sample */
static void
describe(const struct iok_var *var, const int64_t *pos, char *out, size_t len)
{
    size_t o = (size_t)snprintf(out, len, "%s", var->name);
    for (int d = 0; d < var->ndims && o < len; d++)
        o += (size_t)snprintf(out + o, len - o, "[%lld]", (long long)pos[d]);
}

static int sort_var_nd; /* qsort's comparator has no context argument */

static int
by_pos(const void *a, const void *b)
{
    return pos_cmp(((const struct sample *)a)->pos, ((const struct sample *)b)->pos, sort_var_nd);
}

/* The samples of one variable in the file's order (a backend may merge
 * them so), once each; *n of them. */
static struct sample *
of_var(const struct iok_wsample *w, int v, int nd, int *n)
{
    struct sample *out = malloc((size_t)(NENDS + NRANDOM + NCALLS) * sizeof *out);
    *n = 0;
    for (int i = 0; out && i < w->nends[v]; i++)
        out[(*n)++] = w->ends[(size_t)v * NENDS + i];
    for (int i = 0; out && i < w->by_elem.n; i++)
        if (w->elems[i].varid == v)
            out[(*n)++] = w->elems[i];
    for (int i = 0; out && i < w->by_run.n; i++)
        if (w->calls[i].varid == v)
            out[(*n)++] = w->calls[i];
    sort_var_nd = nd;
    if (out)
        qsort(out, (size_t)*n, sizeof *out, by_pos);
    int k = 0;
    for (int i = 0; out && i < *n; i++)
        if (k == 0 || pos_cmp(out[k - 1].pos, out[i].pos, nd) != 0)
            out[k++] = out[i];
    *n = k;
    return out;
}

/* What was read against what was written: the count of differences, of
 * them those read as zero bytes, the first described. */
static int64_t
compare(struct sample *const *want, const struct iok_schema *s, const struct iok_reqlist *rl,
        int64_t *zeros, char *first, size_t len)
{
    int64_t bad = 0;
    static const unsigned char zero[VALUE_MAX];
    for (int i = 0; i < rl->n; i++) {
        const struct iok_access *a = &rl->acc[i];
        const struct iok_var *var = &s->vars[a->varid];
        size_t es = iok_type_size(var->type);
        for (int j = 0; j < a->nsub; j++) {
            const void *got = (const char *)a->buf + (size_t)j * es;
            const struct sample *x = &want[a->varid][j];
            if (!memcmp(got, x->val, es))
                continue;
            *zeros += !memcmp(got, zero, es);
            if (!bad++) {
                char where[256], g[64], e[64];
                describe(var, x->pos, where, sizeof where);
                iok_data_format(var->type, got, g, sizeof g);
                iok_data_format(var->type, x->val, e, sizeof e);
                snprintf(first, len, "%s reads %s, the run wrote %s", where, g, e);
            }
        }
    }
    return bad;
}

/* What the file system shows of the file: its first hole, if any (a write
 * lost below the end of the file leaves one where the file system keeps
 * holes; elsewhere the lost bytes read as zeros). */
static void
holes(const char *path, char *out, size_t len)
{
    struct stat st;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        out[0] = '\0';
        if (fd >= 0)
            close(fd);
        return;
    }
    off_t hole = lseek(fd, 0, SEEK_HOLE);
    if (hole >= 0 && hole < st.st_size) {
        off_t data = lseek(fd, hole, SEEK_DATA);
        long long n = (long long)((data > hole ? data : st.st_size) - hole);
        snprintf(out, len, "; the file has a hole at byte %lld, %lld bytes long", (long long)hole,
                 n);
    } else {
        snprintf(out, len, "; the file has no hole its file system shows");
    }
    close(fd);
}

/* The library's file is left open after a failure (see engine.c: close_files). */
static int
failed(int rc)
{
    iok_abandoned = 1;
    return rc;
}

/* Every rank lists the same variables (those any rank sampled), each with
 * this rank's samples as single elements; want[v]: what they should hold. */
static int
build(const struct iok_run *run, const char *path, const struct iok_schema *s, int shared,
      const struct iok_wsample *w, struct iok_reqlist *rl, struct sample **want)
{
    int *has = calloc((size_t)(s->nvars ? s->nvars : 1), sizeof *has);
    int rc = has && w ? IOK_OK : iok_error(IOK_EIO, "out of memory checking %s", path);
    for (int v = 0; rc == IOK_OK && v < s->nvars; v++)
        has[v] = w->nends[v] > 0;
    for (int i = 0; rc == IOK_OK && i < w->by_elem.n; i++)
        has[w->elems[i].varid] = 1;
    for (int i = 0; rc == IOK_OK && i < w->by_run.n; i++)
        has[w->calls[i].varid] = 1;
    if (shared && has)
        MPI_Allreduce(MPI_IN_PLACE, has, s->nvars, MPI_INT, MPI_MAX, run->comm);
    for (int v = 0; rc == IOK_OK && v < s->nvars; v++) {
        if (!has[v])
            continue;
        int nd = s->vars[v].ndims, n = 0;
        want[v] = of_var(w, v, nd, &n);
        struct iok_access *a = want[v] ? iok_reqlist_add(rl, s, v, n) : NULL;
        if (!a) {
            rc = iok_error(IOK_EIO, "out of memory checking %s", path);
            break;
        }
        for (int j = 0; j < n; j++)
            for (int d = 0; d < nd; d++) {
                a->starts[(size_t)j * nd + d] = want[v][j].pos[d];
                a->counts[(size_t)j * nd + d] = 1;
            }
    }
    free(has);
    return rc == IOK_OK ? iok_reqlist_finish(rl, s) : rc;
}

int
iok_wsample_check(const struct iok_run *run, const struct iok_backend_params *params,
                  const char *path, const struct iok_schema *s, int shared,
                  const struct iok_wsample *w)
{
    const struct iok_backend *be = run->backend;
    struct iok_reqlist rl;
    iok_reqlist_init(&rl);
    struct sample **want = calloc((size_t)(s->nvars ? s->nvars : 1), sizeof *want);
    int rc = want ? build(run, path, s, shared, w, &rl, want)
                  : iok_error(IOK_EIO, "out of memory checking %s", path);
    void *h = NULL;
    /* Read independently where the backend can: a few hundred single
     * elements per rank need no collective call each (NetCDF-4 makes one
     * library call per element; collective, the check cost 33-82% of a
     * BTIO write's time, independent 5-16%: bench/write-check). */
    struct iok_backend_params ip = *params;
    int deflated = 0; /* HDF5 reads a compressed dataset collectively only */
    for (int v = 0; v < s->nvars; v++)
        deflated |= s->vars[v].deflate > 0;
    const int indep = (be->caps & IOK_CAP_INDEPENDENT) && !deflated;
    if (indep)
        ip.collective = 0;
    if ((rc = iok_agree(run->comm, rc)) == IOK_OK)
        rc = iok_agree(run->comm, be->open(&h, path, s, &ip));
    int stop = 0;
    if (rc == IOK_OK &&
        (rc = iok_step_agree(run, run->comm, h, shared && !indep, IOK_OK, &rl, &stop, 1)))
        rc = failed(rc);
    if (rc == IOK_OK) {
        int grc = be->xfer(h, IOK_DIR_READ, &rl), wrc = iok_backend_wait(be, h);
        if ((rc = iok_agree(run->comm, grc ? grc : wrc)))
            rc = failed(rc);
    }
    if (rc == IOK_OK)
        rc = iok_agree(run->comm, be->close(h));
    if (rc == IOK_OK) {
        char first[512] = "", seen[160] = "";
        int64_t zeros = 0, total = 0;
        int64_t bad = compare(want, s, &rl, &zeros, first, sizeof first);
        for (int i = 0; i < rl.n; i++)
            total += rl.acc[i].nsub;
        if (bad)
            holes(path, seen, sizeof seen);
        rc = bad ? iok_error(IOK_EIO,
                             "%s does not hold what the write put there, though every "
                             "library call reported success: %lld of the %lld values "
                             "rank %d read back differ, %lld of them zeros%s; first: "
                             "%s (the library returned no error, so the cause, a full "
                             "disk or quota, an I/O error, a lost or short write, is "
                             "not known to the suite)",
                             path, (long long)bad, (long long)total, run->rank, (long long)zeros,
                             seen, first)
                 : IOK_OK;
        if (bad)
            iok_note_full(path, 0); /* a file system that is full now is named */
        rc = iok_agree(run->comm, rc);
    }
    for (int v = 0; want && v < s->nvars; v++)
        free(want[v]);
    free(want);
    iok_reqlist_free(&rl);
    return rc;
}
