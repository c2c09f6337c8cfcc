/* SPDX-License-Identifier: BSD-3-Clause */
/* Chombo's timer table (timmy.txt), for the rows this suite measures. */
#include "chombo_table.h"

#include <string.h>

#define RULE_LEN 76

static void
rule(FILE *out, char c)
{
    for (int i = 0; i < RULE_LEN; i++)
        fputc(c, out);
    fputc('\n', out);
}

void
chombo_table(FILE *out, const struct chombo_row *rows, int n)
{
    struct iok_stat all = {0, 0, 0};
    int count = 0;
    for (int i = 0; i < n; i++) {
        all.min += rows[i].t.min;
        all.avg += rows[i].t.avg;
        all.max += rows[i].t.max;
        count += rows[i].count;
    }
    double pct_sum = 0;
    fprintf(out,
            "         Totals        WC per.      count        avg         min         max  \n");
    rule(out, '=');
    fprintf(out, "%21s%8.2f%% %10d %10.2f [%10.2f, %10.2f]\n", "Everything", 100.0, 1, all.avg,
            all.min, all.max);
    rule(out, '-');
    for (int i = 0; i < n; i++) {
        double pct = all.avg > 0 ? 100.0 * rows[i].t.avg / all.avg : 0;
        pct_sum += pct;
        fprintf(out, "%21s%8.2f%% %10d %10.2f [%10.2f, %10.2f]\n", rows[i].name, pct, rows[i].count,
                rows[i].t.avg, rows[i].t.min, rows[i].t.max);
    }
    rule(out, '=');
    fprintf(out, "T0         table tots:%7.2f%% %10d %10.2f [%10.2f, %10.2f]\n", pct_sum, count,
            all.avg, all.min, all.max);
}
