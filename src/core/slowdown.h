/* SPDX-License-Identifier: BSD-3-Clause */
/* A ratio of two series of times with its exact 95% interval (slowdown.c). */
#ifndef IOK_SLOWDOWN_H
#define IOK_SLOWDOWN_H

struct iok_slowdown {
    double ratio;     /* median(a) / median(b) */
    double hl;        /* Hodges-Lehmann ratio: median of a_i / b_j */
    double low, high; /* its exact 95% interval, when has_interval */
    int has_interval;
    int n_a, n_b;
    const char *call; /* "slower", "faster", "tied" (holds 1), "untested" */
};

double iok_median(const double *v, int n);
int iok_moses_cut(int na, int nb);
void iok_slowdown_of(const double *a, int na, const double *b, int nb, struct iok_slowdown *s);

#endif
