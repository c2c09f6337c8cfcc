/* SPDX-License-Identifier: BSD-3-Clause */
/* Decomposition files in HDF5 containers: E3SM-IO's HDF5 layout (.h5) and
 * NetCDF-4 (.nc4) both keep Dn.nreqs, Dn.offsets, ... as 1-D datasets in the
 * root group and Dn.dims as a root attribute, so one reader serves both.
 * MPI-IO driver; open and close are collective, reads independent. */
#include "e3sm_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "iokernels/error.h"

#include <hdf5.h>

struct h5src {
    hid_t file;
};

static int
h5_var_len(struct e3sm_src *s, const char *name, int64_t *len)
{
    struct h5src *h = s->h;
    if (H5Lexists(h->file, name, H5P_DEFAULT) <= 0)
        return 0;
    hid_t d = H5Dopen2(h->file, name, H5P_DEFAULT);
    if (d < 0)
        return -iok_error(IOK_EUSAGE, "%s: H5Dopen2(%s) failed", s->path, name);
    hid_t sp = H5Dget_space(d);
    hsize_t n = 0;
    int nd = H5Sget_simple_extent_ndims(sp);
    if (nd == 1)
        H5Sget_simple_extent_dims(sp, &n, NULL);
    H5Sclose(sp);
    H5Dclose(d);
    if (nd != 1)
        return -iok_error(IOK_EUSAGE, "%s: variable %s has %d dimensions, expected 1", s->path,
                          name, nd);
    *len = (int64_t)n;
    return 1;
}

static int
h5_read(struct e3sm_src *s, const char *name, int64_t start, int64_t count, int64_t *buf)
{
    struct h5src *h = s->h;
    hid_t d = H5Dopen2(h->file, name, H5P_DEFAULT);
    if (d < 0)
        return iok_error(IOK_EUSAGE, "%s: H5Dopen2(%s) failed", s->path, name);
    hid_t fs = H5Dget_space(d);
    hsize_t st = (hsize_t)start, ct = (hsize_t)count, one = ct ? ct : 1;
    hid_t ms = H5Screate_simple(1, &one, NULL);
    if (count == 0) {
        H5Sselect_none(fs);
        H5Sselect_none(ms);
    } else {
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &st, NULL, &ct, NULL);
    }
    herr_t e = H5Dread(d, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, buf);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    return e < 0 ? iok_error(IOK_EUSAGE, "%s: H5Dread(%s) of %lld values at %lld failed", s->path,
                             name, (long long)count, (long long)start)
                 : IOK_OK;
}

static int
h5_att(struct e3sm_src *s, const char *name, int64_t *vals, int max)
{
    struct h5src *h = s->h;
    if (H5Aexists(h->file, name) <= 0)
        return 0;
    hid_t a = H5Aopen(h->file, name, H5P_DEFAULT);
    hid_t sp = H5Aget_space(a), t = H5Aget_type(a);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    int rc = 0;
    if (H5Tget_class(t) != H5T_INTEGER || n < 1 || n > max)
        rc = -iok_error(IOK_EUSAGE, "%s: attribute %s must hold 1 to %d integers", s->path, name,
                        max);
    else if (H5Aread(a, H5T_NATIVE_INT64, vals) < 0)
        rc = -iok_error(IOK_EUSAGE, "%s: H5Aread(%s) failed", s->path, name);
    else
        rc = (int)n;
    H5Tclose(t);
    H5Sclose(sp);
    H5Aclose(a);
    return rc;
}

static int
h5_read_data(struct e3sm_src *s, const char *name, int nd, const int64_t *start,
             const int64_t *count, enum iok_type t, void *buf)
{
    struct h5src *h = s->h;
    hid_t d = H5Dopen2(h->file, name, H5P_DEFAULT);
    if (d < 0)
        return iok_error(IOK_EUSAGE, "%s: H5Dopen2(%s) failed", s->path, name);
    hid_t fs = H5Dget_space(d), ftype = H5Dget_type(d);
    hsize_t st[2] = {0, 0}, ct[2] = {1, 1}, n = 1;
    for (int k = 0; k < nd; k++) {
        st[k] = (hsize_t)start[k];
        ct[k] = (hsize_t)count[k];
        n *= ct[k];
    }
    hid_t ms = H5Screate_simple(1, &n, NULL);
    if (nd > 0)
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, ct, NULL);
    /* characters travel as the 1-byte strings they are stored as */
    const hid_t mem[] = {ftype,
                         H5T_NATIVE_INT8,
                         H5T_NATIVE_INT16,
                         H5T_NATIVE_INT32,
                         H5T_NATIVE_INT64,
                         H5T_NATIVE_FLOAT,
                         H5T_NATIVE_DOUBLE};
    herr_t e = H5Dread(d, mem[t], nd > 0 ? ms : H5S_ALL, nd > 0 ? fs : H5S_ALL, H5P_DEFAULT, buf);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Tclose(ftype);
    H5Dclose(d);
    return e < 0 ? iok_error(IOK_EUSAGE, "%s: H5Dread(%s) failed", s->path, name) : IOK_OK;
}

static int
h5_close(struct e3sm_src *s)
{
    struct h5src *h = s->h;
    herr_t e = H5Fclose(h->file);
    free(h);
    s->h = NULL;
    return e < 0 ? iok_error(IOK_EIO, "%s: H5Fclose failed", s->path) : IOK_OK;
}

int
e3sm_src_open_h5(struct e3sm_src *s, const char *path, MPI_Comm comm)
{
    snprintf(s->path, sizeof s->path, "%s", path);
    struct stat st; /* HDF5 may compress: a generous bound (1024 values a byte) */
    s->max_values = stat(path, &st) == 0 ? (int64_t)st.st_size * 1024 : 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (f < 0)
        return iok_error(IOK_EUSAGE, "cannot open decomposition file %s with HDF5", path);
    struct h5src *h = malloc(sizeof *h);
    h->file = f;
    s->h = h;
    s->var_len = h5_var_len;
    s->read = h5_read;
    s->att = h5_att;
    s->read_data = h5_read_data;
    s->close = h5_close;
    return IOK_OK;
}
