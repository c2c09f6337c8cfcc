/* SPDX-License-Identifier: BSD-3-Clause */
/* The pass engine: the one place where backend calls are timed (engine.c,
 * engine_step.c, engine_result.c). A pass is a list of steps over the files
 * it opens together: a file's write, read or verify pass is a group of one
 * file, the replay's interleaved pass (iok_filegroup) a group of several;
 * both go through the same phases:
 *
 *   files   rank 0 (or a per-rank file's own rank) checks and claims each
 *           file; the ranks agree, then learn which files the run created
 *   open    each file opened or created and defined, in plan order
 *   steps   per step: requests, data, exchange, the step's agreement, the
 *           post and the wait (each alone in its timed region), the check
 *   flush   --fsync: each written file
 *   close   each file, one agreement after all of them
 *   result  phases, spans, bytes reduced; the write check; the verify line
 *
 * Each timed region holds one backend call and nothing else; the suite's
 * own work inside the span is counted per segment (open, each step, what
 * follows the last) and the least any rank spent is subtracted (see
 * struct iok_pass). */
#ifndef IOK_ENGINE_H
#define IOK_ENGINE_H

#include "core.h"
#include "iokernels/data.h"

enum { IOK_PF_WRITE = 1, IOK_PF_READ = 2 };

/* One file the pass opens. */
struct iok_pass_file {
    int file;                         /* its index in the plan */
    int mode;                         /* IOK_PF_WRITE | IOK_PF_READ */
    int per_rank;                     /* each rank its own <path>.<rank> */
    int mine;                         /* this rank checks and claims it */
    char path[IOK_OPT_STRLEN + 16];   /* the file this rank opens */
    const struct iok_schema *s;       /* the plan's, or trimmed to the records a write left */
    struct iok_schema trimmed;        /* when s points here */
    struct iok_dim *tdims;            /* trimmed's dimensions */
    struct iok_backend_params params; /* per_rank: MPI_COMM_SELF */
    void *h;                          /* the backend's handle, NULL until open */
    int claimed;                      /* this pass made the empty path before opening */
    int partial;                      /* the run's own file: removed when the pass fails */
    int64_t wbytes;                   /* this rank's bytes written to it */
    struct iok_wsample *sample;       /* what this rank wrote, read back after the pass */
};

/* One pass under way: what it runs, its state, what it counts. */
/* What a step came to (iok_pass_step). */
enum iok_step_outcome {
    IOK_STEP_DONE,        /* posted and waited */
    IOK_STEP_SKIPPED,     /* this rank's failure, said at the next meeting (--agree-every) */
    IOK_STEP_STONEWALLED, /* the deadline: no rank posts it */
};

struct iok_pass {
    const struct iok_kernel *k;
    const void *kopts;
    const struct iok_run *run;
    const struct iok_plan *plan;
    /* --shift-ranks K: a read asks for what rank (r + K) mod P wrote; the
     * run's copy (11 KB of options) is made only then, once per pass */
    struct iok_run *shifted;
    int iteration;
    int nfiles;
    struct iok_pass_file *f;
    int *slot; /* a plan file's index in f, -1 when the pass does not open it */
    int nsteps;
    const struct iok_filegroup_step *steps; /* the group's, or own_steps */
    struct iok_filegroup_step *own_steps;   /* a file's pass: its steps 0 .. nsteps - 1 */
    int group;      /* an interleaved group's pass (several files, several kinds) */
    enum iok_op op; /* a file's pass: its kind */
    int writes;     /* some file is written */
    int planned;    /* the steps planned, before a stonewall or max_steps */
    int every;      /* --agree-every in effect */
    uint64_t seed;
    enum iok_values how;
    /* the timeline, and the suite's own time, per segment: 0 open and
     * define, 1 + s step s, nseg - 1 what follows the last step */
    struct iok_timeline tl;
    double t0;
    int phase_barriers; /* --barriers phase */
    double work, agreed;
    double *seg;
    int nseg, cur;
    int io_rc;         /* this rank's last post/wait outcome, not yet agreed on */
    int err;           /* errno right after the call that failed (0: none) */
    const char *wpath; /* the file of the write under way: a failure names a full disk */
    /* each rank's marks (IOK_MARK_*) */
    double open_start, opened, loop, close_start, close_end, done;
    /* counts */
    int64_t bytes, nreq, checked, bad;
    char first_bad[512];
    struct iok_reqlist rl, io, kept;
    int kept_file; /* the file whose list `kept` is (--values once) */
};

/* engine.c. A test's view of the timed regions (tests/unit/test_engine.c):
 * called with 1 before a phase's region opens and 0 after it closes, both
 * outside the region; NULL in every run. */
extern void (*iok_pass_hook)(int begin, enum iok_phase ph);
void iok_pass_start(struct iok_pass *p, enum iok_phase ph);
void iok_pass_stop(struct iok_pass *p, enum iok_phase ph);
void iok_pass_suite(struct iok_pass *p, double since, int is_agreement);
int iok_pass_agree(struct iok_pass *p, int rc);
int iok_pass_called(struct iok_pass *p, int rc);
/* engine_files.c: a file's path, parameters, schema and write sample
 * (trim >= 0: a read of the records a stonewalled write left) */
int iok_pass_file_init(struct iok_pass *p, struct iok_pass_file *f, int trim);
/* The files phase: each file checked and claimed by its rank, the ranks
 * agree (rc: this rank's status so far), the files the run created known
 * to all; synced, caches dropped for reads. */
int iok_pass_files(struct iok_pass *p, struct iok_pass_result *out, int rc);
/* A signal removes the file the pass creates, when it creates one. */
void iok_pass_arm_signals(struct iok_pass *p);
/* After a failure (rc), the files the run created, unless --keep-partial. */
void iok_pass_remove_failed(struct iok_pass *p, int rc);
/* engine_step.c: step i of the pass; *outcome: what it came to (an
 * iok_step_outcome); non-zero: the ranks agreed on a failure */
int iok_pass_step(struct iok_pass *p, int i, int *outcome);
/* ends the progress line after the last step */
void iok_pass_progress_end(const struct iok_pass *p);
/* engine_result.c: after the close, the result; then the write check and
 * the verify line */
void iok_pass_reduce(struct iok_pass *p, const struct iok_osbytes *os0,
                     const struct iok_osbytes *os1, struct iok_pass_result *out);
int iok_pass_check_written(struct iok_pass *p, struct iok_pass_result *out);
int iok_pass_mismatches(struct iok_pass *p, struct iok_pass_result *out);

#endif
