/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal interfaces of the core: timelines, system probes, the pass
 * runner and the JSON record. Not seen by kernels or backends. */
#ifndef IOKERNELS_CORE_H
#define IOKERNELS_CORE_H

#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "iokernels/kernel.h"
#include "iokernels/run.h"

/* Thresholds of the suite's verdicts, defined once: the report and the
 * record use these, the record carries them ("thresholds") and the
 * campaign tool reads them from there.
 *
 * A pass within 2% of its ceiling is at it, not above it: the probe's own
 * samples vary by about that much between runs (ceiling_judge.c). */
#define IOK_CEILING_MARGIN 1.02
/* A read pass is from storage when storage delivered at least this
 * fraction of its bytes on every node (OS read_bytes), else it is called
 * the page cache's (cache.c). 0.9, not 0.5: "from storage" says the figure
 * is the storage's, and a read half served from memory can run twice as
 * fast as storage allows; the 10% left covers pages counted twice or read
 * again from the cache (headers, metadata read by every rank). The ceiling
 * judge names the page cache as the reason a storage read ran above its
 * ceiling by the same fraction, so the two verdicts never disagree. */
#define IOK_FROM_STORAGE_FRACTION 0.9

/* The core's options (core_options.c) and the struct they fill. */
struct core_flags {
    struct iok_core_opts o;
    int collective, independent, help;
    int check;                        /* --check: configure and plan, no I/O */
    char check_ranks[IOK_OPT_STRLEN]; /* --ranks N[,N...] with --check */
};
extern const struct iok_option iok_core_options[];

/* Timeline: every occurrence of every phase on this rank, to be reduced
 * across ranks once the pass is over (never inside a timed region). */
struct iok_timeline {
    int n[IOK_NPHASES], cap[IOK_NPHASES];
    double *t[IOK_NPHASES]; /* begin, end pairs */
};

void iok_timeline_init(struct iok_timeline *tl);
void iok_timeline_free(struct iok_timeline *tl);
void iok_timeline_add(struct iok_timeline *tl, enum iok_phase p, double begin, double end);
/* This rank's own total time in phase p (sum over its occurrences). */
double iok_timeline_own(const struct iok_timeline *tl, enum iok_phase p);
/* Collective: job time per phase (sum over occurrences of latest end minus
 * earliest start) and min/avg/max of each rank's own total. */
void iok_timeline_reduce(const struct iok_timeline *tl, MPI_Comm comm,
                         struct iok_phase_result out[IOK_NPHASES]);

/* One clock for the job (clock.c): each rank's MPI_Wtime offset against
 * rank 0's, estimated once per run. */
struct iok_clock {
    double offset;                 /* this rank's MPI_Wtime minus rank 0's at the same instant */
    double error;                  /* this rank's bound on that estimate: half its round trip */
    double offset_min, offset_max; /* over the ranks (rank 0's 0 included) */
    double error_max;              /* the worst rank's bound */
    double drift_max; /* the most any rank's offset moved over the run (iok_clock_check), -1 */
    int rounds, synced;
};
extern struct iok_clock iok_clock;
/* Collective, once per run before anything is timed. */
void iok_clock_sync(MPI_Comm comm);
/* Collective, once the passes are over: estimates the offsets again and
 * records how far they moved (drift_max), which the correction missed. */
void iok_clock_check(MPI_Comm comm);
/* MPI_Wtime() on rank 0's clock: every timestamp compared across ranks. */
double iok_now(void);
/* Sleeps s seconds (nothing if s <= 0), through signals that interrupt it
 * (pace.c). */
void iok_sleep_seconds(double s);

/* Collective, before write pass `iteration` of `file` (iteration_reset.c):
 * removes the previous iteration's file when the run created it; `state`
 * says what the pass starts from ("" for the first iteration). */
int iok_iteration_reset(const struct iok_run *run, const struct iok_plan *plan, int file,
                        int iteration, const struct iok_result *res, char *state, size_t len);
/* Collective: one rank per node flushes the file system holding `path`
 * (syncfs; sync where it cannot), untimed, before every pass (cache.c). */
void iok_sync_node(MPI_Comm comm, const char *path);

/* Collective: min/avg/max of one value per rank. */
struct iok_stat iok_stat_reduce(double v, MPI_Comm comm);

