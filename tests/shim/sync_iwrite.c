/* SPDX-License-Identifier: BSD-3-Clause */
/* LD_PRELOAD'ed by tests/e2e/test_compute_async.py: a planted synchronous
 * "asynchronous" write. With IOK_TEST_ASYNC_SYNC=1, MPI_File_iwrite_at and
 * MPI_File_iwrite_at_all write the whole step inside the post (through the
 * blocking PMPI_File_write_at / _all) and return a request already
 * complete (a generalized request): the library hides nothing, and the
 * suite must not report the write hidden behind the computation. Unset:
 * the calls pass through. Read by this shim only, never by iokernels. */
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int
planted(void)
{
    const char *e = getenv("IOK_TEST_ASYNC_SYNC");
    return e && !strcmp(e, "1");
}

static int
query(void *extra, MPI_Status *st)
{
    MPI_Status_set_elements_x(st, MPI_BYTE, *(MPI_Count *)extra);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int
release(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int
cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* The write done; a request that is complete, its status the bytes. */
static int
done(int err, MPI_Datatype type, int count, MPI_Request *req)
{
    if (err != MPI_SUCCESS)
        return err;
    int size = 0;
    MPI_Type_size(type, &size);
    MPI_Count *bytes = malloc(sizeof *bytes);
    *bytes = (MPI_Count)size * count;
    MPI_Grequest_start(query, release, cancel, bytes, req);
    return MPI_Grequest_complete(*req);
}

/* collective: PMPI_File_write_at_all, else PMPI_File_write_at */
static int
blocking(int coll, MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
         MPI_Request *req)
{
    MPI_Status st;
    int err = coll ? PMPI_File_write_at_all(fh, off, buf, count, type, &st)
                   : PMPI_File_write_at(fh, off, buf, count, type, &st);
    return done(err, type, count, req);
}

int
MPI_File_iwrite_at(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
                   MPI_Request *req)
{
    return planted() ? blocking(0, fh, off, buf, count, type, req)
                     : PMPI_File_iwrite_at(fh, off, buf, count, type, req);
}

int
MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
                       MPI_Request *req)
{
    return planted() ? blocking(1, fh, off, buf, count, type, req)
                     : PMPI_File_iwrite_at_all(fh, off, buf, count, type, req);
}
