/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's measure room: the timelines (timing.c) and statistics
 * (stats.c), the page cache and the OS counts (cache.c), the ceiling probe
 * and its verdict, the cores a node gives the run (cores.c) and a mix
 * member's slowdown (slowdown.c). */
#ifndef IOK_CORE_MEASURE_H
#define IOK_CORE_MEASURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "core/lib/lib.h"

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

/* Collective: one rank per node flushes the file system holding `path`
 * (syncfs; sync where it cannot), untimed, before every pass (cache.c). */
void iok_sync_node(MPI_Comm comm, const char *path);

/* Collective: min/avg/max of one value per rank. */
struct iok_stat iok_stat_reduce(double v, MPI_Comm comm);

/* Collective: drops the page cache of node-local files before a read pass
 * (see cache.c); says how in `how`. */
void iok_drop_caches(MPI_Comm comm, const char *path, int per_rank, char *how, size_t len);

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

/* Collective: the ceiling probe over `bytes` (this rank's share) in a file
 * beside near_path, which it creates and removes (see run.h): `samples`
 * writes, then `samples` reads of kind `read_kind`. */
int iok_ceiling_probe(MPI_Comm comm, const char *near_path, int64_t bytes, int fsync_inside,
                      enum iok_ceiling_read read_kind, int samples, struct iok_ceiling *out);

/* After a pass with a ceiling: whether the pass ran above it, and the reason
 * found (page cache from the OS counts, buffered writes, the probe's spread),
 * into p->ceiling.above / .reason. */
void iok_ceiling_judge(const struct iok_run *run, struct iok_pass_result *p);

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

/* The cores each node gives the run (cores.c): online CPUs, the ranks'
 * affinity masks, a cgroup's CPU quota, and whether the ranks outnumber
 * them. A comparison of runs on oversubscribed cores measures CPU
 * contention, not I/O: the record and the headlines say so. */
#define IOK_CORES_HOSTLEN 256

struct iok_node_cores {
    char host[IOK_CORES_HOSTLEN];
    int ranks;               /* the run's ranks on the node */
    int usable_cores;        /* the least of the three below (the quota rounded up) */
    int online_cpus;         /* /sys/devices/system/cpu/online */
    int affinity_cpus;       /* the union of the node's ranks' sched_getaffinity masks */
    double cgroup_cpus;      /* cgroup quota / period; < 0: no quota set */
    int hw_threads_per_core; /* cpu0's thread siblings */
    unsigned tags;           /* the OR of the ranks' tags (a mix: one bit per member) */
};

struct iok_cores {
    int nnodes;                  /* rank 0; 0 elsewhere */
    struct iok_node_cores *node; /* rank 0: in host order (by each node's lowest rank) */
    int usable_min;              /* the least usable_cores over the nodes */
    int oversubscribed;          /* a node's ranks exceed its usable cores */
    int worst;                   /* the most crowded node (ranks per usable core) */
};

/* What the system under `root` ("" for /) says; pure, for the unit test. */
int iok_cpu_list_count(const char *text);        /* "0-3,8" -> 5; -1 when malformed */
int iok_cpus_online(const char *root);           /* -1 when unknown */
double iok_cpus_cgroup(const char *root);        /* the least quota/period of the process's
                                                    cgroup and its parents, v2 or v1; -1: none */
int iok_cpus_threads_per_core(const char *root); /* 1 when unknown */
/* The least of online, affinity and the quota rounded up (each where known). */
int iok_cores_usable(int online, int affinity, double cgroup);

/* Collective over comm, untimed: each node's cores, on comm's rank 0.
 * tag: this rank's bits, OR'ed per node (a mix's member); node_ranks: the
 * ranks running on this rank's node when more than comm's run there (a
 * mix's members together), 0 for comm's own. */
int iok_cores_gather(MPI_Comm comm, unsigned tag, int node_ranks, struct iok_cores *out);
/* Collective over comm: how many of comm's ranks share this rank's node. */
int iok_cores_node_ranks(MPI_Comm comm);
void iok_cores_free(struct iok_cores *c);
/* "oversubscribed (4 ranks on 2 cores)", or "" when no node is (c may be NULL). */
const char *iok_cores_words(const struct iok_cores *c, char *buf, size_t len);

/* A ratio of two series of times with its exact 95% interval (slowdown.c). */
struct iok_slowdown {
    double ratio;     /* median(a) / median(b) */
    double hl;        /* Hodges-Lehmann ratio: median of a_i / b_j */
    double low, high; /* its exact 95% interval, when has_interval */
    int has_interval;
    int n_a, n_b;
    const char *call; /* "slower", "faster", "tied" (holds 1), "untested" */
};

double iok_median(const double *v, int n);
int iok_moses_cut(int na, int nb);
void iok_slowdown_of(const double *a, int na, const double *b, int nb, struct iok_slowdown *s);

#endif