/* System probes. */
int iok_mem_reset_peak(void);     /* writes 5 to /proc/self/clear_refs; 0 if it could */
int64_t iok_mem_peak_bytes(void); /* VmHWM, or -1 when unknown */
/* The whole process's peak so far, across resets of VmHWM (what
 * /usr/bin/time reports at the end), or -1 when unknown. */
int64_t iok_mem_process_peak_bytes(void);
void iok_dirname(const char *path, char *dir, size_t len); /* "." when none */
void iok_fs_describe(const char *path, char *fstype, size_t len, int64_t *free_bytes);

/* /proc/self/io of this rank now (fields -1 when unreadable). */
void iok_osbytes_now(struct iok_osbytes *b);

/* Collective: drops the page cache of node-local files before a read pass
 * (see cache.c); says how in `how`. */
void iok_drop_caches(MPI_Comm comm, const char *path, int per_rank, char *how, size_t len);

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

/* The git commit built, "commit abc123def456[, dirty]" or "unknown commit"
 * (generated at each build by cmake/version.cmake). */
extern const char iok_commit[];

/* The MPI-IO implementation the MPI library picks (mpiio_layer.c): with
 * OpenMPI, the io component by priority and the io, fcoll, fbtl, fs and
 * sharedfp selections as set ("" = the library's choice); with an
 * MPICH-derived library, ROMIO (its only one) and ROMIO_HINTS. `mpi`: the
 * library and its version ("Open MPI 4.1.4", "MPICH 4.0.2"). */
#define IOK_MPIIO_NSETTINGS 5
struct iok_mpiio_layer {
    char mpi[64];
    char io[256];
    int nsettings;
    struct {
        char framework[16];
        char value[256];
    } setting[IOK_MPIIO_NSETTINGS];
};
/* 0 when the MPI library is neither OpenMPI nor MPICH-derived. */
int iok_mpiio_layer(struct iok_mpiio_layer *l);
/* Before MPI_Init: OpenMPI's OMPIO without the shared-file-pointer
 * components that crash on long paths (mpiio_layer.c), unless the user set
 * the selection. Nothing with other MPI libraries. */
void iok_mpiio_layer_defaults(void);
/* A usage error when `path` (`what`: "output file", ...) is too long for
 * the shared-file-pointer component the user's own OpenMPI setting allows
 * (lockedfile, which aborts the job on it); IOK_OK otherwise. */
int iok_mpiio_path_check(const char *path, int nprocs, const char *what);
/* `path` (a buffer of `len`) as it is handed to MPI-IO: a name of one
 * character without a folder becomes "./NAME" under OpenMPI, whose OMPIO
 * cannot open it otherwise (mpiio_layer.c). */
void iok_mpiio_name(char *path, size_t len);
/* Every planned file's name against NAME_MAX, and iok_mpiio_path_check
 * for the backends that open through MPI-IO (path_check.c). */
int iok_check_plan_paths(const struct iok_run *run, const struct iok_plan *plan);
/* The planned paths the backends that open through MPI-IO are handed,
 * through iok_mpiio_name (path_check.c); on every rank. */
void iok_plan_mpiio_names(const struct iok_run *run, struct iok_plan *plan);
/* The report's "MPI-IO layer" line; nothing when the library tells none. */
void iok_mpiio_layer_report(FILE *out);

/* Read and verify passes: from storage or from the page cache, by the OS
 * read_bytes against the bytes read (cache.c). */
void iok_read_source(const struct iok_run *run, struct iok_pass_result *p);
/* Does the file system type (iok_fs_describe's name) pass the block layer
 * that /proc/self/io's read_bytes and write_bytes count? (ext4, xfs, btrfs) */
int iok_fs_block_counted(const char *fs);
/* Collective, after a read pass: per node (one rank each) its bytes read,
 * OS read_bytes and file system type, into p->nodes_read (cache.c). */
void iok_read_nodes(MPI_Comm comm, const char *path, int64_t bytes, int64_t read_bytes,
                    struct iok_pass_result *p);

/* Full disks (write_check.c): a failed write names a full file system in
 * its message; after a write pass, the rank(s) that hold `path` (`mine`)
 * check that the file system is not full and that it holds `bytes`. */
/* A write's failure named: a file system that is full now, else `err` (the
 * errno right after the failed call, 0 if none) where it is a system error
 * a write ends with (ENOSPC, EDQUOT, EIO, EFBIG, EROFS). */
void iok_note_full(const char *path, int err);
int iok_check_written(MPI_Comm comm, const char *path, int mine, const struct iok_schema *s,
                      int64_t bytes);

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

