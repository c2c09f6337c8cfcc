/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's view of one run: its options, the chosen backend, and the
 * measured results that reports and the JSON record are made from. */
#ifndef IOKERNELS_RUN_H
#define IOKERNELS_RUN_H

#include <stdint.h>
#include <string.h>

#include <mpi.h>

#include "iokernels/backend.h"
#include "iokernels/data.h"
#include "iokernels/options.h"

/* Options every kernel has (the "core" table). */
struct iok_kernel_hint; /* kernel.h */

/* The core's CHOICE options: each enum in the order of its choices (the
 * option's value is its index, options.h), the choices' text said once. */
#define IOK_MODE_CHOICES "write|read|both"
enum iok_mode { IOK_MODE_UNSET = IOK_CHOICE_UNSET, IOK_MODE_WRITE, IOK_MODE_READ, IOK_MODE_BOTH };
#define IOK_API_CHOICES "blocking|nonblocking|varn" /* enum iok_api (backend.h) */
#define IOK_VALUES_CHOICES "fresh|once"             /* enum iok_values (data.h) */
#define IOK_BARRIERS_CHOICES "phase|pass|none"
#define IOK_COMPUTE_KIND_CHOICES "sleep|spin"
/* --compute-kind: sleep leaves the core free (nanosleep), spin keeps it
 * busy on the clock, as a solver does */
enum iok_compute_kind { IOK_COMPUTE_SLEEP, IOK_COMPUTE_SPIN };
enum iok_barriers {
    IOK_BARRIERS_KERNEL = IOK_CHOICE_UNSET, /* not given: the kernel's default_barriers */
    IOK_BARRIERS_PHASE,
    IOK_BARRIERS_PASS,
    IOK_BARRIERS_NONE
};
/* Collective or independent transfers: no option of its own (--collective
 * and --independent are flags), settled by the kernel or the core; no
 * table sets it, so unset is the zeroed struct's 0. */
enum iok_io { IOK_IO_UNSET, IOK_IO_COLL, IOK_IO_INDEP };

#define IOK_BACKEND_NAMELEN 64 /* a backend's name, as --backend takes it */

/* The strings are the options' own (IOK_OPT_HEAP: of any length, "" when
 * not given), freed when the run ends. */
struct iok_core_opts {
    char backend[IOK_BACKEND_NAMELEN];
    enum iok_mode mode;
    enum iok_io io;
    int api;             /* enum iok_api, or IOK_CHOICE_UNSET before settled */
    char *json;          /* JSON Lines file to append to; "" = none */
    char *export_replay; /* --export-replay: replay file to write; "" = none */
    int verify;
    int overwrite;
    int keep_partial; /* a failed or interrupted write leaves its partial output */
    int fsync;
    int64_t seed;
    enum iok_values values; /* fresh | once */
    int quiet;
    int ceiling;
    int ceiling_samples; /* --ceiling-samples: probe samples of each kind */
    int iterations;
    int drop_caches;
    int shift_ranks;
    char *hints;                /* --hints key=value,... */
    char *mpiio_hints;          /* --mpiio-hints: alias of --hints */
    char *hints_file;           /* --hints-file: "key value" lines */
    int no_original_hints;      /* --no-original-hints */
    enum iok_barriers barriers; /* phase | pass | none; IOK_BARRIERS_KERNEL: the kernel's */
    double deadline;            /* --deadline S: stop posting steps after S s; 0 = none */
    int agree_every;            /* --agree-every K: ranks meet every K steps (run/engine_step.c) */
    char *compute;              /* --compute S[,S...]: seconds computed after each write step
                                   (step i the i-th, the last repeats); "" = none */
    enum iok_compute_kind compute_kind; /* --compute-kind sleep | spin */
    double compute_spread; /* --compute-spread F: rank r computes x (1 - F + 2F r/(P-1)) */
    int async;             /* --async: a write step completes after the compute that
                              follows it (run/compute.c) */
    int async_reference;   /* --async-reference: iterations alternate --async and
                              synchronous in ABBA order (run/compute.c) */
    int machine_report;    /* set by a kernel whose report is machine-readable (CSV):
                              the core then adds no text block after it */
};

