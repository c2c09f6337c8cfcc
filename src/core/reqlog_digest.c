/* SPDX-License-Identifier: BSD-3-Clause */
/* The digest of one (rank, file)'s ordered operations (iokernels/reqlog.h):
 * what a replay file records of its trace, so that a replay is scored
 * against the trace it came from and not only against the file it read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "iokernels/reqlog.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static void
fnv(uint64_t *h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        *h ^= (unsigned char)s[i];
        *h *= FNV_PRIME;
    }
}

static int
cmp_seg(const void *a, const void *b)
{
    const struct iok_logseg *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return (x->len > y->len) - (x->len < y->len);
}

int64_t
iok_seq_runs(struct iok_logseg *s, int64_t n)
{
    qsort(s, (size_t)n, sizeof *s, cmp_seg);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (s[i].len <= 0)
            continue;
        if (m && s[i].off <= s[m - 1].off + s[m - 1].len) {
            int64_t end = s[i].off + s[i].len;
            if (end > s[m - 1].off + s[m - 1].len)
                s[m - 1].len = end - s[m - 1].off;
        } else {
            s[m++] = s[i];
        }
    }
    return m;
}

void
iok_seqdigest_init(struct iok_seqdigest *d)
{
    d->hash = FNV_OFFSET;
    d->ops = d->bytes = 0;
}

void
iok_seqdigest_add(struct iok_seqdigest *d, int write, int coll, struct iok_logseg *segs, int64_t n)
{
    char buf[64];
    n = iok_seq_runs(segs, n);
    fnv(&d->hash, write ? "w" : "r", 1);
    fnv(&d->hash, coll ? "c" : "i", 1);
    for (int64_t i = 0; i < n; i++) {
        int k = snprintf(buf, sizeof buf, " %" PRId64 "+%" PRId64, segs[i].off, segs[i].len);
        fnv(&d->hash, buf, (size_t)k);
        d->bytes += segs[i].len;
    }
    fnv(&d->hash, "\n", 1);
    d->ops++;
}
