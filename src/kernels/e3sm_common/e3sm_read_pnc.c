/* SPDX-License-Identifier: BSD-3-Clause */
/* Decomposition files in NetCDF classic formats (CDF-1, -2, -5), read with
 * PnetCDF in independent data mode. */
#include "e3sm_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/formats/cdf.h"
#include "iokernels/error.h"

#include <pnetcdf.h>

/* Rank 0 checks the header against the file's size (core/formats/cdf.c);
 * every rank gets its verdict and message, before any collective open. */
static int
header_agreed(const char *path, MPI_Comm comm)
{
    int rank, rc = IOK_OK;
    char msg[512] = "";
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        rc = iok_cdf_header_check(path);
        if (rc != IOK_OK)
            snprintf(msg, sizeof msg, "%s", iok_errmsg());
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    if (rc == IOK_OK)
        return IOK_OK;
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, comm);
    return rank == 0 ? rc : iok_error(rc, "%s", msg);
}

static int
pnc_fail(struct e3sm_src *s, const char *call, const char *name, int err)
{
    return iok_error(IOK_EUSAGE, "%s: %s(%s) failed: %s", s->path, call, name ? name : "",
                     ncmpi_strerror(err));
}

static int
pnc_var_len(struct e3sm_src *s, const char *name, int64_t *len)
{
    int ncid = *(int *)s->h, varid, nd, dimid;
    if (ncmpi_inq_varid(ncid, name, &varid) != NC_NOERR)
        return 0;
    int err = ncmpi_inq_varndims(ncid, varid, &nd);
    if (err == NC_NOERR && nd != 1)
        return iok_error(IOK_EUSAGE, "%s: variable %s has %d dimensions, expected 1", s->path, name,
                         nd);
    MPI_Offset n = 0;
    if (err == NC_NOERR)
        err = ncmpi_inq_vardimid(ncid, varid, &dimid);
    if (err == NC_NOERR)
        err = ncmpi_inq_dimlen(ncid, dimid, &n);
    if (err != NC_NOERR)
        return -pnc_fail(s, "ncmpi_inq_var", name, err);
    *len = n;
    return 1;
}

static int
pnc_read(struct e3sm_src *s, const char *name, int64_t start, int64_t count, int64_t *buf)
{
    int ncid = *(int *)s->h, varid;
    int err = ncmpi_inq_varid(ncid, name, &varid);
    MPI_Offset st = start, ct = count;
    if (err == NC_NOERR)
        err = ncmpi_get_vara_longlong(ncid, varid, &st, &ct, (long long *)buf);
    return err == NC_NOERR ? IOK_OK : pnc_fail(s, "ncmpi_get_vara_longlong", name, err);
}

static int
pnc_att(struct e3sm_src *s, const char *name, int64_t *vals, int max)
{
    int ncid = *(int *)s->h;
    MPI_Offset n;
    nc_type t;
    if (ncmpi_inq_att(ncid, NC_GLOBAL, name, &t, &n) != NC_NOERR)
        return 0;
    if (t == NC_CHAR || n > max || n < 1)
        return -iok_error(IOK_EUSAGE, "%s: attribute %s must hold 1 to %d integers", s->path, name,
                          max);
    long long v[16];
    int err = ncmpi_get_att_longlong(ncid, NC_GLOBAL, name, v);
    if (err != NC_NOERR)
        return -pnc_fail(s, "ncmpi_get_att_longlong", name, err);
    for (MPI_Offset i = 0; i < n; i++)
        vals[i] = v[i];
    return (int)n;
}

static int
pnc_read_data(struct e3sm_src *s, const char *name, int nd, const int64_t *start,
              const int64_t *count, enum iok_type t, void *buf)
{
    static const MPI_Datatype types[] = {MPI_CHAR,      MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT,
                                         MPI_LONG_LONG, MPI_FLOAT,       MPI_DOUBLE};
    int ncid = *(int *)s->h, varid;
    MPI_Offset st[2] = {0, 0}, ct[2] = {1, 1}, n = 1;
    for (int k = 0; k < nd; k++) {
        st[k] = start[k];
        ct[k] = count[k];
        n *= ct[k];
    }
    int err = ncmpi_inq_varid(ncid, name, &varid);
    if (err == NC_NOERR)
        err = ncmpi_get_vara(ncid, varid, st, ct, buf, n, types[t]);
    return err == NC_NOERR ? IOK_OK : pnc_fail(s, "ncmpi_get_vara", name, err);
}

