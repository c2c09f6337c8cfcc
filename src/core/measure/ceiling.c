/* SPDX-License-Identifier: BSD-3-Clause */
/* The ceiling probe: what plain contiguous I/O of the same bytes by the same
 * ranks achieves in the same job, beside the kernel's own file.
 *
 * Each rank owns one contiguous block of a shared file (blocks aligned to
 * 1 MiB so that O_DIRECT works): it writes its block with independent
 * MPI_File_write_at calls of at most 1 GiB (as IOR's default; large
 * contiguous blocks need no collective buffering), synced inside the timing
 * with --fsync. One sample is one fresh file: open, write, (sync,) close,
 * all timed, as the kernels' span times theirs. Before every sample the
 * node's dirty pages are flushed, untimed: a sample is never slowed by the
 * writeback of the pass before it or of the sample before it (one buffered
 * sample right after a kernel's buffered write ran at 266 MiB/s against
 * 2,900 for the next ones: the kernel's dirty pages throttled it). The best
 * of the samples is the ceiling; all are recorded. The bytes are
 * incompressible (a pseudo-random stream per rank, made untimed): constant
 * bytes would let a compressing or deduplicating file system store almost
 * nothing and inflate the ceiling. (A rank writing more than 1 GiB repeats
 * its buffer every GiB.)
 *
 * Reads are of the pass's kind, on the last sample's file: through the page
 * cache (it was just written), or from storage: through the page cache
 * after fdatasync + fadvise(DONTNEED) of each rank's block, as a kernel's
 * read after --drop-caches (`iokernels ceiling` reads with O_DIRECT, what
 * the device delivers without readahead). The files are removed
 * afterwards: the probe made them (MPI_MODE_EXCL). */
#define _GNU_SOURCE /* O_DIRECT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "iokernels/error.h"

#define CHUNK (1 << 30)
#define NOISE_SEED 0x9E3779B97F4A7C15ULL
#define ALIGN (1 << 20)
#define DIRECT_IO (4 << 20)

/* Fills buf with splitmix64's stream from seed: bytes no compressor or
 * deduplicator can shrink, made outside every timed region. */
static void
fill_incompressible(char *buf, size_t n, uint64_t seed)
{
    uint64_t x = seed;
    for (size_t i = 0; i < n; i += sizeof x) {
        uint64_t z = (x += NOISE_SEED);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        memcpy(buf + i, &z, n - i < sizeof z ? n - i : sizeof z);
    }
}

static double
job_span(MPI_Comm comm, double t0, double t1)
{
    double begin, end;
    MPI_Allreduce(&t0, &begin, 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(&t1, &end, 1, MPI_DOUBLE, MPI_MAX, comm);
    return end - begin;
}

/* Reads (or writes) [off, off+bytes) of an existing file with O_DIRECT, in
 * whole 4 KiB blocks. Returns 0, or errno (EINVAL where the file system
 * refuses O_DIRECT). */
static int
direct_io(const char *path, int64_t off, int64_t bytes, int writing)
{
    int fd = open(path, (writing ? O_WRONLY : O_RDONLY) | O_DIRECT);
    if (fd < 0)
        return errno;
    void *buf;
    if (posix_memalign(&buf, 4096, DIRECT_IO)) {
        close(fd);
        return ENOMEM;
    }
    fill_incompressible(buf, DIRECT_IO, (uint64_t)off + 1);
    int rc = 0;
    for (int64_t done = 0; done < bytes && rc == 0;) {
        size_t n = (size_t)(bytes - done < DIRECT_IO ? bytes - done : DIRECT_IO);
        n = (n + 4095) & ~(size_t)4095;
        ssize_t moved = writing ? pwrite(fd, buf, n, off + done) : pread(fd, buf, n, off + done);
        if (moved < 0)
            rc = errno;
        else if (moved == 0 && writing)
            rc = EIO;
        else if (moved == 0) /* end of file */
            break;
        else
            done += moved;
    }
    if (rc == 0 && writing && fsync(fd) != 0)
        rc = errno;
    free(buf);
    close(fd);
    return rc;
}

/* Flushes the node's dirty pages before a sample: one rank per node. */
static void
flush_node(MPI_Comm node)
{
    int lrank;
    MPI_Comm_rank(node, &lrank);
    if (lrank == 0)
        sync();
    MPI_Barrier(node);
}

/* Drops this rank's block of `path` from the page cache (after a sync). */
static int
forget_block(const char *path, int64_t off, int64_t bytes)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return errno;
    int rc = fdatasync(fd) ? errno : posix_fadvise(fd, off, bytes, POSIX_FADV_DONTNEED);
    close(fd);
    return rc;
}

