/* The ceiling: a plain contiguous MPI-IO write of the same bytes by the same
 * ranks in the same job, beside the kernel's own file. Each rank writes as
 * many bytes as it wrote in the kernel's pass, as one contiguous block at
 * the prefix sum of the lower ranks' bytes, with independent write_at calls
 * of at most 1 GiB (as IOR's default: large contiguous blocks need no
 * collective buffering). The file is removed afterwards: the run made it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "iokernels/error.h"

#define CEILING_CHUNK (1 << 30)

int
iok_ceiling_write(const struct iok_run *run, const char *near_path, int64_t bytes,
                  struct iok_ceiling *out)
{
    char path[IOK_OPT_STRLEN + 16];
    snprintf(path, sizeof path, "%s.ceiling", near_path);
    memset(out, 0, sizeof *out);
    int rc = IOK_OK;
    if (run->rank == 0 && access(path, F_OK) == 0)
        rc = iok_error(IOK_EUSAGE,
                       "ceiling file %s exists: remove it (iokernels never deletes "
                       "files it did not create)",
                       path);
    IOK_TRY(iok_agree(run->comm, rc));

    int64_t before = 0, total = 0;
    MPI_Exscan(&bytes, &before, 1, MPI_INT64_T, MPI_SUM, run->comm);
    if (run->rank == 0)
        before = 0;
    MPI_Allreduce(&bytes, &total, 1, MPI_INT64_T, MPI_SUM, run->comm);
    size_t blen = (size_t)(bytes < CEILING_CHUNK ? bytes : CEILING_CHUNK);
    char *buf = malloc(blen ? blen : 1);
    memset(buf, 0xA5, blen); /* outside the timed region */

    MPI_File fh;
    MPI_Barrier(run->comm);
    double t0 = MPI_Wtime();
    int err = MPI_File_open(run->comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_EXCL,
                            MPI_INFO_NULL, &fh);
    int opened = err == MPI_SUCCESS;
    if (opened) {
        for (int64_t off = 0; off < bytes && err == MPI_SUCCESS; off += CEILING_CHUNK) {
            int n = (int)(bytes - off < CEILING_CHUNK ? bytes - off : CEILING_CHUNK);
            err = MPI_File_write_at(fh, before + off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        if (run->core.fsync && err == MPI_SUCCESS)
            err = MPI_File_sync(fh);
        int cerr = MPI_File_close(&fh);
        if (err == MPI_SUCCESS)
            err = cerr;
    }
    double t1 = MPI_Wtime(), begin, end;
    free(buf);
    MPI_Allreduce(&t0, &begin, 1, MPI_DOUBLE, MPI_MIN, run->comm);
    MPI_Allreduce(&t1, &end, 1, MPI_DOUBLE, MPI_MAX, run->comm);
    if (err != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, msg, &len);
        rc = iok_error(IOK_EIO, "ceiling write to %s failed: %s", path, msg);
    }
    rc = iok_agree(run->comm, rc);
    MPI_Barrier(run->comm);
    if (run->rank == 0 && opened)
        unlink(path); /* created with MPI_MODE_EXCL above: ours */
    if (rc)
        return rc;
    out->measured = 1;
    out->bytes = total;
    out->time = end - begin;
    out->bandwidth = out->time > 0 ? (double)total / out->time : 0;
    return IOK_OK;
}
