/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether a pass ran above its ceiling, and why, as far as the suite can
 * tell from what it measured. A ceiling is the best of several samples of
 * plain contiguous I/O of the same bytes with the run's durability and read
 * kind (ceiling.c); a pass above it is flagged, never shown silently:
 *
 * - a read judged against storage (after --drop-caches) whose bytes the OS
 *   did not read from storage (/proc/self/io read_bytes below the pass's
 *   bytes): it was served by the page cache;
 * - a buffered write (no --fsync): the pass and the probe both ran at
 *   memory speed, which moves from run to run by more than the pass's
 *   margin over the probe;
 * - within the probe's own spread (best sample / worst sample): noise;
 * - otherwise the suite has no explanation and says so. */
#include <stdio.h>
#include <string.h>

#include "core/measure/measure.h"

#define MiB 1048576.0

static void
spread(const double *bw, int n, double *lo, double *hi)
{
    *lo = *hi = n ? bw[0] : 0;
    for (int i = 1; i < n; i++) {
        if (bw[i] < *lo)
            *lo = bw[i];
        if (bw[i] > *hi)
            *hi = bw[i];
    }
}

void
iok_ceiling_judge(const struct iok_run *run, struct iok_pass_result *p)
{
    struct iok_ceiling *c = &p->ceiling;
    c->above = 0;
    c->reason[0] = '\0';
    p->cache_suspect = 0;
    int writing = p->op == IOK_OP_WRITE;
    double ref = writing ? c->bandwidth : c->read_bandwidth;
    if (!c->measured || ref <= 0 || p->bandwidth <= IOK_CEILING_MARGIN * ref)
        return;
    c->above = 1;
    double lo, hi;
    spread(writing ? c->write_bw : c->read_bw, c->samples, &lo, &hi);
    char probe[96];
    snprintf(probe, sizeof probe, "the probe's %d samples ran %.0f-%.0f MiB/s", c->samples,
             lo / MiB, hi / MiB);
    if (!writing && c->read_kind == IOK_CEIL_READ_STORAGE && p->os.read_bytes >= 0 &&
        p->os.read_bytes < IOK_FROM_STORAGE_FRACTION * (double)p->bytes) {
        p->cache_suspect = 1;
        snprintf(c->reason, sizeof c->reason,
                 "served from the page cache: the OS read %lld of its %lld bytes from storage "
                 "(%s)",
                 (long long)p->os.read_bytes, (long long)p->bytes,
                 p->cache[0] ? "the cache drop did not reach these pages" : "try --drop-caches");
    } else if (writing && !run->core->fsync) {
        snprintf(c->reason, sizeof c->reason,
                 "buffered: without --fsync the pass and the probe both wrote into the page "
                 "cache, at memory speed, which varies from run to run (%s); --fsync measures "
                 "storage",
                 probe);
    } else if (lo > 0 && p->bandwidth <= ref * (hi / lo)) {
        snprintf(c->reason, sizeof c->reason,
                 "within the probe's own spread (%s): timing noise on this machine", probe);
    } else {
        snprintf(c->reason, sizeof c->reason,
                 "not explained by the OS counts or the probe's spread (%s)", probe);
    }
}