enum iok_phase {
    IOK_PH_REQUESTS, /* building request lists (not I/O) */
    IOK_PH_DATAGEN,  /* generating values to write (not I/O) */
    IOK_PH_EXCHANGE, /* moving data between ranks before/after I/O (rearranger) */
    IOK_PH_OPEN,     /* create or open */
    IOK_PH_DEFINE,   /* define mode: dimensions, variables, attributes */
    IOK_PH_POST,     /* put / get calls */
    IOK_PH_WAIT,     /* completing posted requests */
    IOK_PH_FLUSH,    /* --fsync */
    IOK_PH_CLOSE,
    IOK_PH_CHECK,   /* comparing read values with expected ones (not I/O) */
    IOK_PH_COMPUTE, /* --compute: the application's computation between steps (not I/O) */
    IOK_NPHASES
};
extern const char *const iok_phase_names[IOK_NPHASES];
/* 1 for the phases made of I/O library calls only. */
int iok_phase_is_io(enum iok_phase p);

enum iok_op { IOK_OP_WRITE, IOK_OP_READ, IOK_OP_VERIFY };
extern const char *const iok_op_names[3];

struct iok_stat {
    double min, avg, max;
};

struct iok_phase_result {
    double job;           /* sum over occurrences of latest end - earliest start */
    struct iok_stat rank; /* each rank's own summed duration */
    int count;            /* occurrences */
};

/* The ceiling probe (--ceiling): the same bytes by the same ranks in the same
 * job, as one contiguous block per rank of a shared file, measured several
 * times (the best sample is the ceiling; every sample is recorded). Writes go
 * through MPI-IO with the run's durability (synced inside the timing with
 * --fsync, else buffered); reads are of the run's kind: through the page
 * cache after a buffered write (a read that was not preceded by
 * --drop-caches), or from storage (through the page cache after dropping
 * the probe file's pages, as the kernel's read after --drop-caches). */
#define IOK_CEILING_SAMPLES_MAX 16
enum iok_ceiling_read {
    IOK_CEIL_READ_NONE,    /* a write pass: no read ceiling */
    IOK_CEIL_READ_CACHED,  /* through the page cache, as the file was just written */
    IOK_CEIL_READ_STORAGE, /* from storage: after fadvise DONTNEED (O_DIRECT: `ceiling`) */
};
struct iok_ceiling {
    int measured;
    int64_t bytes;
    int samples;                              /* of each kind measured */
    int fsync;                                /* write samples synced inside their timing */
    double write_bw[IOK_CEILING_SAMPLES_MAX]; /* every write sample, bytes/s */
    double time, bandwidth;                   /* the best write sample */
    enum iok_ceiling_read read_kind;
    int direct; /* storage reads: 1 O_DIRECT, 0 after fadvise */
    double read_bw[IOK_CEILING_SAMPLES_MAX];
    double read_time, read_bandwidth; /* the best read sample (0: none) */
    int above;                        /* the pass ran faster than its ceiling */
    char reason[320];                 /* why, as far as the suite can tell */
    int full;                         /* asked by `iokernels ceiling`: also the two below */
    double direct_write_bandwidth, cached_read_bandwidth;
};

/* Bytes as the operating system counts them (/proc/self/io deltas over a
 * pass), summed over ranks. */
struct iok_osbytes {
    int64_t rchar, wchar, read_bytes, write_bytes;
};

/* One hint in effect on an open file, as the I/O library reports it. */
struct iok_hint {
    char key[MPI_MAX_INFO_KEY + 1];
    char value[MPI_MAX_INFO_VAL + 1];
};

/* A read pass's nodes (cache.c): the cache verdict holds only where every
 * node's file system counts its reads at the block layer, and every node
 * read at least half from storage. */
