/* SPDX-License-Identifier: BSD-3-Clause */
/* Fidelity by sequence: for every (rank, file) the ordered operations the
 * core handed the library, each as (kind, runs, level), against the
 * trace's; the order across files a rank had open at the same time; and
 * the replay file's own operations against the digests of its trace
 * (`check` lines), so that a file edited after conversion is seen. */
#ifndef IOK_REPLAY_SEQUENCE_H
#define IOK_REPLAY_SEQUENCE_H

#include <stdint.h>

#include "iokernels/reqlog.h"
#include "replay_file.h"

/* One difference, in words for the report and the record. */
struct rp_seqdiff {
    int rank, file; /* file: the traced file's id; -1 for an order across files */
    int64_t index;  /* the operation's position in the sequence */
    char traced[200], replayed[200];
};

struct rp_sequences {
    int64_t compared; /* (rank, file) sequences that have an operation on either side */
    int64_t differ;   /* of those, the ones not equal */
    int order_ranks;  /* ranks with files open at the same time in the trace */
    int order_differ; /* of those, the ones whose order across files differs */
    int checked;      /* 1: the replay file carries its trace's digests */
    int64_t edited;   /* sequences of the replay file that differ from their trace's digest */
    int have_first, have_order, have_edit;
    struct rp_seqdiff first, order, edit;
};

/* Log files map to traced ones by file_traced; fold: trace rank r is scored
 * on job rank r % nprocs. writes, reads: the kinds the run replayed. */
int rp_sequences(const struct rp_trace *t, const struct iok_reqlog *log, int nprocs, int fold,
                 const int *file_traced, int writes, int reads, struct rp_sequences *out);

/* The digests of the replay file's operations (all kinds), one pass over
 * them: d[rank * t->nfiles + file] for every trace rank and file. IOK_OK,
 * or an error when memory runs out. */
int rp_trace_digests(const struct rp_trace *t, struct iok_seqdigest *d);

#endif
