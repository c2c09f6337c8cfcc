/* SPDX-License-Identifier: BSD-3-Clause */
/* The NetCDF-4 backend: parallel netCDF-4 files (HDF5 underneath) through
 * nc_create_par / nc_open_par, one nc_put_vara / nc_get_vara per subarray.
 *
 * Transfers are collective or independent per variable (nc_var_par_access).
 * In collective mode every rank makes the same number of vara calls per
 * access: the per-access subarray counts are reduced (MAX) once per put/get
 * and the ranks with fewer subarrays pad with zero-count calls. Scalar
 * variables cannot express a zero count, so they always use independent
 * access (one element: collective buying nothing).
 *
 * Record variables and independent access: netCDF-C (4.9.0 checked) extends
 * an unlimited dimension only in collective mode; an independent
 * nc_put_vara that reaches past the dataset's current extent fails with
 * NC_ECANTEXTEND ("Attempt to extend dataset during NC_INDEPENDENT I/O
 * operation"), even for record 0 of a fresh file. The schema knows how many
 * records the run writes, so define() extends every record variable to its
 * final length right after nc_enddef: one collective nc_put_vara of a single
 * zero element at (last record, 0, ..., 0), issued by every rank with the
 * same value (identical overlapping data). Every rank writing it also keeps
 * netCDF-C's per-rank notion of the dimension length (dim->len, dim->extended)
 * identical; a zero-count rank would not update it, and at close netCDF-C
 * extends a coordinate variable's dataset (a collective HDF5 call) only on
 * the ranks that saw the dimension grow. This is done in collective mode
 * too, so that both modes write the same file layout and no put ever
 * extends a dataset. A barrier then orders these writes before any data
 * write that may overwrite the element. */
#include "iokernels/backend.h"
#include "iokernels/error.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netcdf.h>
#include <netcdf_par.h>
#ifdef IOK_HAVE_HDF5
#include <hdf5.h>
#endif

#define NC4_CHUNK_BYTES ((size_t)4 << 20) /* default chunks stay below 4 MiB */

/* Dimension scales. netCDF-C makes each dimension an HDF5 dimension scale
 * and attaches it to every variable that uses the dimension
 * (H5DSattach_scale, at nc_enddef): each attach rewrites the scale's
 * REFERENCE_LIST attribute, 16 bytes per attached variable. Once the scale
 * holds more than 8 attributes (a coordinate variable such as E3SM's time
 * with 4 attributes of its own beside CLASS, NAME, REFERENCE_LIST,
 * _Netcdf4Coordinates, _Netcdf4Dimid) they move to dense storage, where an
 * attribute above 4 KiB is a fractal-heap "huge" object. Parallel HDF5
 * 1.10.8 then reads back a REFERENCE_LIST that does not decode ("bad
 * version number for attribute message" under H5HF__huge_op_real) on some
 * rank from about the 256th attach on (256 to 263 measured on 2 ranks, with
 * and without collective metadata operations): nc_enddef fails there with
 * "Problem with HDF5 dimscales" and the other ranks hang in the next
 * collective call (netCDF-C issues 2165 and 2251). Measured on 2 ranks: 255
 * variables pass and 256 fail with time carrying 4 attributes, 300 pass
 * with 3; a plain HDF5 program attaching datasets to a scale with 9
 * attributes fails the same way, with 8 it attaches 600; one rank writes 600
 * through netCDF. netCDF-C 4.9 can skip the attaching
 * (NC_NODIMSCALE_ATTACH): each variable then names its dimensions in its
 * _Netcdf4Coordinates attribute and netCDF readers see the same header.
 * "auto" skips it for a schema in which some dimension is used by
 * NC4_DIMSCALE_USERS_MAX variables or more, attaches otherwise. */
#define NC4_DIMSCALE_USERS_MAX 256

/* The CHOICE options' values, each enum in the order of its choices. */
enum nc4_layout { NC4_CONTIGUOUS, NC4_CHUNKED };
enum nc4_dimscales { NC4_DIMSCALES_AUTO, NC4_DIMSCALES_ATTACH, NC4_DIMSCALES_NONE };

struct nc4_opts {
    enum nc4_layout layout;
    int fill;
    int deflate;
    enum nc4_dimscales dimscales;
};

