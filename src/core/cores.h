/* SPDX-License-Identifier: BSD-3-Clause */
/* The cores each node gives the run (cores.c): online CPUs, the ranks'
 * affinity masks, a cgroup's CPU quota, and whether the ranks outnumber
 * them. A comparison of runs on oversubscribed cores measures CPU
 * contention, not I/O: the record and the headlines say so. */
#ifndef IOK_CORES_H
#define IOK_CORES_H

#include <mpi.h>
#include <stddef.h>

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

#endif
