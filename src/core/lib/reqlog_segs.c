/* SPDX-License-Identifier: BSD-3-Clause */
/* The one merge of contiguous segments (iokernels/reqlog.h): the request
 * log's rows, the replay's read-back and fill, the fidelity's runs and the
 * sequence digests all join segments here. */
#include <stdlib.h>

#include "iokernels/reqlog.h"

static int
cmp_seg(const void *a, const void *b)
{
    const struct iok_logseg *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return (x->len > y->len) - (x->len < y->len);
}

int64_t
iok_segs_merge(struct iok_logseg *s, int64_t n, enum iok_segs_merge how)
{
    int sorted = how == IOK_SEGS_SORTED;
    if (sorted)
        qsort(s, (size_t)n, sizeof *s, cmp_seg);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (sorted && s[i].len <= 0)
            continue;
        int64_t end = m ? s[m - 1].off + s[m - 1].len : 0;
        if (m && (sorted ? s[i].off <= end : s[i].off == end)) {
            if (s[i].off + s[i].len > end)
                s[m - 1].len = s[i].off + s[i].len - s[m - 1].off;
        } else {
            s[m++] = s[i];
        }
    }
    return m;
}