static int
pnc_close(struct e3sm_src *s)
{
    int ncid = *(int *)s->h;
    ncmpi_end_indep_data(ncid);
    int err = ncmpi_close(ncid);
    free(s->h);
    s->h = NULL;
    return err == NC_NOERR ? IOK_OK : pnc_fail(s, "ncmpi_close", NULL, err);
}

/* PnetCDF reads past the end of a truncated file without an error (the
 * buffer keeps whatever it held): every variable must lie within the file.
 * Record variables end at their last record. */
static int
pnc_check_extent(const char *path, int ncid)
{
    static const int64_t esize[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    struct stat sb;
    if (stat(path, &sb) != 0)
        return iok_error(IOK_EUSAGE, "cannot stat decomposition file %s", path);
    int nvars = 0, unlim = -1;
    MPI_Offset nrecs = 0, recsize = 0;
    ncmpi_inq_nvars(ncid, &nvars);
    ncmpi_inq_unlimdim(ncid, &unlim);
    if (unlim >= 0)
        ncmpi_inq_dimlen(ncid, unlim, &nrecs);
    ncmpi_inq_recsize(ncid, &recsize);
    for (int v = 0; v < nvars; v++) {
        int nd, dimids[16]; /* PnetCDF's NC_MAX_VAR_DIMS is INT_MAX */
        nc_type t;
        MPI_Offset begin, n = 1, len;
        char name[NC_MAX_NAME + 1];
        if (ncmpi_inq_varndims(ncid, v, &nd) != NC_NOERR || nd > 16 ||
            ncmpi_inq_var(ncid, v, name, &t, &nd, dimids, NULL) != NC_NOERR ||
            ncmpi_inq_varoffset(ncid, v, &begin) != NC_NOERR)
            continue;
        int rec = nd > 0 && dimids[0] == unlim;
        /* in int64_t, any overflow (a damaged header's sizes) counting as too long */
        int over = begin < 0 || nrecs < 0 || recsize < 0;
        for (int k = rec; k < nd; k++) {
            ncmpi_inq_dimlen(ncid, dimids[k], &len);
            over |= len < 0 || __builtin_mul_overflow(n, len, &n);
        }
        int64_t bytes, end = 0, recs_at = 0;
        over |= __builtin_mul_overflow(n, t > 0 && t < 12 ? esize[t] : 8, &bytes);
        if (rec && nrecs)
            over |= __builtin_mul_overflow(nrecs - 1, recsize, &recs_at) ||
                    __builtin_add_overflow(begin, recs_at, &end) ||
                    __builtin_add_overflow(end, bytes, &end);
        else if (!rec)
            over |= __builtin_add_overflow(begin, bytes, &end);
        if (over)
            return iok_error(IOK_EUSAGE,
                             "%s: variable %s's size or offset overflows 64 bits: the "
                             "decomposition file's header is damaged",
                             path, iok_quote(name));
        if (end > (int64_t)sb.st_size)
            return iok_error(IOK_EUSAGE,
                             "%s is shorter than its header needs (%lld bytes found, %lld needed "
                             "by variable %s): the decomposition file is truncated",
                             path, (long long)sb.st_size, (long long)end, iok_quote(name));
    }
    return IOK_OK;
}

int
e3sm_src_open_pnc(struct e3sm_src *s, const char *path, MPI_Comm comm)
{
    snprintf(s->path, sizeof s->path, "%s", path);
    IOK_TRY(header_agreed(path, comm));
    struct stat st; /* NetCDF classic stores values uncompressed, 4 bytes at least */
    s->max_values = stat(path, &st) == 0 ? (int64_t)st.st_size / 4 : 0;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_read", "disable"); /* small reads: independent is faster */
    int *ncid = malloc(sizeof *ncid);
    int err = ncmpi_open(comm, path, NC_NOWRITE, info, ncid);
    MPI_Info_free(&info);
    if (err != NC_NOERR) {
        free(ncid);
        return iok_error(IOK_EUSAGE, "cannot open decomposition file %s: %s", path,
                         ncmpi_strerror(err));
    }
    int rc = pnc_check_extent(path, *ncid);
    if (rc != IOK_OK) {
        ncmpi_close(*ncid);
        free(ncid);
        return rc;
    }
    err = ncmpi_begin_indep_data(*ncid);
    if (err != NC_NOERR) {
        ncmpi_close(*ncid);
        free(ncid);
        return iok_error(IOK_EIO, "%s: ncmpi_begin_indep_data failed: %s", path,
                         ncmpi_strerror(err));
    }
    s->h = ncid;
    s->var_len = pnc_var_len;
    s->read = pnc_read;
    s->att = pnc_att;
    s->read_data = pnc_read_data;
    s->close = pnc_close;
    return IOK_OK;
}
