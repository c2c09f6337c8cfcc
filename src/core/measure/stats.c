/* SPDX-License-Identifier: BSD-3-Clause */
/* Statistics over --iterations, as IOR gives them: per operation, each
 * iteration's bandwidth (its bytes, all files, over its time: the sum of its
 * passes' open->close spans) and time; min, max, mean, standard deviation
 * (IOR's: over the N values, divided by N) and median. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/measure/measure.h"

static const double MiB = 1048576.0, MB = 1e6;

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void
iok_spread_of(const double *v, int n, struct iok_spread *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (n == 0)
        return;
    double *w = malloc((size_t)n * sizeof *w);
    if (!w)
        return;
    memcpy(w, v, (size_t)n * sizeof *w);
    qsort(w, (size_t)n, sizeof *w, cmp_double);
    s->min = w[0];
    s->max = w[n - 1];
    s->median = n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
    double sum = 0, var = 0;
    for (int i = 0; i < n; i++)
        sum += w[i];
    s->mean = sum / n;
    for (int i = 0; i < n; i++)
        var += (w[i] - s->mean) * (w[i] - s->mean);
    s->stddev = sqrt(var / n);
    free(w);
}

int
iok_op_iterations(const struct iok_result *res, int iterations, enum iok_op op,
                  struct iok_spread *bw, struct iok_spread *time)
{
    double *b = malloc((size_t)(iterations + 1) * sizeof *b);
    double *t = malloc((size_t)(iterations + 1) * sizeof *t);
    int seen = 0;
    for (int it = 0; b && t && it < iterations; it++) {
        double bytes = 0, span = 0;
        int any = 0;
        for (int i = 0; i < res->npasses; i++)
            if (res->pass[i].iteration == it && res->pass[i].op == op &&
                !res->pass[i].reference) { /* --async-reference's own: not the run's */
                bytes += (double)res->pass[i].bytes;
                span += res->pass[i].io_time;
                any = 1;
            }
        if (any) {
            b[seen] = span > 0 ? bytes / span : 0;
            t[seen++] = span;
        }
    }
    iok_spread_of(b, seen, bw);
    iok_spread_of(t, seen, time);
    free(b);
    free(t);
    return seen;
}

void
iok_report_iterations(const struct iok_run *run, const struct iok_result *res, FILE *out)
{
    static const char *const max_names[3] = {"Max Write:", "Max Read: ", "Max Verify:"};
    int n = 0; /* the iterations run (--async-reference adds a warm-up) */
    for (int i = 0; i < res->npasses; i++)
        n = res->pass[i].iteration >= n ? res->pass[i].iteration + 1 : n;
    struct iok_spread bw[3], t[3];
    int seen[3];
    for (int op = 0; op < 3; op++)
        seen[op] = iok_op_iterations(res, n, op, &bw[op], &t[op]);
    fputc('\n', out);
    for (int op = 0; op < 3; op++)
        if (seen[op])
            fprintf(out, "%s %.2f MiB/sec (%.2f MB/sec)\n", max_names[op], bw[op].max / MiB,
                    bw[op].max / MB);
    char crowd[96];
    iok_cores_words(run->cores, crowd, sizeof crowd);
    fprintf(out,
            "\nSummary of all iterations (each iteration's bytes over its open->close "
            "span%s%s%s):\n",
            crowd[0] ? "; " : "", crowd,
            run->core->async_reference
                ? "; writes: the --async iterations, their synchronous reference in the overlap "
                  "line"
                : "");
    fprintf(out, "%-9s %10s %10s %10s %10s %11s %10s %10s %10s %10s %10s %6s %4s\n", "Operation",
            "Max(MiB)", "Min(MiB)", "Mean(MiB)", "StdDev", "Median(MiB)", "Max(s)", "Min(s)",
            "Mean(s)", "StdDev(s)", "Median(s)", "#Tasks", "reps");
    for (int op = 0; op < 3; op++) {
        if (!seen[op])
            continue;
        fprintf(out,
                "%-9s %10.2f %10.2f %10.2f %10.2f %11.2f %10.5f %10.5f %10.5f %10.5f %10.5f %6d "
                "%4d\n",
                iok_op_names[op], bw[op].max / MiB, bw[op].min / MiB, bw[op].mean / MiB,
                bw[op].stddev / MiB, bw[op].median / MiB, t[op].max, t[op].min, t[op].mean,
                t[op].stddev, t[op].median, run->nprocs, seen[op]);
    }
}
