/* SPDX-License-Identifier: BSD-3-Clause */
/* The replay file (docs/kernels/replay.md): a versioned text file listing
 * the traced files and each rank's operations, in order. The parser is pure
 * (no MPI, no I/O library): text in, a trace out, or one error naming the
 * file and line. */
#ifndef IOK_REPLAY_FILE_H
#define IOK_REPLAY_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "iokernels/reqlog.h"
#include "iokernels/request.h"
#include "iokernels/schema.h"

/* Version 2 ends with an `end OPS CHECKS` line (a cut file is refused);
 * version 1, without it, is still read, but never scored exact. */
#define RP_VERSION 2
#define RP_VERSION_OLDEST 1

/* The trace's operations are the core's operation type (iokernels/reqlog.h):
 * `coll` is IOK_LEVEL_COLL, `indep` IOK_LEVEL_INDEP, `posix` IOK_LEVEL_INDEP
 * with posix set; line is the op line's. */

/* An optional `data` line (files exported by --export-replay): bytes
 * [off, off + size) of the file hold the suite's deterministic values of a
 * variable of `type` named `name` (its identity `hash`), `nrec` records of
 * `elems` elements each (nrec 0: not a record variable, elems in all). */
struct rp_data {
    int64_t off, nrec, elems;
    enum iok_type type;
    uint64_t hash;
    char *name;
};

struct rp_file {
    int64_t size; /* at the end of the trace; 0: unknown */
    char *path;
    int ndata;
    struct rp_data *data;
};

/* A `check` line: the trace's digest of one (rank, file)'s ordered
 * operations (iokernels/reqlog.h), written when the file was made. */
struct rp_check {
    int rank, file;
    int64_t ops, bytes;
    uint64_t hash;
};

struct rp_trace {
    int version;  /* the file's format version */
    int ended;    /* it has its `end` line: not cut */
    char *source; /* NULL: none */
    int nnotes;   /* `note` lines: what the conversion dropped, folded, assumed */
    char **notes;
    int nchecks; /* `check` lines; 0: the file carries no digest of its trace */
    struct rp_check *checks;
    /* a `coverage` line: the trace holds `traced` of the `counted` calls the
     * application made (a truncated DXT buffer); counted 0: no such line */
    int64_t cov_traced, cov_counted;
    int ranks;
    int nfiles;
    struct rp_file *files;
    int64_t nops, nsegs;
    struct iok_logop *ops;
    struct iok_logseg *segs;
};

/* Parses text (len bytes, NUL-terminated) read from `path`. IOK_OK, or
 * IOK_EUSAGE with the message "PATH line N: what is wrong". */
int rp_parse(const char *text, size_t len, const char *path, struct rp_trace *out);
void rp_free(struct rp_trace *t);

/* Bytes of variable d (its extent in the file). */
int64_t rp_data_bytes(const struct rp_data *d);
/* The type named as a `data` line names it ("double"), or -1. */
int rp_type_of(const char *word);

#endif
