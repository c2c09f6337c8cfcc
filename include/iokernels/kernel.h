/* SPDX-License-Identifier: BSD-3-Clause */
/* A kernel describes an application's I/O: which files, their schemas, and
 * each rank's requests per step. It never calls an I/O library; the core runs
 * the plan on the chosen backend, times it, verifies it and reports it. */
#ifndef IOKERNELS_KERNEL_H
#define IOKERNELS_KERNEL_H

#include <stdio.h>

#include <mpi.h>

#include "iokernels/options.h"
#include "iokernels/request.h"
#include "iokernels/run.h"
#include "iokernels/schema.h"

struct iok_file_plan {
    char path[IOK_OPT_STRLEN];
    struct iok_schema schema;
    int nsteps; /* steps (records, dumps); each step is one put/get + one wait */
    /* File per process: 0 = one file shared by all ranks. 1 = each rank has
     * its own file "<path>.<rank>" of this schema, which it creates alone
     * (the backend gets MPI_COMM_SELF); a read or verify pass opens the file
     * of rank (rank + read_shift) % nprocs (a shift defeats the page cache). */
    int per_rank;
    int read_shift;
    /* 1: the write and read passes have their own step counts (below), and
     * a pass of none is not run at all (the replay: no read pass of a file
     * the trace only wrote); 0: both have nsteps */
    int op_steps;
    int nsteps_write, nsteps_read;
};

/* One step of an interleaved pass: the kernel's requests() for this file,
 * step and op (IOK_OP_WRITE or IOK_OP_READ), numbered as in the file's own
 * write or read pass. */
struct iok_filegroup_step {
    int file;
    enum iok_op op;
    int step;
};

/* Files a kernel opens together for one interleaved pass (the replay: files
 * open at the same time in the trace), its steps in the kernel's order. The
 * core opens every file its steps name (created read-write when the group
 * both writes and reads it, write-only or read-only otherwise), runs the
 * steps, and closes them. Its files are shared (per_rank 0). */
struct iok_filegroup {
    int nsteps;
    const struct iok_filegroup_step *steps; /* owned by the kernel (priv) */
};

/* pass_order entry of group g (negative: entries >= 0 are files' passes),
 * and the group of such an entry */
#define IOK_PASS_FILEGROUP(g) (-1 - (g))
#define IOK_PASS_GROUP_OF(e) (-1 - (e))

struct iok_plan {
    int nfiles, files_cap;
    struct iok_file_plan *files; /* nfiles of them (iok_plan_add_file), freed with the plan */
    /* 1: the kernel's exchange() only hands the lists over in this run
     * (E3SM with --rearrange none): the core calls it outside the exchange
     * phase, as the suite's own work, not timed as I/O */
    int exchange_is_handover;
    /* The order of the passes, when the kernel gives one (the replay: in
     * the order the trace used each file for writing and for reading):
     * entries 2 * file + 0 for a file's write pass, 2 * file + 1 for its
     * read (or --verify) pass; npass_order 0: every file's write pass,
     * then every file's read pass. IOK_PASS_FILEGROUP(g): group g's
     * interleaved pass (its files' passes of the kinds it runs are not
     * listed on their own). */
    int npass_order;
    int *pass_order; /* iok_plan_pass_order; freed with the plan */
    int nfilegroups;
    const struct iok_filegroup *filegroups; /* owned by the kernel (priv) */
    /* The original's hints for this run, where they depend on what plan()
     * found (E3SM-IO adds nc_ibuf_size=0 for double data): replaces the
     * kernel's original_hints; NULL: those. */
    const struct iok_kernel_hint *original_hints;
    void *priv;                    /* the kernel's own state (decompositions...) */
    void (*free_priv)(void *priv); /* called by the core when the run ends */
};

/* A new file at the end of the plan's files, zeroed, in *fp: IOK_OK, or
 * IOK_EIO (recorded) when out of memory. Moves the files: a pointer to one
 * taken before is stale after. */
int iok_plan_add_file(struct iok_plan *plan, struct iok_file_plan **fp);
/* Room for n pass_order entries (npass_order is the kernel's to set): the
 * array, or NULL (recorded) when out of memory. */
int *iok_plan_pass_order(struct iok_plan *plan, int n);
/* Frees the files' schemas, the files, the pass order and the kernel's
 * state; the plan is zeroed. */
void iok_plan_free(struct iok_plan *plan);
/* 1 when plan->pass_order (if any) lists each pass and group at most once,
 * in range, no file's read pass before its write pass, and every group's
 * steps (one or more) name a shared file of the plan, a write or a read,
 * a step >= 0; checked by the core before the passes (a kernel bug
 * otherwise). */
int iok_plan_order_valid(const struct iok_plan *plan);

/* Removes an output file the run wrote, or the directory of files a backend
 * writes in its place (ADIOS2's BP): for kernels whose original removes its
 * output. Returns 0 or -1. */
int iok_remove_output(const char *path);

enum iok_xstage { IOK_X_SEND, IOK_X_PREPARE, IOK_X_RETURN };

