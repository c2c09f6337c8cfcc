/* SPDX-License-Identifier: BSD-3-Clause */
/* bench/pio's request counter, an LD_PRELOAD library around both sides
 * (PIO's driver and iokernels): the write requests PnetCDF receives
 * (ncmpi_iput_varn calls and the subarrays they carry, ncmpi_iput_vara and
 * ncmpi_bput_vars_* calls) and the MPI-IO writes PnetCDF makes of them
 * (MPI_File_write* calls and their bytes); and the all-to-all exchanges
 * (MPI_Alltoallv and MPI_Alltoallw calls, setup included) and the
 * point-to-point messages (MPI_Send, MPI_Isend) that move the data to the
 * I/O tasks; and the small collectives (MPI_Bcast, MPI_Allreduce: PIO
 * broadcasts every netCDF call's result and agrees on each flush). At MPI_Finalize each rank
 * appends one line to the file $IOK_COUNT_FILE: varn_calls varn_subarrays vara_calls bput_calls
 * wait_all mpi_writes mpi_bytes alltoallv_w sends bcasts allreduces */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>

static long long varn, varn_sub, vara, bput, waits, mpiw, mpib, a2a, sends, bcasts, allreds;

#define NEXT(name)                                                                                 \
    static __typeof__(name) *real;                                                                 \
    if (!real)                                                                                     \
    real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

int
ncmpi_iput_varn(int ncid, int varid, int num, MPI_Offset *const *starts, MPI_Offset *const *counts,
                const void *buf, MPI_Offset bufcount, MPI_Datatype buftype, int *reqid)
{
    NEXT(ncmpi_iput_varn);
    varn++;
    varn_sub += num;
    return real(ncid, varid, num, starts, counts, buf, bufcount, buftype, reqid);
}

int
ncmpi_iput_vara(int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count,
                const void *buf, MPI_Offset bufcount, MPI_Datatype buftype, int *reqid)
{
    NEXT(ncmpi_iput_vara);
    vara++;
    return real(ncid, varid, start, count, buf, bufcount, buftype, reqid);
}

#define BPUT(T, ctype)                                                                             \
    int ncmpi_bput_vars_##T(int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count, \
                            const MPI_Offset *stride, const ctype *op, int *reqid)                 \
    {                                                                                              \
        NEXT(ncmpi_bput_vars_##T);                                                                 \
        bput++;                                                                                    \
        return real(ncid, varid, start, count, stride, op, reqid);                                 \
    }
BPUT(double, double)
BPUT(float, float)
BPUT(int, int)
BPUT(text, char)
BPUT(short, short)
BPUT(schar, signed char)
BPUT(long, long)

int
ncmpi_wait_all(int ncid, int num, int *req, int *st)
{
    NEXT(ncmpi_wait_all);
    waits++;
    return real(ncid, num, req, st);
}

static void
count_write(int count, MPI_Datatype t)
{
    int size;
    MPI_Type_size(t, &size);
    mpiw++;
    mpib += (long long)count * size;
}

int
MPI_File_write_at_all(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype t,
                      MPI_Status *st)
{
    count_write(count, t);
    return PMPI_File_write_at_all(fh, off, buf, count, t, st);
}

int
MPI_File_write_at(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype t,
                  MPI_Status *st)
{
    count_write(count, t);
    return PMPI_File_write_at(fh, off, buf, count, t, st);
}

int
MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype t, MPI_Status *st)
{
    count_write(count, t);
    return PMPI_File_write_all(fh, buf, count, t, st);
}

int
MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype t, MPI_Status *st)
{
    count_write(count, t);
    return PMPI_File_write(fh, buf, count, t, st);
}

int
MPI_Alltoallv(const void *sb, const int *sc, const int *sd, MPI_Datatype st, void *rb,
              const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm comm)
{
    a2a++;
    return PMPI_Alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm);
}

int
MPI_Alltoallw(const void *sb, const int *sc, const int *sd, const MPI_Datatype *st, void *rb,
              const int *rc, const int *rd, const MPI_Datatype *rt, MPI_Comm comm)
{
    a2a++;
    return PMPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm);
}

int
MPI_Send(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm comm)
{
    sends++;
    return PMPI_Send(b, n, t, to, tag, comm);
}

int
MPI_Isend(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm comm, MPI_Request *r)
{
    sends++;
    return PMPI_Isend(b, n, t, to, tag, comm, r);
}

int
MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    bcasts++;
    return PMPI_Bcast(b, n, t, root, comm);
}

int
MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    allreds++;
    return PMPI_Allreduce(sb, rb, n, t, op, comm);
}

int
MPI_Finalize(void)
{
    const char *path = getenv("IOK_COUNT_FILE");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld\n", varn, varn_sub, vara,
                bput, waits, mpiw, mpib, a2a, sends, bcasts, allreds);
        fclose(f);
    }
    return PMPI_Finalize();
}
