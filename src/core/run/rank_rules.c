/* SPDX-License-Identifier: BSD-3-Clause */
/* The rules on the job's rank count: the kernel's declared rule (struct
 * iok_kernel.ranks) and its own check_ranks(). Applied before plan() in a
 * run, and by `--check --ranks N` for a count the job does not have, so
 * that a campaign learns a case's refusal without launching its ranks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/lib.h"
#include "core/run/run.h"
#include "iokernels/error.h"

static int
is_square(int n)
{
    for (int q = 1; q <= n / q; q++)
        if (q * q == n)
            return 1;
    return 0;
}

int
iok_rank_rules(const struct iok_kernel *k, const void *kopts, int nprocs)
{
    if (k->ranks && !strcmp(k->ranks, "square") && !is_square(nprocs))
        return iok_error(IOK_EUSAGE,
                         "%s needs a square number of processes (1, 4, 9, 16, ...), not %d",
                         k->name, nprocs);
    return k->check_ranks ? k->check_ranks(kopts, nprocs) : IOK_OK;
}

int
iok_rank_counts(const char *text, int *counts, int max, int *n)
{
    *n = 0;
    for (const char *p = text; *p;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > 1L << 30 || (*end && *end != ',') || *n == max)
            return iok_error(IOK_EUSAGE,
                             "command line: --ranks takes rank counts N[,N...] (at most %d, each "
                             "at least 1), not '%s'",
                             max, iok_quote(text));
        counts[(*n)++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (*n == 0)
        return iok_error(IOK_EUSAGE, "command line: --ranks takes rank counts N[,N...], not ''");
    return IOK_OK;
}