struct iok_read_nodes {
    int nodes;             /* nodes (one rank each) that reported */
    int counted;           /* 1: every node's file system counts reads at the block layer */
    int uncounted;         /* the first node whose file system does not */
    char fs[32];           /* its file system */
    int unreadable;        /* some rank could not read /proc/self/io */
    int worst;             /* the node with the least read from storage, -1: none read */
    double worst_fraction; /* its OS read_bytes over its bytes read */
};

/* One pass over one file: a write, a read, or the read-back of --verify. */
struct iok_pass_result {
    enum iok_op op;
    int file; /* index in the kernel's plan */
    char path[IOK_OPT_STRLEN];
    int64_t bytes;    /* payload, summed over ranks */
    int64_t requests; /* subarrays, summed over ranks */
    struct iok_stat rank_bytes;
    int64_t own_bytes; /* this rank's share (differs per rank) */
    struct iok_phase_result ph[IOK_NPHASES];
    /* The headline time, IOR's convention: the open->close span, earliest
     * open start to latest close end, less the suite's own work inside it
     * (see span_suite). io_time == span. */
    double io_time;
    double span;                /* the job's span (= io_time) */
    double span_open_close;     /* the same before the suite's work is subtracted: raw */
    double span_unsynced;       /* span from each rank's own clock, uncorrected (clock.c) */
    struct iok_stat span_rank;  /* each rank's own open start -> close end, less its suite work */
    struct iok_stat span_suite; /* per rank: requests, data generation, checks and the core's
                                   per-step agreement inside the span (subtracted above) */
    double phase_sum;           /* sum of the I/O phases' job times (barrier-separated) */
    struct iok_stat io_rank;    /* each rank's own time in the I/O phases */
    double bandwidth;           /* bytes / io_time, bytes per second */
    int steps_planned, steps_done; /* steps of the file's plan, and those posted */
    int stonewalled;               /* --deadline stopped the pass before its last step */
    struct iok_stat peak_rss;      /* bytes, VmHWM over the pass */
    int peak_rss_process;          /* 1: VmHWM could not be reset, it covers the process */
    struct iok_stat peak_rss_proc; /* bytes, the process's peak from its start to the pass's end */
    int64_t checked, mismatches;   /* elements compared (read and verify passes) */
    char first_bad[512];           /* the first mismatch, from the lowest rank with one */
    struct iok_ceiling ceiling;    /* with --ceiling */
    int iteration;                 /* 0 .. iterations-1 */
    struct iok_osbytes os;         /* -1 fields when /proc/self/io is unreadable */
    char cache[64];                /* read passes: how the page cache was dropped, "" if not */
    int created;                   /* write passes: the run created the file (it did not exist) */
    char start_state[96];          /* write passes: the file's state before the pass */
    int synced_before;             /* the node's file system flushed before the pass, untimed */
    double write_check_seconds;    /* write passes: the check of what the file holds, untimed
                                    * (slowest rank); -1 when none ran */
    int agree_every;               /* the ranks met every this many steps (--agree-every) */
    /* write passes with --async: the most bytes of a posted step not yet
     * completed on one rank (max over ranks and steps) */
    int64_t pending_bytes_max;
    /* each rank's I/O phases plus the computation while a step was pending:
     * the window from post to completion (= io_rank without --async) */
    struct iok_stat io_window;
    /* write passes: the steps' waits were deferred past the computation
     * (--async; 0 in a synchronous iteration of --async-reference) */
    int async;
    /* a synchronous iteration's write pass of --async-reference: the
     * overlap's reference, left out of the run's summaries (the bandwidth
     * and the iterations' statistics are those of the --async iterations) */
    int reference;
    /* write passes with --async-reference: per step posted, the time
     * blocked in its post and its wait, max over ranks, at [step]
     * (nstep_exposed of them; NULL when not measured). Freed by the core. */
    double *step_exposed;
    int nstep_exposed;
    int cache_suspect; /* read faster than the device ceiling */
    /* Rank 0 only (NULL elsewhere): each rank's own total per phase, in
     * seconds, at [rank * IOK_NPHASES + phase], for reports that show
     * per-rank figures (open/I/O/close time per rank and their min/avg/max,
     * as IOR and NetCDF-Bench print them). Freed by the core. */
    double *rank_phase;
    /* Rank 0 only: the hints in effect after create + define or open, as
     * the backend's library reports them for rank 0's file (nhints -1: the
     * backend cannot report them). Freed by the core. */
    int nhints;
    struct iok_hint *hints;
    /* Read and verify passes of backends that move data: 1 when the OS
     * read_bytes summed over ranks is at least half the bytes read (the
     * read came from storage), 0 when it came from the page cache or the
     * OS counts are unknown; `source` says which and why. */
    int from_storage;
    int source_known; /* 0: "unknown" (the counts cannot tell), see source */
    char source[224];
    struct iok_read_nodes nodes_read;
    /* Rank 0 only (NULL elsewhere): each rank's own open->close span, less
     * its suite work, at [rank]. Freed by the core. */
    double *rank_span;
    /* Rank 0 only (NULL elsewhere): each rank's marks, seconds on the job's
     * clock (rank 0's MPI_Wtime, clock.c),
     * at [rank * IOK_NMARKS + mark], for reports that time as an original
     * with barriers between open, I/O and close (NetCDF-Bench). Freed by
     * the core. */
    double *rank_marks;
};
enum iok_mark {
    IOK_MARK_OPEN,   /* open/create starts */
    IOK_MARK_OPENED, /* open, or create + define, ends */
    IOK_MARK_CLOSE,  /* close starts (after the steps and --fsync) */
    IOK_MARK_CLOSED, /* close ends */
    IOK_MARK_SUITE,  /* not a time: the suite's time from "opened" to "close", s: per
                      * segment the least any rank spent (as the job's span) */
    /* Each rank's own clock where the ranks meet, as a barrier-timed
     * original (NetCDF-Bench) reads it: */
    IOK_MARK_LOOP, /* the ranks agreed that open (+ define) succeeded: the steps start */
    IOK_MARK_DONE, /* the ranks agreed that close succeeded */
    IOK_NMARKS
};

