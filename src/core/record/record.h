/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's record room: the run's JSON record and its parts
 * (json_record.c, json_env.c), the report (report.c), the
 * self-description (describe.c) and --export-replay (reqlog_export.c). */
#ifndef IOK_CORE_RECORD_H
#define IOK_CORE_RECORD_H

#include <stdio.h>

#include <jansson.h>
#include <mpi.h>

#include "core/lib/lib.h"
#include "core/measure/measure.h"

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

/* The overlap of --async-reference (overlap.c): per iteration, the exposed
 * I/O of its write passes (the sum of their slowest rank's time in I/O
 * calls), split by ABBA into async and synchronous iterations; the ratio
 * exposed async / exposed sync with its interval (sd: Hodges-Lehmann and
 * Moses, measure/slowdown.c), the overlap 1 - ratio and its call ("hidden",
 * "no overlap", "more exposed", "untested"); the medians over the async
 * iterations of the post and the wait and which holds more ("post",
 * "wait"); per step, the medians of its post + wait on each side. */
struct iok_overlap {
    int iterations, n_async, n_sync;
    int *it_async, *it_sync;
    double *exposed_async, *exposed_sync;
    int has_ratio; /* every time positive: sd holds the ratio */
    struct iok_slowdown sd;
    const char *call;
    double post, wait;
    const char *where;
    int nsteps; /* 0: the steps were not timed */
    double *step_async, *step_sync;
};
/* Rank 0, from the gathered results; -1 when out of memory. */
int iok_overlap_of(const struct iok_run *run, const struct iok_result *res, struct iok_overlap *o);
void iok_overlap_free(struct iok_overlap *o);
/* The report's line ("overlap: 0.88 [0.80, 0.93] hidden (...)"). */
void iok_overlap_line(const struct iok_overlap *o, char *buf, size_t len);
/* The record's "overlap" object (schema: run_record.overlap). */
json_t *iok_overlap_json(const struct iok_overlap *o);
/* Where a pass's data moved, from its measured post, wait and window:
 * "during the computation" when post + wait is under a tenth of the
 * window, else "in the wait" or "in the post", whichever took longer. */
const char *iok_overlap_moved(double post, double wait, double window);

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

/* Collective: every rank's host name, on rank 0 (json_env.c). */
int iok_env_gather(MPI_Comm comm, char **hosts_out);

/* Collective: the run's record as one JSON line (rank 0; NULL elsewhere). */
int iok_json_line(const struct iok_json_input *in, char **line);

/* A JSON string of text that may not be UTF-8 (a path's bytes): as it is
 * when it is, else every byte outside ASCII written as \xNN. */
json_t *iok_json_text(const char *s);
/* A JSON array of n numbers (seconds, ...), a NaN (an iteration that did
 * not run) left out. */
json_t *iok_json_reals(const double *v, int n);
/* environment: host names of all ranks (as gathered), nodes, ranks per
 * node, each node's cores (NULL: none gathered), Slurm ids, the MPI library. */
json_t *iok_env_json(const char *hosts, int nprocs, const struct iok_cores *cores);
/* hints: asked for, from which file, handed to the library or not, and the
 * environment variables the libraries read themselves. */
json_t *iok_hints_json(const struct iok_run *run);
/* A pass's hints in effect, or null when the backend cannot report them. */
json_t *iok_pass_hints_json(const struct iok_pass_result *p);
/* environment.mpiio_layer: the io component and the settings of
 * iok_mpiio_layer(), or null when the library tells none. */
/* An option's value as its type. */
json_t *iok_option_json(const struct iok_optset *set, const struct iok_option *o);

#endif