static char *
mpi_message(int err, char *msg)
{
    int len;
    MPI_Error_string(err, msg, &len);
    return msg;
}

/* One timed sample through MPI-IO, open to close: a write into a fresh file
 * (synced inside the timing with fsync_inside; *created: the file is ours)
 * or a read (through the page cache). Returns an agreed status; *seconds
 * the job's span. */
static int
mpiio_sample(MPI_Comm comm, const char *path, int64_t before, int64_t bytes, char *buf, int writing,
             int fsync_inside, double *seconds, int *created)
{
    MPI_File fh;
    int mode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_EXCL : MPI_MODE_RDONLY;
    MPI_Barrier(comm);
    double t0 = iok_now();
    int err = MPI_File_open(comm, path, mode, MPI_INFO_NULL, &fh);
    int opened = err == MPI_SUCCESS; /* collective: the same on every rank */
    if (created)
        *created = writing && opened;
    for (int64_t off = 0; opened && off < bytes && err == MPI_SUCCESS; off += CHUNK) {
        int n = (int)(bytes - off < CHUNK ? bytes - off : CHUNK);
        err = writing ? MPI_File_write_at(fh, before + off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE)
                      : MPI_File_read_at(fh, before + off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    if (opened && writing && fsync_inside) {
        int serr = MPI_File_sync(fh); /* collective: entered whatever the writes did */
        if (err == MPI_SUCCESS)
            err = serr;
    }
    if (opened) {
        int cerr = MPI_File_close(&fh);
        if (err == MPI_SUCCESS)
            err = cerr;
    }
    double t1 = iok_now();
    *seconds = job_span(comm, t0, t1);
    int rc = IOK_OK;
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        rc = iok_error(IOK_EIO, "ceiling probe: %s %s failed: %s", writing ? "writing" : "reading",
                       path, mpi_message(err, msg));
    }
    return iok_agree(comm, rc);
}

static int
cached_read_sample(MPI_Comm comm, const char *path, int64_t before, int64_t bytes, char *buf,
                   double *seconds)
{
    return mpiio_sample(comm, path, before, bytes, buf, 0, 0, seconds, NULL);
}

/* One timed read sample past the page cache: O_DIRECT, or (direct == 0)
 * MPI-IO after fadvise(DONTNEED) of each rank's block, untimed. */
static int
storage_read_sample(MPI_Comm comm, const char *path, int64_t before, int64_t bytes, char *buf,
                    int direct, double *seconds)
{
    if (!direct) {
        int e = forget_block(path, before, bytes), rc = IOK_OK;
        if (e)
            rc = iok_error(IOK_EIO, "ceiling probe: cannot drop %s from the page cache: %s", path,
                           strerror(e));
        IOK_TRY(iok_agree(comm, rc));
        return cached_read_sample(comm, path, before, bytes, buf, seconds);
    }
    MPI_Barrier(comm);
    double t0 = iok_now();
    int e = direct_io(path, before, bytes, 0);
    double t1 = iok_now();
    *seconds = job_span(comm, t0, t1);
    int rc = IOK_OK;
    if (e)
        rc = iok_error(IOK_EIO, "ceiling probe: O_DIRECT read of %s failed: %s", path, strerror(e));
    return iok_agree(comm, rc);
}

/* Whether every rank can read its block with O_DIRECT (EINVAL: the file
 * system refuses it, as tmpfs does). Untimed. */
static int
direct_supported(MPI_Comm comm, const char *path, int64_t before)
{
    int e = direct_io(path, before, 4096, 0), worst;
    MPI_Allreduce(&e, &worst, 1, MPI_INT, MPI_MAX, comm);
    return worst == 0;
}

static double
best_of(const double *bw, int n, double total, double *seconds)
{
    double best = 0;
    for (int i = 0; i < n; i++)
        if (bw[i] > best)
            best = bw[i];
    *seconds = best > 0 ? total / best : 0;
    return best;
}

static void
sample_path(char *path, size_t len, const char *near_path, int sample)
{
    snprintf(path, len, "%s.ceiling%d", near_path, sample);
}

int
iok_ceiling_probe(MPI_Comm comm, const char *near_path, int64_t bytes, int fsync_inside,
                  enum iok_ceiling_read read_kind, int samples, struct iok_ceiling *out)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int full = out->full;
    memset(out, 0, sizeof *out);
    out->full = full;
    if (samples < 1)
        samples = 1;
    if (samples > IOK_CEILING_SAMPLES_MAX)
        samples = IOK_CEILING_SAMPLES_MAX;
    char path[IOK_OPT_STRLEN + 32];
    int rc = IOK_OK;
    for (int s = 0; rank == 0 && s < samples && rc == IOK_OK; s++) {
        sample_path(path, sizeof path, near_path, s);
        if (access(path, F_OK) == 0)
            rc = iok_error(IOK_EUSAGE,
                           "ceiling file %s exists: remove it (iokernels never deletes files it "
                           "did not create)",
                           path);
    }
    IOK_TRY(iok_agree(comm, rc));

    int64_t span = (bytes + ALIGN - 1) / ALIGN * ALIGN, before = 0, total = 0;
    MPI_Exscan(&span, &before, 1, MPI_INT64_T, MPI_SUM, comm);
    if (rank == 0)
        before = 0;
    MPI_Allreduce(&bytes, &total, 1, MPI_INT64_T, MPI_SUM, comm);
    size_t blen = (size_t)(bytes < CHUNK ? bytes : CHUNK);
    char *buf = malloc(blen ? blen : 1);
    rc = iok_agree(comm, buf ? IOK_OK
                             : iok_error(IOK_EIO, "ceiling probe: no memory for %zu bytes", blen));
    if (rc) {
        free(buf);
        return rc;
    }
    fill_incompressible(buf, blen, (uint64_t)rank + 1); /* outside the timed region */
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);

    out->samples = samples;
    out->fsync = fsync_inside;
    out->read_kind = read_kind;
    int made = 0; /* sample files created, the last one kept for the reads */
    for (int s = 0; s < samples && rc == IOK_OK; s++) {
        if (made && rank == 0) { /* the previous sample's file: ours */
            sample_path(path, sizeof path, near_path, s - 1);
            unlink(path);
        }
        flush_node(node);
        sample_path(path, sizeof path, near_path, s);
        double dt = 0;
        int created = 0;
        rc = mpiio_sample(comm, path, before, bytes, buf, 1, fsync_inside, &dt, &created);
        made = created ? s + 1 : made;
        out->write_bw[s] = dt > 0 ? (double)total / dt : 0;
    }
    if (rc == IOK_OK)
        out->bandwidth = best_of(out->write_bw, samples, (double)total, &out->time);
    sample_path(path, sizeof path, near_path, made ? made - 1 : 0);

    if (rc == IOK_OK && read_kind == IOK_CEIL_READ_STORAGE) {
        flush_node(node);
        /* O_DIRECT only for `iokernels ceiling`: a kernel's read after
         * --drop-caches goes through the page cache, with the kernel's
         * readahead, which O_DIRECT's synchronous 4 MiB reads lack (AMReX's
         * verify on 4 ranks read from storage, by the OS counts, at 1.9x
         * the O_DIRECT probe); its ceiling is the same kind of read */
        out->direct = out->full && direct_supported(comm, path, before);
        for (int s = 0; s < samples && rc == IOK_OK; s++) {
            double dt = 0;
            rc = storage_read_sample(comm, path, before, bytes, buf, out->direct, &dt);
            out->read_bw[s] = dt > 0 ? (double)total / dt : 0;
        }
    } else if (rc == IOK_OK && read_kind == IOK_CEIL_READ_CACHED) {
        for (int s = 0; s < samples && rc == IOK_OK; s++) {
            double dt = 0;
            rc = cached_read_sample(comm, path, before, bytes, buf, &dt);
            out->read_bw[s] = dt > 0 ? (double)total / dt : 0;
        }
    }
    if (rc == IOK_OK && read_kind != IOK_CEIL_READ_NONE)
        out->read_bandwidth = best_of(out->read_bw, samples, (double)total, &out->read_time);

    if (rc == IOK_OK && out->full) { /* the standalone probe: O_DIRECT write, cached read */
        flush_node(node);
        MPI_Barrier(comm);
        double t0 = iok_now();
        int derr = direct_io(path, before, bytes, 1), worst;
        double t1 = iok_now();
        MPI_Allreduce(&derr, &worst, 1, MPI_INT, MPI_MAX, comm);
        double dt = job_span(comm, t0, t1);
        out->direct_write_bandwidth = worst == 0 && dt > 0 ? (double)total / dt : 0;
        double best = 0;
        for (int s = 0; s < samples && rc == IOK_OK; s++) {
            rc = cached_read_sample(comm, path, before, bytes, buf, &dt);
            if (dt > 0 && (double)total / dt > best)
                best = (double)total / dt;
        }
        out->cached_read_bandwidth = best;
    }
    free(buf);
    MPI_Barrier(comm);
    if (rank == 0 && made)
        unlink(path); /* created with MPI_MODE_EXCL above: ours */
    MPI_Comm_free(&node);
    if (rc)
        return rc;
    out->measured = 1;
    out->bytes = total;
    return IOK_OK;
}
