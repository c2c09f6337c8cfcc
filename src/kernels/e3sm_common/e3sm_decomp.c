/* SPDX-License-Identifier: BSD-3-Clause */
/* E3SM decompositions: rank assignment and runs (pure, unit-tested). */
#include "e3sm_decomp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
e3sm_assign(int64_t decomp_nprocs, int nprocs, int rank, int64_t *first, int64_t *count)
{
    int64_t q = decomp_nprocs / nprocs, r = decomp_nprocs % nprocs;
    *count = q + (rank < r ? 1 : 0);
    *first = (int64_t)rank * q + (rank < r ? rank : r);
}

struct pair {
    int64_t off, len;
};

static int
cmp_pair(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

int
e3sm_runs_build(const int64_t *off, const int64_t *len, int64_t n, int64_t fastest, int64_t total,
                struct e3sm_runs *out, char *err, size_t errlen)
{
    return e3sm_runs_build_order(off, len, n, fastest, total, 1, out, err, errlen);
}

int
e3sm_runs_build_order(const int64_t *off, const int64_t *len, int64_t n, int64_t fastest,
                      int64_t total, int sorted, struct e3sm_runs *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (fastest < 1)
        fastest = 1;
    /* validate and count the pieces after splitting at row boundaries */
    int64_t pieces = 0;
    for (int64_t i = 0; i < n; i++) {
        if (len[i] < 1) {
            snprintf(err, errlen, "request %lld has length %lld (must be at least 1)", (long long)i,
                     (long long)len[i]);
            return -1;
        }
        if (off[i] < 0 || off[i] > total - len[i]) {
            snprintf(err, errlen,
                     "request %lld (offset %lld, length %lld) is outside the array of %lld "
                     "elements",
                     (long long)i, (long long)off[i], (long long)len[i], (long long)total);
            return -1;
        }
        pieces += (off[i] + len[i] - 1) / fastest - off[i] / fastest + 1;
    }
    struct pair *p = malloc((size_t)(pieces ? pieces : 1) * sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory for %lld requests", (long long)pieces);
        return -1;
    }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t o = off[i], left = len[i];
        while (left > 0) {
            int64_t room = fastest - o % fastest, take = left < room ? left : room;
            p[m++] = (struct pair){o, take};
            o += take;
            left -= take;
        }
    }
    struct pair *given = NULL; /* unsorted: the pieces in file order */
    if (!sorted) {
        given = malloc((size_t)(m ? m : 1) * sizeof *given);
        if (!given) {
            free(p);
            snprintf(err, errlen, "out of memory for %lld requests", (long long)m);
            return -1;
        }
        memcpy(given, p, (size_t)m * sizeof *p);
    }
    qsort(p, (size_t)m, sizeof *p, cmp_pair);
    int64_t k = 0, nelems = 0;
    for (int64_t i = 0; i < m; i++) {
        nelems += p[i].len;
        if (k > 0 && p[i].off < p[k - 1].off + p[k - 1].len) {
            snprintf(err, errlen,
                     "requests overlap: offset %lld (length %lld) and offset %lld (length "
                     "%lld)",
                     (long long)p[k - 1].off, (long long)p[k - 1].len, (long long)p[i].off,
                     (long long)p[i].len);
            free(p);
            free(given);
            return -1;
        }
        if (k > 0 && p[i].off == p[k - 1].off + p[k - 1].len && p[i].off % fastest != 0)
            p[k - 1].len += p[i].len;
        else
            p[k++] = p[i];
    }
    if (given) { /* checked: now the file's order, unmerged */
        free(p);
        p = given;
        k = m;
    }
    out->off = malloc((size_t)(k ? k : 1) * sizeof *out->off);
    out->len = malloc((size_t)(k ? k : 1) * sizeof *out->len);
    if (!out->off || !out->len) {
        free(p);
        e3sm_runs_free(out);
        snprintf(err, errlen, "out of memory for %lld runs", (long long)k);
        return -1;
    }
    for (int64_t i = 0; i < k; i++) {
        out->off[i] = p[i].off;
        out->len[i] = p[i].len;
    }
    out->n = k;
    out->cap = k ? k : 1;
    out->nelems = nelems;
    free(p);
    return 0;
}

int
e3sm_runs_add(struct e3sm_runs *r, int64_t off, int64_t len)
{
    if (r->n == r->cap) {
        int64_t cap = r->cap ? 2 * r->cap : 256;
        int64_t *o = realloc(r->off, (size_t)cap * sizeof *o);
        if (!o)
            return -1;
        r->off = o;
        int64_t *l = realloc(r->len, (size_t)cap * sizeof *l);
        if (!l)
            return -1;
        r->len = l;
        r->cap = cap;
    }
    r->off[r->n] = off;
    r->len[r->n++] = len;
    r->nelems += len;
    return 0;
}

void
e3sm_runs_free(struct e3sm_runs *r)
{
    free(r->off);
    free(r->len);
    memset(r, 0, sizeof *r);
}

void
e3sm_decomps_free(struct e3sm_decomps *d)
{
    for (int i = 0; i < E3SM_MAX_DECOMP; i++)
        e3sm_runs_free(&d->d[i].runs);
    memset(d, 0, sizeof *d);
}
