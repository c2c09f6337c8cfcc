/* SPDX-License-Identifier: BSD-3-Clause */
/* The verdict on a pass against its ceiling (src/core/measure/ceiling_judge.c):
 * at or below it nothing is flagged; above it, the reason found: a storage
 * read the OS did not read from storage, a buffered write, the probe's own
 * spread, or none. */
#include <string.h>

#include "check.h"
#include "core/measure/measure.h"

#define MiB 1048576.0

static struct iok_pass_result
pass(enum iok_op op, double mib_s, double s0, double s1, double s2)
{
    struct iok_pass_result p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.bytes = 64 << 20;
    p.bandwidth = mib_s * MiB;
    p.os.read_bytes = p.bytes;
    p.os.write_bytes = p.bytes;
    struct iok_ceiling *c = &p.ceiling;
    c->measured = 1;
    c->samples = 3;
    double *bw = op == IOK_OP_WRITE ? c->write_bw : c->read_bw;
    bw[0] = s0 * MiB, bw[1] = s1 * MiB, bw[2] = s2 * MiB;
    double best = s0 > s1 ? (s0 > s2 ? s0 : s2) : (s1 > s2 ? s1 : s2);
    if (op == IOK_OP_WRITE) {
        c->bandwidth = best * MiB;
    } else {
        c->read_kind = IOK_CEIL_READ_CACHED;
        c->read_bandwidth = best * MiB;
    }
    return p;
}

int
main(void)
{
    struct iok_run run;
    struct iok_core_opts core = {0};
    memset(&run, 0, sizeof run);
    run.core = &core;

    struct iok_pass_result p = pass(IOK_OP_WRITE, 900, 800, 1000, 950);
    iok_ceiling_judge(&run, &p);
    CHECK(!p.ceiling.above && !p.ceiling.reason[0], "below the best sample: not flagged");
    p = pass(IOK_OP_WRITE, 1015, 800, 1000, 950);
    iok_ceiling_judge(&run, &p);
    CHECK(!p.ceiling.above, "within 2%% of the best sample: at the ceiling, not above");

    p = pass(IOK_OP_WRITE, 1500, 800, 1000, 950);
    iok_ceiling_judge(&run, &p);
    CHECK(p.ceiling.above && strstr(p.ceiling.reason, "without --fsync"), "buffered: %s",
          p.ceiling.reason);
    CHECK(strstr(p.ceiling.reason, "800-1000 MiB/s"), "the spread named: %s", p.ceiling.reason);

    core.fsync = 1;
    p = pass(IOK_OP_WRITE, 1100, 800, 1000, 950);
    iok_ceiling_judge(&run, &p);
    CHECK(p.ceiling.above && strstr(p.ceiling.reason, "within the probe's own spread"), "%s",
          p.ceiling.reason);
    p = pass(IOK_OP_WRITE, 3000, 800, 1000, 950);
    iok_ceiling_judge(&run, &p);
    CHECK(p.ceiling.above && strstr(p.ceiling.reason, "not explained"), "%s", p.ceiling.reason);

    /* a read judged against storage that the OS served from memory */
    p = pass(IOK_OP_READ, 5000, 900, 1000, 1000);
    p.ceiling.read_kind = IOK_CEIL_READ_STORAGE;
    p.os.read_bytes = 4096;
    snprintf(p.cache, sizeof p.cache, "drop_caches");
    iok_ceiling_judge(&run, &p);
    CHECK(p.ceiling.above && p.cache_suspect, "a cached read against a storage ceiling");
    CHECK(strstr(p.ceiling.reason, "the OS read 4096 of its 67108864 bytes from storage"), "%s",
          p.ceiling.reason);

    /* the same figures through the page cache: noise, not the cache */
    p = pass(IOK_OP_READ, 1050, 900, 1000, 1000);
    p.os.read_bytes = 0;
    iok_ceiling_judge(&run, &p);
    CHECK(p.ceiling.above && !p.cache_suspect && strstr(p.ceiling.reason, "spread"), "%s",
          p.ceiling.reason);

    /* a pass without a ceiling, and a write pass's missing read ceiling */
    p = pass(IOK_OP_READ, 5000, 0, 0, 0);
    p.ceiling.read_kind = IOK_CEIL_READ_NONE;
    iok_ceiling_judge(&run, &p);
    CHECK(!p.ceiling.above, "no read ceiling: nothing to be above");

    return check_summary("test_ceiling_judge");
}