/* Files by their signature (file_kind.c), rank 0 or a file's own rank
 * before any library opens it: a read's file is what `backend` reads and
 * not shorter than its header says; a write's path is no folder (a file for
 * ADIOS2) and `nfiles` files of the schema's data fit in its free space. */
int iok_check_input_kind(const char *path, const char *backend, const struct iok_schema *s);
/* After a write pass: the file holds its format's signature and is not
 * shorter than its header says (exit 1: the library reported success). */
int iok_check_written_kind(const char *path, const char *backend, const struct iok_schema *s);
int iok_check_output_room(const char *path, const char *backend, const struct iok_schema *s,
                          int nfiles, int overwrite);
/* Bytes of a schema's data in one file, what iok_check_output_room counts:
 * -1 when they overflow, 0 when compressed (unknown). */
int64_t iok_schema_data_bytes(const struct iok_schema *s);

/* Resource limits (limits.c): iok_limits_init before MPI_Init ignores
 * SIGXFSZ, so that a write past ulimit -f fails with EFBIG instead of
 * killing the process. */
void iok_limits_init(void);
/* On the rank whose call failed (status not OK): when the process met its
 * descriptor limit or its file size limit, appends that to the error's
 * message; returns the status to agree on (IOK_EIO for a full descriptor
 * table that a caller took for a bad input). */
int iok_limits_note(int status);
/* Under an address-space limit (ulimit -v) that leaves less than
 * IOK_AS_PROBE_MIB to map now: 1, and the limit in KiB; else 0. */
#define IOK_AS_PROBE_MIB 128
int iok_limits_as_short(unsigned long long *limit_kib);
/* A usage error when a file of `bytes` of data cannot be written under the
 * process's file size limit; checked before the file is created. */
int iok_limits_check_size(const char *path, int64_t bytes);
/* Under an address-space limit (ulimit -v), an out-of-memory error before
 * any file is created when one step's buffers of a planned file cannot be
 * reserved. */
int iok_limits_check_memory(const struct iok_run *run, const struct iok_plan *plan);

/* The suite's IOK_* variables (env.c): iok_env_check validates them once,
 * before anything else (a usage error naming the variable); then
 * IOK_AGREE_SECONDS in seconds (default 10), IOK_PROGRESS (-1 unset, 0,
 * 1), IOK_CLOCK_ROUNDS (default 10) and IOK_REWRITE_IN_PLACE (0 or 1). */
int iok_env_check(void);
/* TMPDIR, before MPI_Init (tmpdir.c): a usage error when it is set and
 * missing, not a folder or not writable. */
int iok_tmpdir_check(void);
/* This process's rank as its launcher says before MPI_Init (OpenMPI, MPICH,
 * PMIx, Slurm); -1 when none does (a process started alone). */
int iok_launcher_rank(void);
int iok_env_agree_seconds(void);
int iok_env_progress(void);
int iok_env_clock_rounds(void);
int iok_env_rewrite_in_place(void);

/* Debug fault injection (fault.c): IOK_FAULT=PHASE:RANK. iok_fault_init
 * parses it once (a usage error when malformed); IOK_FAULTED(p, path) is 1
 * when this rank's backend call of phase p is to fail instead of being
 * made, its message recorded. A branch on a static flag when disarmed. */
extern int iok_fault_armed;
int iok_fault_init(int rank, int nprocs);
int iok_fault_hit(enum iok_phase p, const char *path);
/* IOK_FAULT=written:RANK: after a write pass closed its file, that rank
 * overwrites the file's bytes with NUL (a file holding none of what was
 * written), so that the check after the write is seen failing. */
void iok_fault_written(const char *path);
#define IOK_FAULTED(p, path) (iok_fault_armed && iok_fault_hit((p), (path)))

/* Collective, once after MPI_Init (error.c): the agreements' own
 * communicator, so that they never match a library's collective calls. */
void iok_agree_init(void);

/* A pass left a file open after a failure (engine.c): the job ends without
 * finalizing, as the library could not close it. */
extern int iok_abandoned;

/* The pass engine (engine.h): runs one pass (write, read or verify
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

/* Collective: the ceiling probe over `bytes` (this rank's share) in a file
 * beside near_path, which it creates and removes (see run.h): `samples`
 * writes, then `samples` reads of kind `read_kind`. */