static const struct iok_option nc4_options[] = {
    {"netcdf4-layout", 0, IOK_OPT_CHOICE, offsetof(struct nc4_opts, layout), "contiguous",
     "storage of fixed-size variables (record variables are always chunked)", "contiguous|chunked"},
    {"netcdf4-fill", 0, IOK_OPT_BOOL, offsetof(struct nc4_opts, fill), "0",
     "pre-fill variables with fill values (default: off, NC_NOFILL)", NULL},
    {"netcdf4-deflate", 0, IOK_OPT_INT, offsetof(struct nc4_opts, deflate), "0",
     "deflate level with shuffle; needs collective transfers", NULL, .min = "0", .max = "9"},
    {"netcdf4-dimscales", 0, IOK_OPT_CHOICE, offsetof(struct nc4_opts, dimscales), "auto",
     "attach HDF5 dimension scales to the variables; auto: not when a dimension has 256 "
     "variables or more (parallel HDF5 1.10 fails there; NC_NODIMSCALE_ATTACH)",
     "auto|attach|none"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* One open file. */
struct nc4_file {
    int ncid; /* -1 when not open */
    MPI_Comm comm;
    int rank;
    int collective;
    struct nc4_opts opts;
    const struct iok_schema *s; /* owned by the caller, outlives the handle */
    char *path;
    int *varids;                 /* schema variable -> netCDF variable */
    size_t (*len)[IOK_MAX_DIMS]; /* extents: the schema's (write), the file's (read) */
};

static const nc_type nc4_types[] = {NC_CHAR,  NC_BYTE,  NC_SHORT, NC_INT,
                                    NC_INT64, NC_FLOAT, NC_DOUBLE};

/* Records a netCDF failure: "call on path kind name: message". */
static int
nc4_fail(const struct nc4_file *f, const char *call, const char *kind, const char *name, int err)
{
    if (kind)
        return iok_error(IOK_EIO, "%s on %s %s %s: %s", call, f->path, kind, name,
                         nc_strerror(err));
    return iok_error(IOK_EIO, "%s on %s: %s", call, f->path, nc_strerror(err));
}

static void
nc4_free(struct nc4_file *f)
{
    if (!f)
        return;
    free(f->path);
    free(f->varids);
    free(f->len);
    free(f);
}

static int
nc4_alloc(struct nc4_file **out, const char *path, const struct iok_schema *s,
          const struct iok_backend_params *p)
{
    struct nc4_file *f = calloc(1, sizeof *f);
    size_t nv = s->nvars > 0 ? (size_t)s->nvars : 1;
    if (f) {
        f->path = strdup(path);
        f->varids = calloc(nv, sizeof *f->varids);
        f->len = calloc(nv, sizeof *f->len);
    }
    if (!f || !f->path || !f->varids || !f->len) {
        nc4_free(f);
        return iok_error(IOK_EIO, "netcdf4 backend on %s: out of memory", path);
    }
    f->ncid = -1;
    f->comm = p->comm;
    MPI_Comm_rank(p->comm, &f->rank);
    f->collective = p->collective;
    f->s = s;
    if (p->opts)
        memcpy(&f->opts, p->opts, sizeof f->opts);
    else {
        f->opts.layout = NC4_CONTIGUOUS;
        f->opts.dimscales = NC4_DIMSCALES_AUTO;
    }
    *out = f;
    return IOK_OK;
}

static const char *
nc4_version(void)
{
    /* Written on every call with the same text: a cache of a constant. */
    static char buf[160];
    const char *v = nc_inq_libvers();
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == '$' || v[n - 1] == ' '))
        n--; /* "4.9.0 of Aug  7 2022 23:42:36 $" */
    snprintf(buf, sizeof buf, "NetCDF %.*s", (int)n, v);
    return buf;
}

/* The most variables that use one dimension of s (a variable using it
 * twice counts twice: two references in the scale's list). */
static int
nc4_most_users(const struct iok_schema *s)
{
    int most = 0;
    for (int d = 0; d < s->ndims; d++) {
        int users = 0;
        for (int v = 0; v < s->nvars; v++)
            for (int k = 0; k < s->vars[v].ndims; k++)
                users += s->vars[v].dimids[k] == d;
        most = users > most ? users : most;
    }
    return most;
}

