/* SPDX-License-Identifier: BSD-3-Clause */
/* The request log: what the core handed the backend, as the byte requests
 * of the mpiio backend's layout (variables one after another, each in
 * row-major order), one entry per rank's library call, with the level the
 * call had and its measured start and end. Kept when a run asks for it
 * (--export-replay, or a kernel with IOK_KERNEL_REQLOG), gathered on rank 0
 * after the passes (iok_result.log). The write and read passes of the
 * first iteration are logged; the suite's own steps (untimed) and a rank
 * that only joins the others' collective call (idle) are not. */
#ifndef IOKERNELS_REQLOG_H
#define IOKERNELS_REQLOG_H

#include <stdint.h>

struct iok_logop {
    int rank, file, write;
    int level;          /* IOK_LEVEL_COLL or IOK_LEVEL_INDEP, as the call was made */
    double start, end;  /* seconds since the log's start (after a barrier, before the passes) */
    int64_t nseg, seg0; /* segs[seg0 .. seg0 + nseg): rows of each subarray, merged where
                           contiguous within one subarray, in request order */
};

struct iok_logseg {
    int64_t off, len;
};

struct iok_reqlog {
    int64_t nops, nsegs, ops_cap, segs_cap;
    struct iok_logop *ops; /* rank 0 after the gather: rank by rank, each in its order */
    struct iok_logseg *segs;
    double t0;
};

#endif
