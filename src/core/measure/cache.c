/* SPDX-License-Identifier: BSD-3-Clause */
/* --drop-caches: before a read pass, make the page cache forget the files so
 * that the read measures storage, not memory. One rank per node acts (the
 * page cache is per node). As root: sync, then 3 > /proc/sys/vm/drop_caches;
 * otherwise, or where /proc/sys is read-only (containers): fsync and
 * posix_fadvise(DONTNEED) on every file of the pass (each rank on its own
 * file when every rank has one). */
#define _GNU_SOURCE /* syncfs */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/measure/measure.h"

static int fadvised, fadvise_failed;

static int
forget_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    if (type != FTW_F)
        return 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fadvise_failed++;
        return 0;
    }
    fdatasync(fd); /* dirty pages cannot be dropped */
    if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0)
        fadvised++;
    else
        fadvise_failed++;
    close(fd);
    return 0;
}

static int
drop_all(void)
{
    sync();
    FILE *f = fopen("/proc/sys/vm/drop_caches", "w");
    if (!f)
        return -1;
    int ok = fputs("3\n", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

void
iok_sync_node(MPI_Comm comm, const char *path)
{
    MPI_Comm node;
    int lrank;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    if (lrank == 0) {
        char dir[4096];
        iok_dirname(path, dir, sizeof dir);
        int fd = open(dir, O_RDONLY | O_DIRECTORY);
        if (fd < 0 || syncfs(fd) != 0)
            sync(); /* the whole node's, where one file system cannot be named */
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(node);
    MPI_Comm_free(&node);
}

void
iok_drop_caches(MPI_Comm comm, const char *path, int per_rank, char *how, size_t len)
{
    MPI_Comm node;
    int lrank;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    char mine[64] = "";
    int dropped = 0;
    if (lrank == 0 && geteuid() == 0 && drop_all() == 0) {
        snprintf(mine, sizeof mine, "drop_caches");
        dropped = 1;
    }
    MPI_Bcast(&dropped, 1, MPI_INT, 0, node);
    /* fadvise: one rank per node for a shared file, every rank for its own */
    if (!dropped && (lrank == 0 || per_rank)) {
        fadvised = fadvise_failed = 0;
        nftw(path, forget_file, 16, FTW_PHYS);
        snprintf(mine, sizeof mine, "%s%s",
                 geteuid() == 0 ? "fadvise (drop_caches refused)" : "fadvise (not root)",
                 fadvise_failed ? ", some files not reached" : "");
    }
    MPI_Comm_free(&node);
    /* every rank reports what world rank 0's node did */
    MPI_Bcast(mine, sizeof mine, MPI_CHAR, 0, comm);
    snprintf(how, len, "%s", mine);
}

/* File systems whose reads pass the block layer that /proc/self/io's
 * read_bytes counts: there a read served from memory counts nothing and
 * one from the device counts its bytes. Elsewhere (NFS, Lustre, GPFS,
 * FUSE, tmpfs, overlay, ...) the count says nothing about the page cache. */
int
iok_fs_block_counted(const char *fs)
{
    static const char *const counted[] = {"ext4", "xfs", "btrfs"};
    for (size_t i = 0; i < sizeof counted / sizeof counted[0]; i++)
        if (!strcmp(fs, counted[i]))
            return 1;
    return 0;
}

/* What one node saw of a read pass: its ranks' bytes and OS read_bytes,
 * and the type of the file system it read from. */
struct node_read {
    int64_t bytes, read_bytes; /* read_bytes -1: some rank could not read /proc/self/io */
    char fs[32];
};

void
iok_read_nodes(MPI_Comm comm, const char *path, int64_t bytes, int64_t read_bytes,
               struct iok_pass_result *p)
{
    MPI_Comm node, leaders;
    int lrank, rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    int64_t in[3] = {bytes, read_bytes < 0 ? 0 : read_bytes, read_bytes < 0}, sum[3];
    MPI_Reduce(in, sum, 3, MPI_INT64_T, MPI_SUM, 0, node);
    struct node_read mine = {sum[0], sum[2] ? -1 : sum[1], ""};
    int64_t free_bytes;
    if (lrank == 0)
        iok_fs_describe(path, mine.fs, sizeof mine.fs, &free_bytes);
    /* world rank 0 is its node's rank 0, so a leader: it gathers the nodes */
    MPI_Comm_split(comm, lrank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    struct node_read *all = NULL;
    int nnodes = 0;
    if (leaders != MPI_COMM_NULL) {
        MPI_Comm_size(leaders, &nnodes);
        all = rank == 0 ? malloc((size_t)nnodes * sizeof *all) : NULL;
        int ok = rank != 0 || all, agreed;
        MPI_Allreduce(&ok, &agreed, 1, MPI_INT, MPI_MIN, leaders);
        if (agreed)
            MPI_Gather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, 0, leaders);
        else
            nnodes = 0;
        MPI_Comm_free(&leaders);
    }
    MPI_Comm_free(&node);
    struct iok_read_nodes v = {.nodes = nnodes, .counted = 1, .worst = -1, .worst_fraction = 1};
    for (int i = 0; rank == 0 && i < nnodes; i++) {
        if (!iok_fs_block_counted(all[i].fs) && v.counted) {
            v.counted = 0;
            v.uncounted = i;
            snprintf(v.fs, sizeof v.fs, "%s", all[i].fs);
        }
        if (all[i].read_bytes < 0)
            v.unreadable = 1;
        double f = all[i].bytes > 0 ? (double)all[i].read_bytes / (double)all[i].bytes : 1;
        if (all[i].bytes > 0 && (v.worst < 0 || f < v.worst_fraction)) {
            v.worst = i;
            v.worst_fraction = f;
        }
    }
    if (rank == 0 && nnodes == 0) { /* out of memory on rank 0: nothing known */
        v.counted = 0;
        snprintf(v.fs, sizeof v.fs, "(not gathered)");
    }
    free(all);
    MPI_Bcast(&v, sizeof v, MPI_BYTE, 0, comm);
    p->nodes_read = v;
}

void
iok_read_source(const struct iok_run *run, struct iok_pass_result *p)
{
    p->from_storage = 0;
    p->source[0] = '\0';
    if (p->op == IOK_OP_WRITE || (run->backend->caps & IOK_CAP_NOIO))
        return;
    const struct iok_read_nodes *n = &p->nodes_read;
    p->source_known = 0;
    if (p->os.read_bytes < 0 || n->unreadable) {
        snprintf(p->source, sizeof p->source,
                 "unknown: /proc/self/io unreadable, not counted as from storage");
        return;
    }
    if (!n->counted) {
        snprintf(p->source, sizeof p->source,
                 "unknown: %s on node %d of %d: its reads bypass the block layer that OS "
                 "read_bytes counts, so storage and page cache cannot be told apart",
                 n->fs, n->uncounted, n->nodes);
        return;
    }
    /* storage delivered at least IOK_FROM_STORAGE_FRACTION of what was read
     * on every node (the worst node decides), or it was memory */
    p->source_known = 1;
    p->from_storage = p->os.read_bytes >= IOK_FROM_STORAGE_FRACTION * (double)p->bytes &&
                      n->worst_fraction >= IOK_FROM_STORAGE_FRACTION;
    int len = snprintf(p->source, sizeof p->source,
                       "%s: OS read_bytes %lld = %.1f%% of %lld bytes read (%s %.0f%%)",
                       p->from_storage ? "storage" : "page cache", (long long)p->os.read_bytes,
                       p->bytes ? 100.0 * (double)p->os.read_bytes / (double)p->bytes : 100.0,
                       (long long)p->bytes, p->from_storage ? "at least" : "under",
                       100.0 * IOK_FROM_STORAGE_FRACTION);
    if (n->nodes > 1 && len > 0 && (size_t)len < sizeof p->source)
        snprintf(p->source + len, sizeof p->source - (size_t)len,
                 "; worst of %d nodes: node %d, %.1f%%", n->nodes, n->worst,
                 100.0 * n->worst_fraction);
}