/* The create mode flag for --netcdf4-dimscales (see the top of the file). */
static int
nc4_dimscale_mode(const char *path, const struct iok_schema *s, enum nc4_dimscales choice,
                  int *mode)
{
    int skip = choice == NC4_DIMSCALES_NONE ||
               (choice == NC4_DIMSCALES_AUTO && nc4_most_users(s) >= NC4_DIMSCALE_USERS_MAX);
    *mode = 0;
    if (!skip)
        return IOK_OK;
#ifdef NC_NODIMSCALE_ATTACH
    *mode = NC_NODIMSCALE_ATTACH;
    return IOK_OK;
#else
    return iok_error(IOK_EUSAGE,
                     "%s: a dimension has %d variables; this netCDF-C (%s) cannot skip "
                     "attaching dimension scales (NC_NODIMSCALE_ATTACH, 4.9): give "
                     "--netcdf4-dimscales attach on one rank, or use another backend",
                     path, nc4_most_users(s), nc_inq_libvers());
#endif
}

static int
nc4_create(void **handle, const char *path, const struct iok_schema *s,
           const struct iok_backend_params *p)
{
    *handle = NULL;
    const struct nc4_opts *o = p->opts;
    if (o && o->deflate > 0 && !p->collective)
        return iok_error(IOK_EUSAGE, "--netcdf4-deflate needs collective transfers (--collective)");

    IOK_TRY(iok_backend_check_deflate(path, s, p, "NetCDF-4"));

    int dsmode;
    IOK_TRY(nc4_dimscale_mode(path, s, o ? o->dimscales : NC4_DIMSCALES_AUTO, &dsmode));
    struct nc4_file *f;
    IOK_TRY(nc4_alloc(&f, path, s, p));
    for (int v = 0; v < s->nvars; v++)
        for (int k = 0; k < s->vars[v].ndims; k++)
            f->len[v][k] = (size_t)iok_var_dim_len(s, v, k);
    int err = nc_create_par(path, NC_NETCDF4 | NC_CLOBBER | dsmode, p->comm, iok_params_info(p),
                            &f->ncid);
    if (err) {
        int rc = nc4_fail(f, "nc_create_par", NULL, NULL, err);
        nc4_free(f);
        return rc;
    }
    *handle = f;
    return IOK_OK;
}

/* Chunk sizes of variable v: the hint where given (clamped to fixed extents),
 * else 1 along the record dimension and the full extent of the others, the
 * largest unhinted one halved until a chunk holds at most 4 MiB. */
static void
nc4_chunks(const struct nc4_file *f, int v, size_t *chunk)
{
    const struct iok_var *var = &f->s->vars[v];
    int hinted[IOK_MAX_DIMS];
    for (int k = 0; k < var->ndims; k++) {
        const struct iok_dim *d = &f->s->dims[var->dimids[k]];
        size_t ext = d->unlimited ? 1 : (d->len > 0 ? (size_t)d->len : 1);
        hinted[k] = var->chunk[k] > 0;
        chunk[k] = hinted[k] ? (size_t)var->chunk[k] : ext;
        if (hinted[k] && !d->unlimited && chunk[k] > ext)
            chunk[k] = ext;
    }
    for (;;) {
        size_t bytes = iok_type_size(var->type);
        int big = -1;
        for (int k = 0; k < var->ndims; k++) {
            bytes *= chunk[k];
            if (!hinted[k] && chunk[k] > 1 && (big < 0 || chunk[k] > chunk[big]))
                big = k;
        }
        if (bytes <= NC4_CHUNK_BYTES || big < 0)
            break;
        chunk[big] = (chunk[big] + 1) / 2;
    }
}

/* Storage, fill and compression of a freshly defined variable v: the
 * schema's hints, the options overriding them when set (--netcdf4-fill,
 * --netcdf4-deflate above 0). */