enum iok_kernel_flags {
    /* requests() of a read may be asked for another rank (--shift-ranks):
     * they depend on run->rank alone, not on state planned for this rank */
    IOK_KERNEL_SHIFTABLE = 1u << 0,
    /* a tool, not a benchmark (abrgen): its plan does the work, it has no
     * files to time, so the core's measurement options do not apply */
    IOK_KERNEL_TOOL = 1u << 1,
    /* the core keeps the request log (iokernels/reqlog.h) for its report
     * and record (the replay's fidelity) */
    IOK_KERNEL_REQLOG = 1u << 2,
    /* the run's I/O is the kernel's alone (a replay: nothing its trace does
     * not have): after a write pass the core checks the file's size but
     * reads no sample of the values back (write_sample.c); --verify reads
     * what was written */
    IOK_KERNEL_NO_READBACK = 1u << 3,
    /* its lists carry traced gaps (iok_reqlist.gap, a replay's): --compute
     * traced computes each after its step; refused on other kernels */
    IOK_KERNEL_TRACED_GAPS = 1u << 4,
};

struct iok_kernel_hint {
    const char *backend; /* NULL: every backend */
    const char *key, *value;
};

struct iok_kernel {
    const char *name;
    const char *summary;
    unsigned flags; /* IOK_KERNEL_* */
    const struct iok_option *options;
    size_t opts_size;
    /* Native input file read when no positional argument names one; NULL if
     * the kernel has none. A missing default file means built-in defaults. */
    const char *default_input;
    /* --barriers when not given: what the original does. "phase" (a barrier
     * before every I/O phase, IOR -g), "pass" (one barrier before the
     * pass's open, then none: BTIO) or "none". NULL means "phase". */
    const char *default_barriers;
    /* The MPI_Info settings the original sets itself (BTIO and E3SM-IO set
     * PnetCDF's nc_var_align_size=1 and nc_in_place_swap=enable, E3SM-IO
     * romio_cb_write=enable): applied first, for the backend named (NULL:
     * every backend), so that the default run is the original's; --hints
     * wins over them and --no-original-hints leaves them out. NULL-key
     * terminated; NULL: none. */
    const struct iok_kernel_hint *original_hints;
    /* The rule on the job's rank count, declared once: NULL (any count) or
     * "square" (1, 4, 9, ...: BTIO's q x q cells). The core enforces it
     * before plan() and for `--check --ranks N`; --help --json says it. */
    const char *ranks;
    /* Optional (NULL = none): the kernel's rules that tie its options to the
     * rank count (BTIO: at least 3 grid points per cell and axis). Pure: no
     * MPI, no I/O, the same answer on every rank; called by the core after
     * configure() and the rank rule, before plan(), and for `--check
     * --ranks N` with that N instead of the job's. */
    int (*check_ranks)(const void *kopts, int nprocs);

    /* Applies the native input file's text to the option sets. */
    int (*read_input)(const char *text, const char *path, const struct iok_optset *sets, int nsets);
    /* 1: the positional input is a (large, binary) file the kernel reads
     * itself in parallel in plan() (E3SM's decomposition file): the core
     * neither reads nor broadcasts it, only checks that it exists and hands
     * its path over as run->input_path; read_input is not called. */
    int input_by_path;
    /* Options are final: validate them and settle the run's choices that
     * depend on the kernel (BTIO's method picks backend and API). `given`
     * says which core options the user set explicitly. Runs on every rank. */
    int (*configure)(void *kopts, struct iok_core_opts *core, int (*given)(const char *name));
    /* Builds the plan (files, schemas, steps) for this run. */
    int (*plan)(const void *kopts, const struct iok_run *run, struct iok_plan *plan);
    /* This rank's accesses of one step of one file for a write, a read or
     * the read-back of --verify (buffers allocated; the core fills or
     * checks them). Reads may differ from writes (a shifted read). */
    int (*requests)(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
                    int file, int step, enum iok_op op, struct iok_reqlist *out);
    /* Optional (NULL = none): moves a step's data between ranks, as E3SM's
     * PIO rearranger or an I/O stride does. `compute` is the list from
     * requests(); `io` is the list the backend executes. Stages:
     *   IOK_X_SEND     write: compute holds the data; build io and fill it
     *   IOK_X_PREPARE  read: build io (buffers to read into), before get
     *   IOK_X_RETURN   read: io holds what was read; fill compute's buffers
     * Timed as the "exchange" phase, which counts as I/O time. */
    int (*exchange)(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
                    int file, int step, enum iok_xstage stage, struct iok_reqlist *compute,
                    struct iok_reqlist *io);
    /* The kernel's own human report, on rank 0. */
    void (*report)(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
                   const struct iok_result *res, FILE *out);
    /* Optional: one more field of the JSON record, named json_key, whose
     * value json_value returns as JSON text (malloc'ed, freed by the core;
     * NULL: left out), on rank 0. */
    const char *json_key;
    char *(*json_value)(const void *kopts, const struct iok_run *run, const struct iok_plan *plan,
                        const struct iok_result *res);
};

const struct iok_kernel *iok_kernel_find(const char *name);
int iok_kernel_count(void);
const struct iok_kernel *iok_kernel_at(int i);

#endif
