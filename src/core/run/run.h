/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's run room: the pass engine, the one place where backend calls are timed (engine.c,
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
 * struct iok_pass).
 *
 * The room also holds the step's agreement (step.c), the hints (hints.c),
 * what a write pass wrote (write_sample.c), a write iteration's reset
 * (iteration_reset.c) and the kernel's rank rules (rank_rules.c). */
#ifndef IOK_CORE_RUN_H
#define IOK_CORE_RUN_H

#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "iokernels/data.h"

/* Collective, before write pass `iteration` of `file` (iteration_reset.c):
 * removes the previous iteration's file when the run created it; `state`
 * says what the pass starts from ("" for the first iteration). */
int iok_iteration_reset(const struct iok_run *run, const struct iok_plan *plan, int file,
                        int iteration, const struct iok_result *res, char *state, size_t len);

/* Hints (hints.c). Collective: the run's MPI_Info from --hints-file, --hints
 * and --mpiio-hints (MPI_INFO_NULL when none); a bad line of the file is a
 * usage error naming file:line. */
int iok_hints_build(const struct iok_core_opts *o, const struct iok_kernel_hint *orig,
                    const char *backend, MPI_Comm comm, MPI_Info *out);
int iok_hints_parse_file(const char *text, const char *path, MPI_Info *info);
/* An info's pairs as a new array (the caller frees it); their number. */
int iok_hints_list(MPI_Info info, struct iok_hint **out);
/* After create + define or open, untimed: the backend's hints in effect
 * into out->hints (rank 0). */
void iok_pass_take_hints(const struct iok_run *run, void *handle, struct iok_pass_result *out);
/* The report's "hints in effect" line of one pass. */
void iok_hints_report(const struct iok_run *run, const struct iok_pass_result *p, FILE *out);
/* Environment variables the I/O libraries read on their own (NULL-ended). */
extern const char *const iok_hint_env_names[];

/* What a write pass wrote (write_sample.c): per variable, the first and last
 * element of each rank's last access, and a seeded uniform sample of 256
 * elements over all the rank wrote, taken from the lists the backend was
 * handed; after the pass, read back through the backend (collective,
 * untimed) and compared byte for byte: exit 1 naming the first difference. */
struct iok_wsample;
struct iok_wsample *iok_wsample_new(const struct iok_schema *s, uint64_t seed, int rank);
void iok_wsample_free(struct iok_wsample *w);
void iok_wsample_take(struct iok_wsample *w, const struct iok_schema *s,
                      const struct iok_reqlist *r);
int iok_wsample_check(const struct iok_run *run, const struct iok_backend_params *params,
                      const char *path, const struct iok_schema *s, int shared,
                      const struct iok_wsample *w);

/* A pass left a file open after a failure (engine.c): the job ends without
 * finalizing, as the library could not close it. */
extern int iok_abandoned;

/* The pass engine (engine.c): runs one pass (write, read or verify
 * read-back) over file `file` of the plan, at most max_steps of its steps
 * (-1: all; a read after a stonewalled write reads what was written).
 * Collective; returns an agreed status. */
int iok_run_pass(const struct iok_kernel *k, const void *kopts, const struct iok_run *run,
                 const struct iok_plan *plan, int file, enum iok_op op, int iteration,
                 int max_steps, struct iok_pass_result *out);

/* Runs group g of the plan (iok_filegroup, kernel.h) as one interleaved pass
 * through the same engine: a file's pass is a group of one. Collective;
 * returns an agreed status. */
int iok_run_filegroup(const struct iok_kernel *k, const void *kopts, const struct iok_run *run,
                      const struct iok_plan *plan, int group, int iteration,
                      struct iok_pass_result *out);

/* Rank 0 before a write (engine_files.c): refuses to clobber a file the run did not
 * create and to write where it cannot; claims the path unless overwrite
 * (folder: ADIOS2's directory). *claimed: this call made it (empty). */
int iok_check_output_path(const char *path, int overwrite, int folder, int *claimed);

/* Collective, untimed: the ranks' agreement on one step before its post
 * (see step.c). shared: the file is shared (not one per process); rc is
 * this rank's status so far; *stop in: this rank wants
 * to stop (deadline), out: the job stops. Sets acc[i].calls/calls_max.
 * meet 0 (--agree-every, a step without a meeting): local only, rc as is. */
int iok_step_agree(const struct iok_run *run, MPI_Comm comm, void *h, int shared, int rc,
                   struct iok_reqlist *r, int *stop, int meet);

/* The kernel's rank rules (rank_rules.c): its declared rule on the count
 * ("square") and its check_ranks(), for `nprocs` ranks. Pure, every rank. */
int iok_rank_rules(const struct iok_kernel *k, const void *kopts, int nprocs);
/* `--ranks N[,N...]` as counts (at most `max`), each at least 1; IOK_EUSAGE
 * with one line otherwise. */
int iok_rank_counts(const char *text, int *counts, int max, int *n);

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
    /* --async: the posted step's list, held (its buffers alive) until its
     * wait; pending_file NULL when none; the most bytes held */
    struct iok_reqlist pending;
    struct iok_pass_file *pending_file;
    int64_t pending_max;
    double hidden; /* the computation while a step was pending */
    double gap;    /* --compute traced: the current step's gap (iok_reqlist.gap) */
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

/* compute.c: --compute and --async. The seconds of step `step` of the list
 * (0 when none; -1 malformed); the settled run's checks of --compute and
 * --async (usage errors, before any file); the computation after a write
 * step (timed as IOK_PH_COMPUTE, not I/O); whether the pass defers the wait
 * of a step posting `target`; holding the posted list (*target becomes the
 * held one); the held step's wait, timed (nothing when none). */
double iok_compute_at(const char *text, int step);
int iok_compute_traced(const struct iok_core_opts *o); /* --compute traced */
int iok_compute_settle(const struct iok_run *run, const struct iok_core_opts *o);
void iok_pass_compute(struct iok_pass *p, int step);
int iok_pass_defers(const struct iok_pass *p, const struct iok_reqlist *target);
/* Whether write passes of `iteration` defer their waits: --async, and with
 * --async-reference the iterations ABBA puts on the async side after the
 * synchronous warm-up, iteration 0 (1, 4, 5, 8, 9, ...; the others run each
 * wait right after its post). Pure. */
int iok_iteration_async(const struct iok_core_opts *o, int iteration);
/* the iterations a run makes: --iterations, and --async-reference's warm-up */
int iok_iterations_run(const struct iok_core_opts *o);
void iok_pass_hold(struct iok_pass *p, struct iok_pass_file *pf, struct iok_reqlist **target,
                   const struct iok_schema *s);
int iok_pass_complete(struct iok_pass *p);

#endif