static int
nc4_def_storage(struct nc4_file *f, int v)
{
    const struct iok_var *var = &f->s->vars[v];
    int vid = f->varids[v], err;
    int deflate = f->opts.deflate > 0 ? f->opts.deflate : var->deflate;
    int fill = f->opts.fill || var->fill;
    if (var->ndims > 0) {
        int asked = iok_var_is_record(f->s, v) || f->opts.layout == NC4_CHUNKED;
        for (int k = 0; k < var->ndims; k++)
            asked |= var->chunk[k] > 0;
        size_t chunk[IOK_MAX_DIMS];
        nc4_chunks(f, v, chunk);
        /* compression alone: the library's default chunks, as an application
         * that asks for nothing but deflate gets them */
        if (asked)
            err = nc_def_var_chunking(f->ncid, vid, NC_CHUNKED, chunk);
        else
            err = deflate > 0 ? NC_NOERR : nc_def_var_chunking(f->ncid, vid, NC_CONTIGUOUS, NULL);
        if (err)
            return nc4_fail(f, "nc_def_var_chunking", "variable", var->name, err);
        /* --netcdf4-deflate shuffles; a schema's level shuffles when it asks */
        int shuffle = f->opts.deflate > 0 || var->shuffle;
        if (deflate > 0 && (err = nc_def_var_deflate(f->ncid, vid, shuffle, 1, deflate)))
            return nc4_fail(f, "nc_def_var_deflate", "variable", var->name, err);
    }
    if (!fill && (err = nc_def_var_fill(f->ncid, vid, NC_NOFILL, NULL)))
        return nc4_fail(f, "nc_def_var_fill", "variable", var->name, err);
    return IOK_OK;
}

/* Extends record variable v to its final number of records (see the top of
 * the file): a collective write of one zero element at the last record. */
static int
nc4_extend(struct nc4_file *f, int v)
{
    const struct iok_var *var = &f->s->vars[v];
    size_t start[IOK_MAX_DIMS], count[IOK_MAX_DIMS];
    for (int k = 0; k < var->ndims; k++) {
        if (f->len[v][k] == 0)
            return IOK_OK; /* no element to write: nothing to extend */
        start[k] = k == 0 ? f->len[v][0] - 1 : 0;
        count[k] = 1;
    }
    unsigned char zero[16] = {0};
    int err = nc_var_par_access(f->ncid, f->varids[v], NC_COLLECTIVE);
    if (err)
        return nc4_fail(f, "nc_var_par_access", "variable", var->name, err);
    if ((err = nc_put_vara(f->ncid, f->varids[v], start, count, zero)))
        return nc4_fail(f, "nc_put_vara (record extension)", "variable", var->name, err);
    return IOK_OK;
}

/* Collective or independent access for every variable; scalars independent. */
static int
nc4_set_access(struct nc4_file *f)
{
    for (int v = 0; v < f->s->nvars; v++) {
        int mode = f->collective && f->s->vars[v].ndims > 0 ? NC_COLLECTIVE : NC_INDEPENDENT;
        int err = nc_var_par_access(f->ncid, f->varids[v], mode);
        if (err)
            return nc4_fail(f, "nc_var_par_access", "variable", f->s->vars[v].name, err);
    }
    return IOK_OK;
}

static int
nc4_define(void *handle)
{
    struct nc4_file *f = handle;
    const struct iok_schema *s = f->s;
    int err, dimids[IOK_MAX_DIMS];
    int *ncdim = malloc((s->ndims > 0 ? (size_t)s->ndims : 1) * sizeof *ncdim);
    if (!ncdim)
        return iok_error(IOK_EIO, "netcdf4 define on %s: out of memory", f->path);

    for (int d = 0; d < s->ndims; d++) {
        size_t len = s->dims[d].unlimited ? NC_UNLIMITED : (size_t)s->dims[d].len;
        if ((err = nc_def_dim(f->ncid, s->dims[d].name, len, &ncdim[d]))) {
            free(ncdim);
            return nc4_fail(f, "nc_def_dim", "dimension", s->dims[d].name, err);
        }
    }
    for (int v = 0; v < s->nvars; v++) {
        const struct iok_var *var = &s->vars[v];
        for (int k = 0; k < var->ndims; k++)
            dimids[k] = ncdim[var->dimids[k]];
        if ((err = nc_def_var(f->ncid, var->name, nc4_types[var->type], var->ndims, dimids,
                              &f->varids[v]))) {
            free(ncdim);
            return nc4_fail(f, "nc_def_var", "variable", var->name, err);
        }
        int rc = nc4_def_storage(f, v);
        if (rc != IOK_OK) {
            free(ncdim);
            return rc;
        }
    }
    free(ncdim);

    for (int i = 0; i < s->nattrs; i++) {
        const struct iok_attr *a = &s->attrs[i];
        int vid = a->owner == IOK_GLOBAL ? NC_GLOBAL : f->varids[a->owner];
        err = a->type == IOK_CHAR
                  ? nc_put_att_text(f->ncid, vid, a->name, a->len, a->value)
                  : nc_put_att(f->ncid, vid, a->name, nc4_types[a->type], a->len, a->value);
        if (err) {
            char what[512];
            snprintf(what, sizeof what, "%s:%s",
                     a->owner == IOK_GLOBAL ? "" : s->vars[a->owner].name, a->name);
            return nc4_fail(f, a->type == IOK_CHAR ? "nc_put_att_text" : "nc_put_att", "attribute",
                            what, err);
        }
    }
    if ((err = nc_enddef(f->ncid)))
        return nc4_fail(f, "nc_enddef", NULL, NULL, err);

    int any = 0;
    for (int v = 0; v < s->nvars; v++)
        if (iok_var_is_record(s, v)) {
            IOK_TRY(nc4_extend(f, v));
            any = 1;
        }
    if (any)
        MPI_Barrier(f->comm);
    return nc4_set_access(f);
}

