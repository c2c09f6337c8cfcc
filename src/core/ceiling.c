/* SPDX-License-Identifier: BSD-3-Clause */
/* The ceiling probe: what plain contiguous I/O of the same bytes by the same
 * ranks achieves in the same job, beside the kernel's own file.
 *
 * Each rank owns one contiguous block of a shared file (blocks aligned to
 * 1 MiB so that O_DIRECT works): it writes its block with independent
 * MPI_File_write_at calls of at most 1 GiB (as IOR's default; large
 * contiguous blocks need no collective buffering), flushed inside the timing
 * with --fsync; then, after an untimed fsync, reads it back with O_DIRECT,
 * which bypasses the page cache: the device's read rate, against which a
 * kernel's read is judged. The file is removed afterwards: the probe made it
 * (MPI_MODE_EXCL). */
#define _GNU_SOURCE /* O_DIRECT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "iokernels/error.h"

#define CHUNK (1 << 30)
#define ALIGN (1 << 20)
#define DIRECT_IO (4 << 20)

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
    memset(buf, 0x5A, DIRECT_IO);
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

int
iok_ceiling_probe(MPI_Comm comm, const char *near_path, int64_t bytes, int fsync_inside,
                  struct iok_ceiling *out)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    char path[IOK_OPT_STRLEN + 16];
    snprintf(path, sizeof path, "%s.ceiling", near_path);
    int full = out->full;
    memset(out, 0, sizeof *out);
    out->full = full;
    int rc = IOK_OK;
    if (rank == 0 && access(path, F_OK) == 0)
        rc = iok_error(IOK_EUSAGE,
                       "ceiling file %s exists: remove it (iokernels never deletes files it did "
                       "not create)",
                       path);
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
    memset(buf, 0xA5, blen); /* outside the timed region */

    MPI_File fh;
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    int err = MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_EXCL,
                            MPI_INFO_NULL, &fh);
    int opened = err == MPI_SUCCESS;
    if (opened) {
        for (int64_t off = 0; off < bytes && err == MPI_SUCCESS; off += CHUNK) {
            int n = (int)(bytes - off < CHUNK ? bytes - off : CHUNK);
            err = MPI_File_write_at(fh, before + off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        if (fsync_inside && err == MPI_SUCCESS)
            err = MPI_File_sync(fh);
    }
    double t1 = MPI_Wtime();
    free(buf);
    out->time = job_span(comm, t0, t1);
    if (opened) {
        int serr = fsync_inside ? MPI_SUCCESS : MPI_File_sync(fh); /* untimed */
        int cerr = MPI_File_close(&fh);
        if (err == MPI_SUCCESS)
            err = serr != MPI_SUCCESS ? serr : cerr;
    }
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        rc = iok_error(IOK_EIO, "ceiling probe: writing %s failed: %s", path, msg);
    }
    rc = iok_agree(comm, rc);

    if (rc == IOK_OK) {
        MPI_Barrier(comm);
        t0 = MPI_Wtime();
        int derr = direct_io(path, before, bytes, 0), worst;
        t1 = MPI_Wtime();
        out->read_time = job_span(comm, t0, t1);
        MPI_Allreduce(&derr, &worst, 1, MPI_INT, MPI_MAX, comm);
        out->direct = worst == 0;
        out->read_bandwidth =
            out->direct && out->read_time > 0 ? (double)total / out->read_time : 0;
    }
    if (rc == IOK_OK && out->full) { /* the standalone probe: O_DIRECT write, cached read */
        MPI_Barrier(comm);
        t0 = MPI_Wtime();
        int derr = direct_io(path, before, bytes, 1), worst;
        t1 = MPI_Wtime();
        MPI_Allreduce(&derr, &worst, 1, MPI_INT, MPI_MAX, comm);
        double dt = job_span(comm, t0, t1);
        out->direct_write_bandwidth = worst == 0 && dt > 0 ? (double)total / dt : 0;
        /* read twice through the cache: the second is what memory delivers */
        for (int pass = 0; pass < 2; pass++) {
            MPI_File rf;
            MPI_Barrier(comm);
            t0 = MPI_Wtime();
            int e = MPI_File_open(comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &rf);
            int ropened = e == MPI_SUCCESS; /* collective: the same on every rank */
            char *rb = malloc(blen ? blen : 1);
            for (int64_t off = 0; rb && ropened && e == MPI_SUCCESS && off < bytes; off += CHUNK) {
                int n = (int)(bytes - off < CHUNK ? bytes - off : CHUNK);
                e = MPI_File_read_at(rf, before + off, rb, n, MPI_BYTE, MPI_STATUS_IGNORE);
            }
            if (ropened)
                MPI_File_close(&rf); /* whatever the reads did: close is collective */
            free(rb);
            t1 = MPI_Wtime();
            dt = job_span(comm, t0, t1);
            out->cached_read_bandwidth = dt > 0 ? (double)total / dt : 0;
        }
    }
    MPI_Barrier(comm);
    if (rank == 0 && opened)
        unlink(path); /* created with MPI_MODE_EXCL above: ours */
    if (rc)
        return rc;
    out->measured = 1;
    out->bytes = total;
    out->bandwidth = out->time > 0 ? (double)total / out->time : 0;
    return IOK_OK;
}
