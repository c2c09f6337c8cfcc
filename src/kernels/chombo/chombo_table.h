/* SPDX-License-Identifier: BSD-3-Clause */
/* The Chombo benchmark's timing table (its timmy.txt): per row the share of
 * the total, the count, and avg [min, max] over ranks of each rank's own
 * seconds. "Everything" and "table tots" are the sums of the rows. */
#ifndef IOK_CHOMBO_TABLE_H
#define IOK_CHOMBO_TABLE_H

#include <stdio.h>

#include "iokernels/run.h"

struct chombo_row {
    const char *name;
    int count;
    struct iok_stat t; /* seconds: min, avg, max over ranks */
};

void chombo_table(FILE *out, const struct chombo_row *rows, int n);

#endif
