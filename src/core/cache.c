/* SPDX-License-Identifier: BSD-3-Clause */
/* --drop-caches: before a read pass, make the page cache forget the files so
 * that the read measures storage, not memory. One rank per node acts (the
 * page cache is per node). As root: sync, then 3 > /proc/sys/vm/drop_caches;
 * otherwise, or where /proc/sys is read-only (containers): fsync and
 * posix_fadvise(DONTNEED) on every file of the pass (each rank on its own
 * file when every rank has one). */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

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

void
iok_read_source(const struct iok_run *run, struct iok_pass_result *p)
{
    p->from_storage = 0;
    p->source[0] = '\0';
    if (p->op == IOK_OP_WRITE || (run->backend->caps & IOK_CAP_NOIO))
        return;
    if (p->os.read_bytes < 0) {
        snprintf(p->source, sizeof p->source,
                 "unknown: /proc/self/io unreadable, not counted as from storage");
        return;
    }
    /* storage delivered at least half of what was read, or it was memory */
    p->from_storage = 2 * p->os.read_bytes >= p->bytes;
    snprintf(p->source, sizeof p->source,
             "%s: OS read_bytes %lld = %.1f%% of %lld bytes read (%s half)",
             p->from_storage ? "storage" : "page cache", (long long)p->os.read_bytes,
             p->bytes ? 100.0 * (double)p->os.read_bytes / (double)p->bytes : 100.0,
             (long long)p->bytes, p->from_storage ? "at least" : "under");
}