static int
nc4_open(void **handle, const char *path, const struct iok_schema *s,
         const struct iok_backend_params *p)
{
    *handle = NULL;
    struct nc4_file *f;
    IOK_TRY(nc4_alloc(&f, path, s, p));
    int err = nc_open_par(path, NC_NOWRITE, p->comm, iok_params_info(p), &f->ncid);
    if (err) {
        /* A missing file comes back as EBADF ("Bad file descriptor"): say why. */
        int rc;
        if (access(path, R_OK) != 0)
            rc = iok_error(IOK_EIO, "nc_open_par on %s: %s (%s)", path, strerror(errno),
                           nc_strerror(err));
        else
            rc = nc4_fail(f, "nc_open_par", NULL, NULL, err);
        nc4_free(f);
        return rc;
    }
    int rc = IOK_OK;
    for (int v = 0; v < s->nvars && rc == IOK_OK; v++) {
        const struct iok_var *var = &s->vars[v];
        int vid, nd, dimids[NC_MAX_VAR_DIMS];
        nc_type xt;
        const char *call = "nc_inq_varid";
        if ((err = nc_inq_varid(f->ncid, var->name, &vid)) ||
            (call = "nc_inq_var", err = nc_inq_var(f->ncid, vid, NULL, &xt, &nd, dimids, NULL))) {
            rc = nc4_fail(f, call, "variable", var->name, err);
            break;
        }
        f->varids[v] = vid;
        if (xt != nc4_types[var->type]) {
            char tname[NC_MAX_NAME + 1] = "of another type";
            nc_inq_type(f->ncid, xt, tname, NULL);
            rc = iok_check_var_type(path, s, v, tname);
            break;
        }
        if ((rc = iok_check_var_rank(path, s, v, nd)))
            break;
        for (int k = 0; k < nd; k++) {
            if ((err = nc_inq_dimlen(f->ncid, dimids[k], &f->len[v][k]))) {
                rc = nc4_fail(f, "nc_inq_dimlen", "variable", var->name, err);
                break;
            }
            if ((rc = iok_check_var_dim(path, s, v, k, (int64_t)f->len[v][k])))
                break;
        }
    }
    if (rc == IOK_OK)
        rc = nc4_set_access(f);
    if (rc != IOK_OK) {
        nc_close(f->ncid);
        nc4_free(f);
        return rc;
    }
    *handle = f;
    return IOK_OK;
}

/* put and get: one vara call per subarray, padded with zero-count calls to
 * calls_max (the most any rank makes, agreed by the core before the post;
 * the core also checked every request against the schema, which open
 * matched with the file). */