int iok_ceiling_probe(MPI_Comm comm, const char *near_path, int64_t bytes, int fsync_inside,
                      enum iok_ceiling_read read_kind, int samples, struct iok_ceiling *out);

/* After a pass with a ceiling: whether the pass ran above it, and the reason
 * found (page cache from the OS counts, buffered writes, the probe's spread),
 * into p->ceiling.above / .reason. */
void iok_ceiling_judge(const struct iok_run *run, struct iok_pass_result *p);

/* `iokernels ceiling`: the probe on its own. */
int iok_ceiling_main(int argc, char **argv);

/* The kernel's rank rules (rank_rules.c): its declared rule on the count
 * ("square") and its check_ranks(), for `nprocs` ranks. Pure, every rank. */
int iok_rank_rules(const struct iok_kernel *k, const void *kopts, int nprocs);
/* `--ranks N[,N...]` as counts (at most `max`), each at least 1; IOK_EUSAGE
 * with one line otherwise. */
int iok_rank_counts(const char *text, int *counts, int max, int *n);

/* The request log (reqlog.c, iokernels/reqlog.h): iok_log is the run's
 * (NULL: none kept). start: a barrier, then the log's clock; add: one call
 * of this rank (level as made); gather: collective, all ranks' on rank 0. */
struct iok_reqlog;
extern struct iok_reqlog *iok_log;
void iok_reqlog_start(struct iok_reqlog *log, MPI_Comm comm);
void iok_reqlog_free(struct iok_reqlog *log);
int iok_reqlog_add(struct iok_reqlog *log, int rank, const struct iok_schema *s, int file,
                   int write, int level, double t0, double t1, const struct iok_reqlist *r);
int iok_reqlog_gather(const struct iok_reqlog *log, MPI_Comm comm, struct iok_reqlog *all);
/* Byte offset of variable v in the raw layout (v = nvars: the layout's size). */
int64_t iok_raw_var_offset(const struct iok_schema *s, int v);
/* --export-replay (reqlog_export.c): what it can describe (before the
 * passes), and the file written from the gathered log (rank 0). */
int iok_reqlog_export_check(const struct iok_run *run, const struct iok_plan *plan);
int iok_reqlog_export(const char *path, const struct iok_reqlog *log, const struct iok_run *run,
                      const struct iok_plan *plan, const char *kernel);

/* Capability flags of backend.h by the words --list prints ({0, NULL} ends). */
struct iok_cap_word {
    unsigned cap;
    const char *word;
};
extern const struct iok_cap_word iok_cap_words[];

/* Self-description as JSON (describe.c): `--list --json`, `KERNEL --help
 * --json` (the sets holding their defaults). */
void iok_describe_list(FILE *out);
void iok_describe_kernel(const struct iok_kernel *k, const struct iok_optset *sets, int nsets,
                         FILE *out);
/* 1 when the command line asks for `--help --json`; the bare "--json" is
 * then taken out of argv (so that --json FILE keeps its meaning). */
int iok_help_as_json(int *argc, char **argv);
/* Statistics over iterations (stats.c), IOR's: stddev over N values / N. */
struct iok_spread {
    int n;
    double min, max, mean, stddev, median;
};
void iok_spread_of(const double *v, int n, struct iok_spread *s);
/* Each iteration's bandwidth (bytes/s) and time (s) of one op; returns how
 * many iterations had that op. */
int iok_op_iterations(const struct iok_result *res, int iterations, enum iok_op op,
                      struct iok_spread *bw, struct iok_spread *time);
/* IOR's "Max Write:" lines and summary table (rank 0, --iterations > 1). */
void iok_report_iterations(const struct iok_run *run, const struct iok_result *res, FILE *out);

/* The generic block printed after every kernel's own report. */
void iok_report_core(const struct iok_run *run, const struct iok_plan *plan,
                     const struct iok_result *res, FILE *out);

/* Appends the run's JSON record (one line) to `path`. Collective (host
 * names are gathered); rank 0 writes. */
struct iok_json_input {
    const struct iok_kernel *kernel;
    const void *kernel_opts;
    const struct iok_run *run;
    const struct iok_plan *plan;
    const struct iok_result *res;
    const struct iok_optset *sets;
    int nsets;
    int status;
    int argc;
    char **argv;
};
int iok_json_append(const char *path, const struct iok_json_input *in);
/* Collective: the record of a run that a signal ends, built before the
 * passes (no pass results), without its closing brace and last fields,
 * which the signal handler appends (rank 0; NULL elsewhere). */
