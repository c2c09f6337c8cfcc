/* SPDX-License-Identifier: BSD-3-Clause */
/* A mix member's slowdown (src/core/measure/slowdown.c): the Hodges-Lehmann ratio
 * and its exact 95% interval, the same figures as the campaign's verdicts
 * (python/iokernels_campaign/report/verdict.py, values computed there), and the
 * call: slower on a series twice as long, tied on two alike, untested at 3
 * against 3 (no interval exists). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "core/measure/measure.h"

static int
near(double a, double b)
{
    return fabs(a - b) < 1e-9 * (fabs(b) + 1);
}

int
main(void)
{
    /* the cut c of the exact interval, as verdict._critical gives it */
    static const int sizes[][3] = {{4, 4, 1},    {5, 5, 3}, {6, 6, 6},
                                   {10, 10, 24}, {3, 3, 0}, {4, 6, 3}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        CHECK(iok_moses_cut(sizes[i][0], sizes[i][1]) == sizes[i][2], "%d x %d: cut %d, want %d",
              sizes[i][0], sizes[i][1], iok_moses_cut(sizes[i][0], sizes[i][1]), sizes[i][2]);

    struct iok_slowdown s;
    double slow[] = {2.1, 2.3, 1.9, 2.2, 2.05}, base[] = {1.0, 1.1, 0.95, 1.05, 1.02};
    iok_slowdown_of(slow, 5, base, 5, &s);
    CHECK(s.has_interval && !strcmp(s.call, "slower"), "twice as long: %s", s.call);
    CHECK(near(s.hl, 2.0588235294117645) && near(s.low, 1.8627450980392155) && near(s.high, 2.3),
          "verdict.ratio gives 2.0588 (1.8627-2.3), got %.10g (%.10g-%.10g)", s.hl, s.low, s.high);

    double t2[] = {1.0, 1.2, 0.9, 1.1}, a2[] = {1.05, 0.95, 1.15, 1.0};
    iok_slowdown_of(t2, 4, a2, 4, &s);
    CHECK(!strcmp(s.call, "tied") && s.low <= 1 && s.high >= 1, "alike: %s", s.call);
    CHECK(near(s.hl, 1.0215078369104984) && near(s.low, 0.782608695652174) &&
              near(s.high, 1.263157894736842),
          "verdict.ratio gives 1.0215 (0.7826-1.2632), got %.10g (%.10g-%.10g)", s.hl, s.low,
          s.high);

    /* the other way: together faster than alone */
    iok_slowdown_of(base, 5, slow, 5, &s);
    CHECK(!strcmp(s.call, "faster") && s.high < 1, "half as long: %s", s.call);

    iok_slowdown_of(slow, 3, base, 3, &s);
    CHECK(!s.has_interval && !strcmp(s.call, "untested"), "3 against 3: %s", s.call);
    CHECK(near(s.ratio, 2.1 / 1.0), "ratio of medians %.6g", s.ratio);
    return check_summary("test_slowdown");
}