static int
nc4_xfer(void *handle, enum iok_dir dir, struct iok_reqlist *r)
{
    struct nc4_file *f = handle;
    const int write = dir == IOK_DIR_WRITE;
    const char *call = write ? "nc_put_vara" : "nc_get_vara";
    int n = r->n, rc = IOK_OK;
    for (int i = 0; i < n && rc == IOK_OK; i++) {
        const struct iok_access *a = &r->acc[i];
        const struct iok_var *var = &f->s->vars[a->varid];
        int nd = var->ndims, vid = f->varids[a->varid];
        size_t esz = iok_type_size(var->type);
        char *p = a->buf, dummy[16];
        /* Scalars are accessed independently (see nc4_set_access): no padding. */
        int calls = nd > 0 && f->collective ? a->calls_max : a->nsub;
        for (int j = 0; j < calls; j++) {
            size_t start[IOK_MAX_DIMS] = {0}, count[IOK_MAX_DIMS] = {0}, ne = 0;
            if (j < a->nsub) {
                ne = 1;
                for (int k = 0; k < nd; k++) {
                    start[k] = (size_t)a->starts[(size_t)j * nd + k];
                    count[k] = (size_t)a->counts[(size_t)j * nd + k];
                    ne *= count[k];
                }
            }
            void *data = ne > 0 ? (void *)p : (void *)dummy;
            int err = write ? nc_put_vara(f->ncid, vid, start, count, data)
                            : nc_get_vara(f->ncid, vid, start, count, data);
            if (err) {
                rc = nc4_fail(f, call, "variable", var->name, err);
                break;
            }
            p += ne * esz;
        }
    }
    return rc;
}

static int
nc4_flush(void *handle)
{
    struct nc4_file *f = handle;
    int err = nc_sync(f->ncid);
    return err ? nc4_fail(f, "nc_sync", NULL, NULL, err) : IOK_OK;
}

static int
nc4_close(void *handle)
{
    struct nc4_file *f = handle;
    int rc = IOK_OK;
    if (!f)
        return IOK_OK;
    if (f->ncid >= 0) {
        int err = nc_close(f->ncid);
        f->ncid = -1;
        if (err)
            rc = nc4_fail(f, "nc_close", NULL, NULL, err);
    }
    nc4_free(f);
    return rc;
}

#ifdef IOK_HAVE_HDF5
/* NetCDF-4 has no call for the hints in effect: they are those of the MPI
 * file under its HDF5 file, found among the HDF5 files open in this process
 * by name (the same HDF5 library serves both backends). */
static int
nc4_info(void *h, MPI_Info *out)
{
    struct nc4_file *f = h;
    *out = MPI_INFO_NULL;
    ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE);
    hid_t ids[64], found = H5I_INVALID_HID;
    if (n <= 0)
        return IOK_OK;
    n = H5Fget_obj_ids(H5F_OBJ_ALL, H5F_OBJ_FILE, 64, ids);
    for (ssize_t i = 0; i < n; i++) {
        char name[4096];
        if (H5Fget_name(ids[i], name, sizeof name) > 0 && !strcmp(name, f->path))
            found = ids[i];
    }
    if (found == H5I_INVALID_HID)
        return IOK_OK; /* cannot tell */
    hid_t fapl = H5Fget_access_plist(found);
    MPI_File *fh = NULL;
    int ok = fapl >= 0 && H5Fget_vfd_handle(found, fapl, (void **)&fh) >= 0 && fh;
    if (fapl >= 0)
        H5Pclose(fapl);
    if (ok && MPI_File_get_info(*fh, out) != MPI_SUCCESS)
        *out = MPI_INFO_NULL;
    return IOK_OK;
}
#endif

const struct iok_backend iok_backend_netcdf4 = {
    .abi = IOK_BACKEND_ABI,
    .name = "netcdf4",
    .summary = "NetCDF-4 parallel (HDF5 underneath)",
    .ext = ".nc4",
    .caps = IOK_CAP_COLLECTIVE | IOK_CAP_INDEPENDENT | IOK_CAP_ATTRS | IOK_CAP_CHUNKS |
            IOK_CAP_FILL | IOK_CAP_DEFLATE | IOK_CAP_AGREED_CALLS | IOK_CAP_HINTS,
    .options = nc4_options,
    .opts_size = sizeof(struct nc4_opts),
    .version = nc4_version,
    .create = nc4_create,
    .define = nc4_define,
    .open = nc4_open,
    .xfer = nc4_xfer, /* vara calls block: no wait */
    .flush = nc4_flush,
    .close = nc4_close,
#ifdef IOK_HAVE_HDF5
    .info = nc4_info,
#endif
};
