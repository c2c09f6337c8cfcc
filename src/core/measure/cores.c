/* SPDX-License-Identifier: BSD-3-Clause */
/* The cores each node gives the run (measure.h). 16 ranks on 2 cores look
 * like 16 ranks on 16 in every figure unless the record says otherwise:
 * per node the online CPUs, the union of its ranks' affinity masks (mpiexec
 * may bind each rank to one core) and a cgroup CPU quota, gathered once per
 * run before the passes (untimed). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "iokernels/error.h"

enum { MAX_CPUS = 8192 };

static int
read_text(const char *root, const char *path, char *buf, size_t len)
{
    char full[8400];
    snprintf(full, sizeof full, "%s%s", root, path);
    FILE *f = fopen(full, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return 0;
}

int
iok_cpu_list_count(const char *text)
{
    int count = 0;
    const char *p = text;
    while (*p == ' ' || *p == '\n')
        p++;
    if (!*p)
        return -1;
    while (*p && *p != '\n') {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p || lo < 0)
            return -1;
        p = end;
        if (*p == '-') {
            hi = strtol(p + 1, &end, 10);
            if (end == p + 1 || hi < lo)
                return -1;
            p = end;
        }
        count += (int)(hi - lo + 1);
        if (*p == ',')
            p++;
        else if (*p && *p != '\n')
            return -1;
    }
    return count;
}

int
iok_cpus_online(const char *root)
{
    char buf[4096];
    if (read_text(root, "/sys/devices/system/cpu/online", buf, sizeof buf) == 0)
        return iok_cpu_list_count(buf);
    if (!root[0]) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? (int)n : -1;
    }
    return -1;
}

int
iok_cpus_threads_per_core(const char *root)
{
    char buf[1024];
    if (read_text(root, "/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", buf,
                  sizeof buf) != 0)
        return 1;
    int n = iok_cpu_list_count(buf);
    return n > 0 ? n : 1;
}

/* One cgroup's quota in CPUs: v2 cpu.max ("max 100000" or "150000 100000"),
 * v1 cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us; -1 when none. */
