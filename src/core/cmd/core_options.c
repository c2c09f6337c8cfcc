/* SPDX-License-Identifier: BSD-3-Clause */
/* The options every kernel has: the core's table (see docs/getting-started.md,
 * "Options every kernel has"). Kernels' and backends' tables must not reuse these names. */
#include <stddef.h>

#include "core/cmd/cmd.h"

const struct iok_option iok_core_options[] = {
    {"backend", 0, IOK_OPT_STRING, offsetof(struct core_flags, o.backend), NULL,
     "I/O backend (see iokernels --list) (default: chosen by the kernel)", .metavar = "NAME",
     .size = IOK_OPT_SIZEOF(struct core_flags, o.backend)},
    {"mode", 0, IOK_OPT_CHOICE, offsetof(struct core_flags, o.mode), NULL,
     "write the files, read them back, or both (default: write, unless the kernel's input "
     "file says otherwise)",
     IOK_MODE_CHOICES},
    {"collective", 0, IOK_OPT_BOOL, offsetof(struct core_flags, collective), NULL,
     "collective transfers (default: on, unless the kernel's original is independent)"},
    {"independent", 0, IOK_OPT_BOOL, offsetof(struct core_flags, independent), NULL,
     "independent transfers (default: off, unless the kernel's original is independent)"},
    {"api", 0, IOK_OPT_CHOICE, offsetof(struct core_flags, o.api), NULL,
     "library API flavour for backends that have several (pnetcdf) (default: blocking, unless "
     "the kernel's method picks another)",
     IOK_API_CHOICES},
    {"verify", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.verify), NULL,
     "check every value: read back after writing, or check what is read"},
    {"seed", 0, IOK_OPT_INT64, offsetof(struct core_flags, o.seed), "1",
     "seed of the deterministic data (reads must use the writer's)"},
    {"values", 0, IOK_OPT_CHOICE, offsetof(struct core_flags, o.values), "fresh",
     "fresh: each record its own values, generated before its write; once: every record the "
     "first record's, generated for the first write and its buffer written again (NetCDF-Bench's "
     "and h5bench's way); reads must use the writer's",
     IOK_VALUES_CHOICES},
    {"json", 0, IOK_OPT_STRING, offsetof(struct core_flags, o.json), NULL,
     "append the run's JSON record to this file (JSON Lines)", .metavar = "FILE",
     .size = IOK_OPT_HEAP},
    {"export-replay", 0, IOK_OPT_STRING, offsetof(struct core_flags, o.export_replay), NULL,
     "write the run's MPI-IO byte requests (per rank, in order, with their level and measured "
     "times) as a replay file (iokernels replay FILE; mpiio backend)",
     .metavar = "FILE", .size = IOK_OPT_HEAP},
    {"overwrite", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.overwrite), NULL,
     "replace output files that already exist"},
    {"keep-partial", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.keep_partial), NULL,
     "keep the partial output of a write that failed, or that SIGTERM, SIGINT or SIGHUP "
     "ended (removed otherwise)"},
    {"fsync", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.fsync), NULL,
     "flush written data to storage inside the timed write"},
    {"quiet", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.quiet), NULL,
     "no human report (the JSON record is still written)"},
    {"ceiling", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.ceiling), NULL,
     "probe plain contiguous I/O of the same bytes in the same job (MPI-IO writes with the run's "
     "durability, reads of the run's kind: cached, or from storage after --drop-caches); the best "
     "sample is the ceiling"},
    {"ceiling-samples", 0, IOK_OPT_INT, offsetof(struct core_flags, o.ceiling_samples), "3",
     "samples of each kind the ceiling probe takes (every one is recorded)", .min = "1",
     .max = IOK_STR(IOK_CEILING_SAMPLES_MAX), .unit = "samples"},
    {"iterations", 0, IOK_OPT_INT, offsetof(struct core_flags, o.iterations), "1",
     "repeat the whole write (and read) this many times; each is recorded", .min = "1",
     .unit = "iterations"},
    {"drop-caches", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.drop_caches), NULL,
     "before each read pass drop the page cache (root) or fadvise DONTNEED the files"},
    {"shift-ranks", 0, IOK_OPT_INT, offsetof(struct core_flags, o.shift_ranks), "0",
     "reads: rank r reads what rank (r+K) mod P wrote (IOR's -C)"},
    {"hints", 0, IOK_OPT_STRING, offsetof(struct core_flags, o.hints), NULL,
     "MPI-IO and library hints as key=value,... (e.g. cb_nodes=2,romio_cb_write=enable), "
     "passed to every backend's open and create",
     .metavar = "KEY=VALUE,...", .size = IOK_OPT_HEAP},
    {"hints-file", 0, IOK_OPT_STRING, offsetof(struct core_flags, o.hints_file), NULL,
     "hints from a file, one 'key value' a line, '#' comments (ROMIO_HINTS format); "
     "--hints wins over it",
     .metavar = "FILE", .size = IOK_OPT_HEAP},
    {"mpiio-hints", 0, IOK_OPT_STRING, offsetof(struct core_flags, o.mpiio_hints), NULL,
     "alias of --hints (kept for older command lines)", .metavar = "KEY=VALUE,...",
     .size = IOK_OPT_HEAP},
    {"no-original-hints", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.no_original_hints), NULL,
     "leave out the hints the kernel's original sets itself (listed at the end of --help): "
     "the libraries' defaults stand"},
    {"barriers", 0, IOK_OPT_CHOICE, offsetof(struct core_flags, o.barriers), NULL,
     "phase: a barrier before every I/O phase (IOR -g); pass: one before each pass's open "
     "(BTIO); none (default: what the kernel's original does, see the end of --help)",
     IOK_BARRIERS_CHOICES},
    {"deadline", 0, IOK_OPT_DOUBLE, offsetof(struct core_flags, o.deadline), "0",
     "stonewalling (IOR -D): post no new step X seconds after the open; 0 = none", .min = "0",
     .unit = "seconds"},
    {"agree-every", 0, IOK_OPT_INT, offsetof(struct core_flags, o.agree_every), "1",
     "ranks agree on errors and the deadline every K steps instead of every step, and do not "
     "meet after each step's I/O (independent transfers or a file per process; collective "
     "transfers on a shared file agree every step: every rank must enter the same calls)",
     .min = "1", .unit = "steps"},
    {"compute", 0, IOK_OPT_STRING, offsetof(struct core_flags, o.compute), NULL,
     "emulated computation after each step of a write pass (and after the last, before close), "
     "outside the timed I/O, recorded as the compute phase: seconds, one number for every step "
     "or a comma list (step i the i-th, the last repeats); traced (the replay): after each "
     "traced write, the gap the trace shows before the rank's next operation (cut to --max-gap)",
     .metavar = "SECONDS[,SECONDS...]|traced", .size = IOK_OPT_HEAP},
    {"compute-kind", 0, IOK_OPT_CHOICE, offsetof(struct core_flags, o.compute_kind), "sleep",
     "sleep: the computation leaves the core free (nanosleep); spin: a busy loop on the clock "
     "keeps it, as a solver does",
     IOK_COMPUTE_KIND_CHOICES},
    {"compute-spread", 0, IOK_OPT_DOUBLE, offsetof(struct core_flags, o.compute_spread), "0",
     "ranks compute unequally: rank r of P computes SECONDS x (1 - F + 2F r/(P-1)), from "
     "(1-F) at rank 0 to (1+F) at the last, the mean SECONDS; 0 = every rank alike",
     .min = "0", .max = "1", .unit = "fraction"},
    {"async", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.async), NULL,
     "post each write step, compute (--compute), complete it before the next step or the "
     "close: how much of the write the library hides behind the computation (backends with a "
     "nonblocking API; implies --api nonblocking)"},
    {"async-reference", 0, IOK_OPT_BOOL, offsetof(struct core_flags, o.async_reference), NULL,
     "with --async: alternate --async iterations with synchronous ones (each wait right after "
     "its post) in ABBA order, and record the overlap, 1 - exposed async / exposed sync, with "
     "its exact 95 percent interval (--iterations 4 or more, even)"},
    {"check", 0, IOK_OPT_BOOL, offsetof(struct core_flags, check), NULL,
     "check the options: configure and plan the run, do no I/O and create no file; exit 0, or "
     "2 with the line the run would print (many command lines in one process: iokernels "
     "--check-batch)"},
    {"ranks", 0, IOK_OPT_STRING, offsetof(struct core_flags, check_ranks), NULL,
     "with --check: check the rank rules for these rank counts without launching "
     "them; the plan, which needs the ranks, is built only for the job's own count (default: "
     "the job's ranks)",
     .metavar = "N[,N...]"},
    {"help", 'h', IOK_OPT_BOOL, offsetof(struct core_flags, help), NULL, "this help"},
    {NULL}};