char *iok_json_terminated_prefix(const struct iok_json_input *in);

/* Signals (signals.c): SIGTERM, SIGINT, SIGHUP end the run with one line
 * (rank 0), the partial output removed unless keep, the record when given
 * (iok_signals_record takes the prefix), exit 128 + signal. doing: what
 * the run does now ("the write", path); partial: the output this run
 * created that the pass under way writes (NULL: none). */
void iok_signals_install(int rank, int keep);
void iok_signals_doing(const char *what, const char *path);
void iok_signals_partial(const char *path);
/* The file of the write pass under way; NULL outside a write pass. */
const char *iok_signals_writing(void);
/* After a failure was reported: a signal (mpiexec ending the job) only
 * ends the process. */
void iok_signals_quiet(void);
/* MPI_Abort of the whole job, once the launcher had time to forward the
 * lines this rank printed (error.c). */
void iok_abort_job(int code);
/* Before this rank ends the job (MPI_Abort): tells the other ranks of its
 * node that the SIGTERM that follows is the abort's. */
void iok_signals_job_failing(void);
void iok_signals_record(const char *path, char *prefix);
/* Collective: every rank's host name, on rank 0 (json_env.c). */
int iok_env_gather(MPI_Comm comm, char **hosts_out);

/* A mix (mix.c): each member runs its kernel as alone, on its own ranks. */
struct iok_member_run {
    MPI_Comm comm;   /* the member's ranks */
    int check_only;  /* read options, configure and plan, then return: nothing written */
    int want_record; /* build the member's JSON record into `record` */
    FILE *report;    /* where the member's rank 0 prints its report (NULL: stdout) */
    int node_ranks;  /* a together round: the job's ranks on this rank's node, all running
                        (the record's node_cores count them); 0: the member's own */
    /* filled on the member's rank 0 by iok_member_collect */
    double io_seconds; /* the sum of its passes' open->close spans */
    int npass;         /* its passes' windows, on the member's clock (rank 0's) */
    double *win_start, *win_end, *win_bytes;
    char *record; /* malloc'd JSON text of the member's record, or NULL */
    /* the outputs its first run created (kept over its runs): each later
     * run starts from the same state, as iteration_reset.c does */
    char *planned; /* check_only, rank 0: the files it writes, one a line (described) */
    int made_set, nmade;
    char (*made)[IOK_OPT_STRLEN + 16]; /* this rank's path of each */
};
/* After the member's passes (collective over the member's ranks; in: the
 * record's input, NULL for none). */
int iok_member_collect(struct iok_member_run *m, const struct iok_run *run,
                       const struct iok_plan *plan, const struct iok_result *res,
                       const struct iok_json_input *in);
/* Rank 0, check_only: the files the member's plan writes, into m->planned,
 * as the file system sees them and with the room they need (mix_outputs.c). */
int iok_member_planned(struct iok_member_run *m, const struct iok_run *run,
                       const struct iok_plan *plan);
/* Collective over the member: removes what its first run created, untimed. */
int iok_member_remove_made(struct iok_member_run *m, const struct iok_run *run);
void iok_member_run_free(struct iok_member_run *m);
/* run: main.c's run of one kernel, on m->comm (main.c is outside the
 * core library that the unit tests link) */
typedef int (*iok_member_fn)(const struct iok_kernel *k, int argc, char **argv,
                             struct iok_member_run *m);
int iok_mix_main(int argc, char **argv, iok_member_fn run);
/* iokernels --check-batch (check_batch.c): one `KERNEL --check` a stdin line,
 * each run by run on MPI_COMM_WORLD; 0 when every line was answered. */
int iok_check_batch_main(int argc, char **argv, iok_member_fn run);
/* The line for a name that is no kernel, printed; returns IOK_EUSAGE. */
int iok_unknown_kernel(const char *name);
/* Collective: the run's record as one JSON line (rank 0; NULL elsewhere). */
int iok_json_line(const struct iok_json_input *in, char **line);
/* A label put before every error and signal line of this process ("member 2
 * (e3sm): "); "" for none. */
void iok_error_label(const char *label);
void iok_signals_label(const char *label);
/* The agreements on comm use agree (a duplicate of it, made by its owner). */
void iok_agree_comm_for(MPI_Comm comm, MPI_Comm agree);

#endif
