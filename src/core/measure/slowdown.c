/* SPDX-License-Identifier: BSD-3-Clause */
/* The ratio of two series of times (a mix member together / alone), as the
 * campaign's verdicts compute it (python/iokernels_campaign/report/verdict.py):
 * the Hodges-Lehmann ratio (the median of every a_i / b_j, on logs) with
 * its exact 95% interval (Moses: c pair ratios cut from each end, c from
 * the exact law of the Mann-Whitney U without ties). The call: "tied" when
 * the interval holds 1, "slower" above, "faster" below, "untested" when
 * the runs are too few for any interval (3 against 3). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/measure/measure.h"

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the median as the iterations' statistics compute it (stats.c) */
double
iok_median(const double *v, int n)
{
    if (n < 1)
        return NAN;
    struct iok_spread sp;
    iok_spread_of(v, n, &sp);
    return sp.median;
}

/* The number c of pair ratios cut from each end: the smallest u with
 * P(U <= u) > alpha / 2 under the null, U's law counted by the recurrence
 * N(m, n, u) = N(m - 1, n, u - n) + N(m, n - 1, u). */
int
iok_moses_cut(int na, int nb)
{
    int umax = na * nb;
    /* law[j][u] for the current m, j = 0..nb: doubles (exact to 2^53) */
    double *law = calloc((size_t)(nb + 1) * (size_t)(umax + 1), sizeof *law);
    double *prev = calloc((size_t)(nb + 1) * (size_t)(umax + 1), sizeof *prev);
    if (!law || !prev) {
        free(law);
        free(prev);
        return 0;
    }
#define AT(t, j, u) t[(size_t)(j) * (size_t)(umax + 1) + (size_t)(u)]
    for (int j = 0; j <= nb; j++)
        AT(prev, j, 0) = 1; /* m = 0: one arrangement, U = 0 */
    for (int m = 1; m <= na; m++) {
        memset(law, 0, (size_t)(nb + 1) * (size_t)(umax + 1) * sizeof *law);
        AT(law, 0, 0) = 1;
        for (int j = 1; j <= nb; j++)
            for (int u = 0; u <= m * j; u++)
                AT(law, j, u) = (u >= j ? AT(prev, j, u - j) : 0) + AT(law, j - 1, u);
        double *t = prev;
        prev = law;
        law = t;
    }
    double total = 0, cum = 0;
    for (int u = 0; u <= umax; u++)
        total += AT(prev, nb, u);
    int c = 0;
    while (c <= umax && (cum += AT(prev, nb, c)) / total <= 0.025 + 1e-12)
        c++;
#undef AT
    free(law);
    free(prev);
    return c;
}

void
iok_slowdown_of(const double *a, int na, const double *b, int nb, struct iok_slowdown *s)
{
    memset(s, 0, sizeof *s);
    s->n_a = na;
    s->n_b = nb;
    s->call = "untested";
    if (na < 1 || nb < 1)
        return;
    s->ratio = iok_median(a, na) / iok_median(b, nb);
    int c = iok_moses_cut(na, nb);
    int np = na * nb;
    double *d = malloc((size_t)np * sizeof *d);
    if (!d)
        return;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            d[i * nb + j] = log(a[i]) - log(b[j]);
    qsort(d, (size_t)np, sizeof *d, cmp_double);
    s->hl = exp(np % 2 ? d[np / 2] : (d[np / 2 - 1] + d[np / 2]) / 2);
    if (c > 0) {
        s->low = exp(d[c - 1]);
        s->high = exp(d[np - c]);
        s->has_interval = 1;
        s->call = s->low > 1 ? "slower" : s->high < 1 ? "faster" : "tied";
    }
    free(d);
}
