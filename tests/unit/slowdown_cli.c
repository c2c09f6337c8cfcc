/* SPDX-License-Identifier: BSD-3-Clause */
/* The mix's statistics (src/core/measure/slowdown.c) on the command line, for
 * python/tests/test_statistics_twice.py, which checks them live against
 * the campaign's (python/iokernels_campaign/report/verdict.py) on
 * generated samples: stdin holds two lines of numbers, a then b; stdout
 * one line: hl low high has_interval call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/measure/measure.h"

enum { MAXN = 4096 };

static int
read_line(double *v)
{
    char line[65536];
    if (!fgets(line, sizeof line, stdin))
        return -1;
    int n = 0;
    for (char *t = strtok(line, " \t\n"); t && n < MAXN; t = strtok(NULL, " \t\n"))
        v[n++] = strtod(t, NULL);
    return n;
}

int
main(void)
{
    static double a[MAXN], b[MAXN];
    int na = read_line(a), nb = read_line(b);
    if (na < 1 || nb < 1) {
        fprintf(stderr, "slowdown_cli: two lines of numbers expected on stdin\n");
        return 2;
    }
    struct iok_slowdown s;
    iok_slowdown_of(a, na, b, nb, &s);
    printf("%.17g %.17g %.17g %d %s\n", s.hl, s.low, s.high, s.has_interval, s.call);
    return 0;
}