/* The value of hint `key` in effect during pass p, or NULL (rank 0). */
static inline const char *
iok_pass_hint(const struct iok_pass_result *p, const char *key)
{
    for (int i = 0; i < p->nhints; i++)
        if (!strcmp(p->hints[i].key, key))
            return p->hints[i].value;
    return NULL;
}

struct iok_reqlog; /* reqlog.h */
struct iok_cores;  /* the core's src/core/measure/measure.h */

struct iok_result {
    /* Rank 0, when the run keeps it: every rank's logged requests
     * (iokernels/reqlog.h); NULL otherwise. */
    const struct iok_reqlog *log;
    int npasses, cap;
    struct iok_pass_result *pass;
    double start_wtime;         /* MPI_Wtime() on rank 0 right after MPI_Init */
    double parse_time;          /* reading input files and building the plan, max over ranks */
    struct iok_stat parse_rank; /* the same, each rank's own */
};

/* What kernels get to see of the run. */
struct iok_run {
    MPI_Comm comm;
    int rank, nprocs;
    const struct iok_core_opts *core; /* the options, owned by the core (never copied) */
    const struct iok_backend *backend;
    void *backend_opts;
    enum iok_api api;
    int collective;
    int do_write, do_read;
    const char *input_path;              /* the kernel's input file actually read, or NULL */
    unsigned kernel_flags;               /* the kernel's IOK_KERNEL_* flags */
    MPI_Info hints;                      /* --hints and --hints-file, MPI_INFO_NULL when none */
    const char *kernel_default_barriers; /* the kernel's default_barriers */
    const struct iok_kernel_hint *original_hints; /* the kernel's original_hints */
    /* each node's cores and whether the ranks outnumber them, on rank 0
     * (gathered once before the passes, untimed); NULL before that */
    const struct iok_cores *cores;
};

#endif
