/* SPDX-License-Identifier: BSD-3-Clause */
/* The digest of one (rank, file)'s ordered operations (iokernels/reqlog.h):
 * what a replay file records of its trace, so that a replay is scored
 * against the trace it came from and not only against the file it read. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"
#include "iokernels/reqlog.h"
#include "iokernels/request.h"

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
    n = iok_segs_merge(segs, n, IOK_SEGS_SORTED);
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

int
iok_seqdigests(const struct iok_logop *ops, int64_t nops, const struct iok_logseg *segs, int nranks,
               int nfiles, struct iok_seqdigest *d)
{
    for (int64_t g = 0; g < (int64_t)nranks * nfiles; g++)
        iok_seqdigest_init(&d[g]);
    struct iok_logseg *tmp = NULL; /* the digest merges in place: a copy */
    int64_t cap = 0;
    for (int64_t i = 0; i < nops; i++) {
        const struct iok_logop *o = &ops[i];
        if (o->nseg > cap) {
            free(tmp);
            cap = o->nseg;
            if (!(tmp = malloc((size_t)cap * sizeof *tmp)))
                return iok_error(IOK_EIO, "out of memory for the sequence digests");
        }
        if (o->nseg)
            memcpy(tmp, segs + o->seg0, (size_t)o->nseg * sizeof *tmp);
        iok_seqdigest_add(&d[(int64_t)o->rank * nfiles + o->file], o->write,
                          o->level == IOK_LEVEL_COLL, tmp, o->nseg);
    }
    free(tmp);
    return IOK_OK;
}