static double
quota_at(const char *root, const char *dir, int v2)
{
    char path[4200], buf[256];
    if (v2) {
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        if (read_text(root, path, buf, sizeof buf) != 0)
            return -1;
        double q, p;
        if (sscanf(buf, "%lf %lf", &q, &p) != 2 || q <= 0 || p <= 0)
            return -1; /* "max": no quota */
        return q / p;
    }
    char pbuf[256];
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    if (read_text(root, path, buf, sizeof buf) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    if (read_text(root, path, pbuf, sizeof pbuf) != 0)
        return -1;
    double q = strtod(buf, NULL), p = strtod(pbuf, NULL);
    return q > 0 && p > 0 ? q / p : -1;
}

/* The least quota of the cgroup `cg` (a path in the hierarchy mounted at
 * mnt) and its parents: a parent's quota limits its children. A folder
 * that is not there (a container whose hierarchy root is its own cgroup)
 * is passed over. */
static double
walk_up(const char *root, const char *mnt, const char *cg, int v2, double best)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s%s", mnt, strcmp(cg, "/") ? cg : "");
    size_t base = strlen(mnt);
    for (;;) {
        double q = quota_at(root, dir, v2);
        if (q > 0 && (best < 0 || q < best))
            best = q;
        char *slash = strrchr(dir + base, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
    return best;
}

static int
lists_cpu(const char *controllers)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", controllers);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, "cpu"))
            return 1;
    return 0;
}

double
iok_cpus_cgroup(const char *root)
{
    /* where the hierarchies are mounted: pure v2, hybrid (v2 beside v1),
     * and the v1 cpu controller's usual names */
    static const char *const v2_mnt[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    static const char *const v1_mnt[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct",
                                         "/sys/fs/cgroup/cpuacct,cpu"};
    char full[4096], line[4096];
    snprintf(full, sizeof full, "%s/proc/self/cgroup", root);
    FILE *f = fopen(full, "r");
    if (!f)
        return -1;
    double best = -1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c1 = *c2 = '\0';
        const char *controllers = c1 + 1, *cg = c2 + 1;
        if (!strcmp(line, "0") && !controllers[0])
            for (size_t i = 0; i < sizeof v2_mnt / sizeof *v2_mnt; i++)
                best = walk_up(root, v2_mnt[i], cg, 1, best);
        else if (lists_cpu(controllers))
            for (size_t i = 0; i < sizeof v1_mnt / sizeof *v1_mnt; i++)
                best = walk_up(root, v1_mnt[i], cg, 0, best);
    }
    fclose(f);
    return best;
}

int
iok_cores_usable(int online, int affinity, double cgroup)
{
    int u = online > 0 ? online : 0;
    if (affinity > 0 && (u == 0 || affinity < u))
        u = affinity;
    if (cgroup > 0) {
        int q = (int)ceil(cgroup - 1e-9);
        q = q < 1 ? 1 : q;
        if (u == 0 || q < u)
            u = q;
    }
    return u > 0 ? u : 1;
}

/* The node's figures, on its lowest rank: mask is the union of its ranks'. */
static void
node_facts(struct iok_node_cores *n, const cpu_set_t *mask, size_t size, int ranks, unsigned tags)
{
    memset(n, 0, sizeof *n);
    gethostname(n->host, sizeof n->host - 1);
    n->ranks = ranks;
    n->tags = tags;
    n->online_cpus = iok_cpus_online("");
    n->affinity_cpus = CPU_COUNT_S(size, mask);
    n->cgroup_cpus = iok_cpus_cgroup("");
    n->hw_threads_per_core = iok_cpus_threads_per_core("");
    if (n->affinity_cpus <= 0) /* no mask read: the online CPUs */
        n->affinity_cpus = n->online_cpus > 0 ? n->online_cpus : 1;
    if (n->online_cpus <= 0)
        n->online_cpus = n->affinity_cpus;
    n->usable_cores = iok_cores_usable(n->online_cpus, n->affinity_cpus, n->cgroup_cpus);
}

int
iok_cores_node_ranks(MPI_Comm comm)
{
    int rank, n;
    MPI_Comm node;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n;
}

int
iok_cores_gather(MPI_Comm comm, unsigned tag, int node_ranks, struct iok_cores *out)
{
    memset(out, 0, sizeof *out);
    int rank, nrank, nsize, rc = IOK_OK;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm node, leaders;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);

    size_t size = CPU_ALLOC_SIZE(MAX_CPUS);
    int words = (int)(size / sizeof(unsigned long));
    unsigned long mine[MAX_CPUS / (8 * sizeof(unsigned long))], all[sizeof mine / sizeof *mine];
    memset(mine, 0, sizeof mine);
    memset(all, 0, sizeof all);
    if (sched_getaffinity(0, size, (cpu_set_t *)mine) != 0)
        memset(mine, 0, sizeof mine); /* counted as the online CPUs */
    unsigned tags = 0;
    MPI_Reduce(mine, all, words, MPI_UNSIGNED_LONG, MPI_BOR, 0, node);
    MPI_Reduce(&tag, &tags, 1, MPI_UNSIGNED, MPI_BOR, 0, node);

    MPI_Comm_split(comm, nrank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    if (leaders != MPI_COMM_NULL) { /* comm's rank 0 is its node's lowest: a leader, first */
        struct iok_node_cores me;
        node_facts(&me, (const cpu_set_t *)all, size, node_ranks > nsize ? node_ranks : nsize,
                   tags);
        int lrank, nnodes;
        MPI_Comm_rank(leaders, &lrank);
        MPI_Comm_size(leaders, &nnodes);
        struct iok_node_cores *nodes = lrank == 0 ? calloc((size_t)nnodes, sizeof *nodes) : NULL;
        int ok = lrank != 0 || nodes; /* no gather into nothing */
        MPI_Bcast(&ok, 1, MPI_INT, 0, leaders);
        if (ok) /* MPI_BYTE: every node runs the same binary */
            MPI_Gather(&me, (int)sizeof me, MPI_BYTE, nodes, (int)sizeof me, MPI_BYTE, 0, leaders);
        if (lrank == 0 && !nodes)
            rc = iok_error(IOK_EIO, "out of memory gathering the nodes' cores");
        if (nodes) {
            out->node = nodes;
            out->nnodes = nnodes;
            out->usable_min = nodes[0].usable_cores;
            double worst = 0;
            for (int i = 0; i < nnodes; i++) {
                const struct iok_node_cores *n = &nodes[i];
                if (n->usable_cores < out->usable_min)
                    out->usable_min = n->usable_cores;
                double crowd = (double)n->ranks / n->usable_cores;
                out->oversubscribed |= n->ranks > n->usable_cores;
                if (crowd > worst) {
                    worst = crowd;
                    out->worst = i;
                }
            }
        }
        MPI_Comm_free(&leaders);
    }
    MPI_Comm_free(&node);
    return rc;
}

void
iok_cores_free(struct iok_cores *c)
{
    free(c->node);
    c->node = NULL;
    c->nnodes = 0;
}

const char *
iok_cores_words(const struct iok_cores *c, char *buf, size_t len)
{
    buf[0] = '\0';
    if (c && c->oversubscribed && c->nnodes > 0) {
        const struct iok_node_cores *n = &c->node[c->worst];
        snprintf(buf, len, "oversubscribed (%d ranks on %d core%s)", n->ranks, n->usable_cores,
                 n->usable_cores == 1 ? "" : "s");
    }
    return buf;
}
