/* SPDX-License-Identifier: BSD-3-Clause */
/* Parallel HDF5 backend: one dataset per variable, MPI-IO file driver.
 *
 * Groups of the schema are HDF5 groups (a variable named "a/b" is dataset b
 * of group a); compound types are HDF5 compound types: a variable with one
 * is stored with its last dimension folded into the compound, and an
 * attribute as len / nfields compound values.
 *
 * Record variables are chunked datasets with an unlimited first dimension,
 * created with the number of records the run writes. An access is one
 * H5Dwrite/H5Dread when its subarrays can be selected as one union of
 * hyperslabs in the order they lie in the buffer, else one call per
 * subarray. In collective mode the ranks agree on the number of calls per
 * access and pad with empty selections. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <mpi.h>

#include "iokernels/backend.h"
#include "iokernels/error.h"

enum hdf5_layout { HDF5_CONTIGUOUS, HDF5_CHUNKED }; /* --hdf5-layout, in its choices' order */

struct hdf5_opts {
    enum hdf5_layout layout; /* of fixed-size variables */
    int64_t chunk_kib;       /* target chunk size without a chunk hint */
    int64_t alignment;       /* H5Pset_alignment when > 0 */
};

static const struct iok_option hdf5_options[] = {
    {"hdf5-layout", 0, IOK_OPT_CHOICE, offsetof(struct hdf5_opts, layout), "contiguous",
     "layout of fixed-size datasets (record variables are always chunked)", "contiguous|chunked"},
    {"hdf5-chunk-kib", 0, IOK_OPT_INT64, offsetof(struct hdf5_opts, chunk_kib), "4096",
     "target chunk size in KiB for variables without a chunk hint", NULL},
    {"hdf5-alignment", 0, IOK_OPT_INT64, offsetof(struct hdf5_opts, alignment), "0",
     "align file objects to this many bytes (H5Pset_alignment; 0 = off)", NULL},
    {NULL},
};

/* One open file. */
struct h5file {
    char *path;
    const struct iok_schema *s; /* owned by the caller, outlives the handle */
    struct iok_backend_params p;
    struct hdf5_opts o;
    hid_t file, fapl, dxpl;
    hid_t chartype;                /* 1-byte C string: file and memory type of IOK_CHAR */
    hid_t *dsets;                  /* one per variable, H5I_INVALID_HID until opened */
    hsize_t (*dims)[IOK_MAX_DIMS]; /* current extents per variable (its HDF5 rank) */
    hid_t *groups;                 /* one per schema group, while defining */
    hid_t *cfile, *cmem;           /* file and memory type of each compound */
};

static herr_t
walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc)
        snprintf(data, 256, "%s", e->desc);
    return 0;
}

/* Records "<what> (<most specific HDF5 error>)" as this rank's error. Must be
 * called right after the failing call, before the next API call clears the
 * error stack. */
static int h5fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
h5fail(const char *fmt, ...)
{
    char what[1024], why[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, why);
    if (why[0])
        return iok_error(IOK_EIO, "%s (%s)", what, why);
    return iok_error(IOK_EIO, "%s", what);
}

static int hdf5_close(void *handle);

static const char *
hdf5_version(void)
{
    static char buf[64];
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    snprintf(buf, sizeof buf, "HDF5 %u.%u.%u", maj, min, rel);
    return buf;
}

/* File types are little-endian whatever the machine; memory types native.
 * HDF5 converts no integer type to a string type, so IOK_CHAR data travel as
 * the 1-byte string type they are stored as. */
static hid_t
file_type(const struct h5file *f, enum iok_type t)
{
    const hid_t types[] = {f->chartype,   H5T_STD_I8LE,   H5T_STD_I16LE, H5T_STD_I32LE,
                           H5T_STD_I64LE, H5T_IEEE_F32LE, H5T_IEEE_F64LE};
    return types[t];
}

static hid_t
mem_type(const struct h5file *f, enum iok_type t)
{
    const hid_t types[] = {f->chartype,      H5T_NATIVE_INT8,  H5T_NATIVE_INT16, H5T_NATIVE_INT32,
                           H5T_NATIVE_INT64, H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE};
    return types[t];
}

/* Values of the schema's base type per HDF5 element of variable v: the
 * compound's field count, or 1. */
static int
var_fields(const struct h5file *f, int v)
{
    int c = f->s->vars[v].compound;
    return c >= 0 ? f->s->compounds[c].nfields : 1;
}

/* HDF5 rank of variable v: a compound folds the last dimension. */
static int
var_rank(const struct h5file *f, int v)
{
    return f->s->vars[v].ndims - (f->s->vars[v].compound >= 0);
}

static hid_t
var_file_type(const struct h5file *f, int v)
{
    int c = f->s->vars[v].compound;
    return c >= 0 ? f->cfile[c] : file_type(f, f->s->vars[v].type);
}

static hid_t
var_mem_type(const struct h5file *f, int v)
{
    int c = f->s->vars[v].compound;
    return c >= 0 ? f->cmem[c] : mem_type(f, f->s->vars[v].type);
}

/* The file and memory types of every compound: fields packed one after
 * another, as the values lie in buffers and attribute values. */
static int
make_compounds(struct h5file *f)
{
    int n = f->s->ncompounds;
    f->cfile = malloc((size_t)(n ? n : 1) * sizeof *f->cfile);
    f->cmem = malloc((size_t)(n ? n : 1) * sizeof *f->cmem);
    if (!f->cfile || !f->cmem)
        return iok_error(IOK_EIO, "out of memory opening %s", f->path);
    for (int c = 0; c < n; c++)
        f->cfile[c] = f->cmem[c] = H5I_INVALID_HID;
    for (int c = 0; c < n; c++) {
        const struct iok_compound *cp = &f->s->compounds[c];
        size_t size = iok_type_size(cp->base);
        f->cfile[c] = H5Tcreate(H5T_COMPOUND, size * (size_t)cp->nfields);
        f->cmem[c] = H5Tcreate(H5T_COMPOUND, size * (size_t)cp->nfields);
        if (f->cfile[c] < 0 || f->cmem[c] < 0)
            return h5fail("H5Tcreate(H5T_COMPOUND) failed for %s", f->path);
        for (int k = 0; k < cp->nfields; k++)
            if (H5Tinsert(f->cfile[c], cp->fields[k], size * (size_t)k, file_type(f, cp->base)) <
                    0 ||
                H5Tinsert(f->cmem[c], cp->fields[k], size * (size_t)k, mem_type(f, cp->base)) < 0)
                return h5fail("H5Tinsert(%s) failed for %s", cp->fields[k], f->path);
    }
    return IOK_OK;
}

/* Allocates the handle and the property lists shared by create and open. On
 * failure *out may still hold a partial handle (for hdf5_close). */
static int
new_handle(struct h5file **out, const char *path, const struct iok_schema *s,
           const struct iok_backend_params *p)
{
    *out = NULL;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    struct h5file *f = calloc(1, sizeof *f);
    if (!f)
        return iok_error(IOK_EIO, "out of memory opening %s", path);
    f->file = f->fapl = f->dxpl = f->chartype = H5I_INVALID_HID;
    *out = f;
    f->s = s;
    f->p = *p;
    if (p->opts) {
        f->o = *(const struct hdf5_opts *)p->opts;
    } else {
        f->o.layout = HDF5_CONTIGUOUS;
        f->o.chunk_kib = 4096;
    }
    f->p.opts = &f->o;
    f->path = strdup(path);
    int nv = s->nvars;
    f->dsets = malloc((size_t)(nv ? nv : 1) * sizeof *f->dsets);
    f->dims = calloc((size_t)(nv ? nv : 1), sizeof *f->dims);
    f->groups = malloc((size_t)(s->ngroups ? s->ngroups : 1) * sizeof *f->groups);
    if (!f->path || !f->dsets || !f->dims || !f->groups)
        return iok_error(IOK_EIO, "out of memory opening %s", path);
    for (int v = 0; v < nv; v++)
        f->dsets[v] = H5I_INVALID_HID;
    for (int g = 0; g < s->ngroups; g++)
        f->groups[g] = H5I_INVALID_HID;

    f->fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (f->fapl < 0 || H5Pset_fapl_mpio(f->fapl, p->comm, iok_params_info(p)) < 0)
        return h5fail("H5Pset_fapl_mpio failed for %s", path);
    if (H5Pset_all_coll_metadata_ops(f->fapl, 1) < 0 || H5Pset_coll_metadata_write(f->fapl, 1) < 0)
        return h5fail("H5Pset_all_coll_metadata_ops failed for %s", path);
    if (f->o.alignment > 0 && H5Pset_alignment(f->fapl, 0, (hsize_t)f->o.alignment) < 0)
        return h5fail("H5Pset_alignment(%lld) failed for %s", (long long)f->o.alignment, path);
    f->dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (f->dxpl < 0 ||
        H5Pset_dxpl_mpio(f->dxpl, p->collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT) < 0)
        return h5fail("H5Pset_dxpl_mpio failed for %s", path);
    f->chartype = H5Tcopy(H5T_C_S1);
    if (f->chartype < 0 || H5Tset_size(f->chartype, 1) < 0)
        return h5fail("H5Tcopy(H5T_C_S1) failed for %s", path);
    return make_compounds(f);
}

/* Hands out the handle, or after a failure releases what was built (the
 * core does not close after a failed create or open) and hands out NULL. */
static int
hand_out(void **handle, struct h5file *f, int rc)
{
    if (rc != IOK_OK) {
        hdf5_close(f);
        f = NULL;
    }
    *handle = f;
    return rc;
}

static int
hdf5_create(void **handle, const char *path, const struct iok_schema *s,
            const struct iok_backend_params *p)
{
    *handle = NULL;
    IOK_TRY(iok_backend_check_deflate(path, s, p, "HDF5"));
    struct h5file *f;
    int rc = new_handle(&f, path, s, p);
    if (rc == IOK_OK && (f->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, f->fapl)) < 0)
        rc = h5fail("H5Fcreate failed on %s", path);
    return hand_out(handle, f, rc);
}

/* Chunk shape of variable v: the hint where it is nonzero; without any hint,
 * 1 record by the full extent of the other dimensions, halving the largest
 * until a chunk holds at most hdf5-chunk-kib KiB. */
static void
chunk_dims(const struct h5file *f, int v, int rec, const hsize_t *dims, hsize_t *chunk)
{
    const struct iok_var *var = &f->s->vars[v];
    int nd = var_rank(f, v), hint = 0;
    for (int k = 0; k < nd; k++) {
        chunk[k] = (rec && k == 0) || dims[k] == 0 ? 1 : dims[k];
        if (var->chunk[k] > 0) {
            hint = 1;
            chunk[k] = (hsize_t)var->chunk[k];
            if (!(rec && k == 0) && dims[k] > 0 && chunk[k] > dims[k])
                chunk[k] = dims[k];
        }
    }
    if (hint)
        return;
    double limit = (double)f->o.chunk_kib * 1024.0;
    for (;;) {
        double bytes = (double)iok_type_size(var->type) * var_fields(f, v);
        int big = 0;
        for (int k = 0; k < nd; k++) {
            bytes *= (double)chunk[k];
            if (chunk[k] > chunk[big])
                big = k;
        }
        if (bytes <= limit || chunk[big] <= 1)
            return;
        chunk[big] /= 2;
    }
}

static int
define_var(struct h5file *f, int v)
{
    const struct iok_var *var = &f->s->vars[v];
    int nd = var_rank(f, v), rec = iok_var_is_record(f->s, v), hint = 0;
    for (int k = 0; k < nd; k++)
        hint |= var->chunk[k] > 0;
    /* a chunk hint or compression asks for chunks, as --hdf5-layout chunked does */
    int chunked = rec || (nd > 0 && (f->o.layout == HDF5_CHUNKED || hint || var->deflate));
    hsize_t *dims = f->dims[v], maxdims[IOK_MAX_DIMS], chunk[IOK_MAX_DIMS];
    for (int k = 0; k < nd; k++) {
        dims[k] = (hsize_t)iok_var_dim_len(f->s, v, k);
        maxdims[k] = rec && k == 0 ? H5S_UNLIMITED : dims[k];
        /* A chunk may not exceed a fixed dimension, and has no zero side. */
        if (chunked && dims[k] == 0 && maxdims[k] != H5S_UNLIMITED) {
            if (rec)
                maxdims[k] = H5S_UNLIMITED;
            else
                chunked = 0;
        }
    }
    hid_t space = nd > 0 ? H5Screate_simple(nd, dims, maxdims) : H5Screate(H5S_SCALAR);
    if (space < 0)
        return h5fail("H5Screate failed on %s variable %s", f->path, var->name);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int rc = IOK_OK;
    H5D_fill_time_t fill = var->fill ? H5D_FILL_TIME_ALLOC : H5D_FILL_TIME_NEVER;
    if (dcpl < 0 || H5Pset_fill_time(dcpl, fill) < 0) {
        rc = h5fail("H5Pset_fill_time failed on %s variable %s", f->path, var->name);
    } else if (chunked) {
        chunk_dims(f, v, rec, dims, chunk);
        if (H5Pset_chunk(dcpl, nd, chunk) < 0)
            rc = h5fail("H5Pset_chunk failed on %s variable %s", f->path, var->name);
        else if (var->deflate > 0 && ((var->shuffle && H5Pset_shuffle(dcpl) < 0) ||
                                      H5Pset_deflate(dcpl, (unsigned)var->deflate) < 0))
            rc = h5fail("H5Pset_deflate(%d) failed on %s variable %s", var->deflate, f->path,
                        var->name);
    }
    if (rc == IOK_OK) {
        f->dsets[v] = H5Dcreate2(f->file, var->name, var_file_type(f, v), space, H5P_DEFAULT, dcpl,
                                 H5P_DEFAULT);
        if (f->dsets[v] < 0)
            rc = h5fail("H5Dcreate2 failed on %s variable %s", f->path, var->name);
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    H5Sclose(space);
    return rc;
}

/* Text as a fixed-length string of len characters (at least 1, an empty
 * string when len is 0); numbers as a 1-D array of len elements (of len /
 * nfields compound values), or a scalar when the schema asks for scalars and
 * there is one value. */
static int
define_attr(struct h5file *f, const struct iok_attr *a)
{
    int g = iok_attr_group(a->owner);
    const char *on = g >= 0                   ? f->s->groups[g].path
                     : a->owner == IOK_GLOBAL ? "/"
                                              : f->s->vars[a->owner].name;
    hid_t loc = g >= 0 ? f->groups[g] : a->owner == IOK_GLOBAL ? f->file : f->dsets[a->owner];
    hid_t type, mtype, space;
    const void *value = a->value;
    if (a->type == IOK_CHAR) {
        type = H5Tcopy(H5T_C_S1);
        if (type >= 0 && H5Tset_size(type, a->len ? a->len : 1) < 0) {
            int rc = h5fail("H5Tset_size failed on %s attribute %s of %s", f->path, a->name, on);
            H5Tclose(type);
            return rc;
        }
        mtype = type;
        space = H5Screate(H5S_SCALAR);
        if (a->len == 0)
            value = "";
    } else {
        int c = a->compound;
        hsize_t n = c >= 0 ? a->len / (size_t)f->s->compounds[c].nfields : a->len;
        type = H5Tcopy(c >= 0 ? f->cfile[c] : file_type(f, a->type));
        mtype = c >= 0 ? f->cmem[c] : mem_type(f, a->type);
        space = n == 1 && f->s->scalar_attrs ? H5Screate(H5S_SCALAR)
                : n                          ? H5Screate_simple(1, &n, NULL)
                                             : H5Screate(H5S_NULL);
    }
    int rc = IOK_OK;
    hid_t id = H5I_INVALID_HID;
    if (type < 0 || space < 0)
        rc = h5fail("H5Tcopy/H5Screate failed on %s attribute %s of %s", f->path, a->name, on);
    else if ((id = H5Acreate2(loc, a->name, type, space, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        rc = h5fail("H5Acreate2 failed on %s attribute %s of %s", f->path, a->name, on);
    else if ((a->len > 0 || a->type == IOK_CHAR) && H5Awrite(id, mtype, value) < 0)
        rc = h5fail("H5Awrite failed on %s attribute %s of %s", f->path, a->name, on);
    if (id >= 0)
        H5Aclose(id);
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    return rc;
}

static int
hdf5_define(void *handle)
{
    struct h5file *f = handle;
    for (int g = 0; g < f->s->ngroups; g++) {
        const char *path = f->s->groups[g].path;
        f->groups[g] = H5Gcreate2(f->file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (f->groups[g] < 0)
            return h5fail("H5Gcreate2 failed on %s group %s", f->path, path);
    }
    for (int v = 0; v < f->s->nvars; v++)
        IOK_TRY(define_var(f, v));
    for (int i = 0; i < f->s->nattrs; i++)
        IOK_TRY(define_attr(f, &f->s->attrs[i]));
    return IOK_OK;
}

/* The dataset's type against the schema's: class and size (a compound:
 * class only, its fields are the schema's by construction). */
static int
check_type(struct h5file *f, int v)
{
    hid_t have = H5Dget_type(f->dsets[v]), want = var_file_type(f, v);
    if (have < 0)
        return h5fail("H5Dget_type failed on %s variable %s", f->path, f->s->vars[v].name);
    H5T_class_t hc = H5Tget_class(have), wc = H5Tget_class(want);
    size_t hs = H5Tget_size(have), ws = H5Tget_size(want);
    H5Tclose(have);
    if (hc == wc && (wc == H5T_COMPOUND || hs == ws))
        return IOK_OK;
    static const char *const cls[] = {"integer",  "float",  "time",     "string",
                                      "bitfield", "opaque", "compound", "reference",
                                      "enum",     "vlen",   "array"};
    char found[64];
    snprintf(found, sizeof found, "%s of %zu bytes", hc >= 0 && hc <= 10 ? cls[hc] : "unknown", hs);
    if (hc == H5T_FLOAT && (hs == 4 || hs == 8))
        snprintf(found, sizeof found, "%s", hs == 4 ? "float" : "double");
    return iok_check_var_type(f->path, f->s, v, found);
}

static int
open_var(struct h5file *f, int v)
{
    const struct iok_var *var = &f->s->vars[v];
    f->dsets[v] = H5Dopen2(f->file, var->name, H5P_DEFAULT);
    if (f->dsets[v] < 0)
        return h5fail("H5Dopen2 failed on %s variable %s", f->path, var->name);
    hid_t space = H5Dget_space(f->dsets[v]);
    if (space < 0)
        return h5fail("H5Dget_space failed on %s variable %s", f->path, var->name);
    int nd = H5Sget_simple_extent_ndims(space), want_nd = var_rank(f, v);
    if (nd == want_nd && nd > 0)
        H5Sget_simple_extent_dims(space, f->dims[v], NULL);
    H5Sclose(space);
    IOK_TRY(check_type(f, v));
    if (nd != want_nd) /* a compound folds the last dimension: count it */
        return iok_check_var_rank(f->path, f->s, v, nd + (var->ndims - want_nd));
    for (int k = 0; k < nd; k++)
        IOK_TRY(iok_check_var_dim(f->path, f->s, v, k, (int64_t)f->dims[v][k]));
    return IOK_OK;
}

static int
hdf5_open(void **handle, const char *path, const struct iok_schema *s,
          const struct iok_backend_params *p)
{
    struct h5file *f;
    int rc = new_handle(&f, path, s, p);
    if (rc == IOK_OK && (f->file = H5Fopen(path, H5F_ACC_RDONLY, f->fapl)) < 0)
        rc = h5fail("H5Fopen failed on %s", path);
    for (int v = 0; rc == IOK_OK && v < s->nvars; v++)
        rc = open_var(f, v);
    return hand_out(handle, f, rc);
}

/* Checks an access against the variable's extents and its element count, and
 * says whether its subarrays can be one union selection: each a run along
 * the last dimension, in increasing file order without overlap, so that
 * HDF5's row-major iteration of the union matches the buffer. */
static int
plan_access(const struct h5file *f, const struct iok_access *a, int *can_union)
{
    const struct iok_var *var = &f->s->vars[a->varid];
    int nd = var_rank(f, a->varid), nf = var_fields(f, a->varid);
    const hsize_t *dims = f->dims[a->varid];
    int64_t total = 0, prev_end = -1;
    *can_union = nd > 0 && a->nsub > 1;
    for (int j = 0; j < a->nsub; j++) {
        const int64_t *st = a->starts + (size_t)j * var->ndims;
        const int64_t *ct = a->counts + (size_t)j * var->ndims;
        int64_t n = nf, off = 0;
        if (nd < var->ndims && (st[nd] != 0 || ct[nd] != nf))
            return iok_error(IOK_EIO,
                             "hdf5: %s variable %s: subarray %d selects fields %lld..%lld of "
                             "its compound: only all %d at once",
                             f->path, var->name, j, (long long)st[nd],
                             (long long)(st[nd] + ct[nd] - 1), nf);
        for (int k = 0; k < nd; k++) {
            if (st[k] < 0 || ct[k] < 0 || (hsize_t)(st[k] + ct[k]) > dims[k])
                return iok_error(IOK_EIO,
                                 "hdf5: %s variable %s: subarray %d (start %lld count "
                                 "%lld) outside dimension %d of extent %llu",
                                 f->path, var->name, j, (long long)st[k], (long long)ct[k], k,
                                 (unsigned long long)dims[k]);
            n *= ct[k];
            off = off * (int64_t)dims[k] + st[k];
            if (k < nd - 1 && ct[k] != 1)
                *can_union = 0;
        }
        total += n;
        if (n > 0) {
            if (off < prev_end)
                *can_union = 0;
            prev_end = off + ct[nd > 0 ? nd - 1 : 0];
        }
    }
    if (total != a->nelems)
        return iok_error(IOK_EIO,
                         "hdf5: %s variable %s: access of %lld elements lists "
                         "subarrays of %lld",
                         f->path, var->name, (long long)a->nelems, (long long)total);
    return IOK_OK;
}

/* 1 if variable v has a fixed dimension of length 0: its dataset holds no
 * element, ever (the same on every rank: the shape is the schema's). */
static int
holds_nothing(const struct h5file *f, int v)
{
    for (int k = iok_var_is_record(f->s, v); k < var_rank(f, v); k++)
        if (f->dims[v][k] == 0)
            return 1;
    return 0;
}

/* One H5Dwrite/H5Dread of n elements at buf with fspace's selection, or an
 * empty one (both selections none) when n is 0. None at all on a dataset
 * that holds no element: HDF5 1.10 fails even an empty transfer on a
 * contiguous dataset without storage ("addr overflow, addr =
 * 18446744073709551615"), and every rank skips it alike. */
static int
xfer(struct h5file *f, int v, hid_t fspace, int64_t n, void *buf, int write)
{
    const struct iok_var *var = &f->s->vars[v];
    if (holds_nothing(f, v))
        return IOK_OK;
    hsize_t len = n > 0 ? (hsize_t)(n / var_fields(f, v)) : 1;
    hid_t mspace = H5Screate_simple(1, &len, NULL);
    if (mspace < 0)
        return h5fail("H5Screate_simple failed on %s variable %s", f->path, var->name);
    if (n == 0) {
        H5Sselect_none(mspace);
        H5Sselect_none(fspace);
    }
    hid_t mtype = var_mem_type(f, v);
    herr_t e = write ? H5Dwrite(f->dsets[v], mtype, mspace, fspace, f->dxpl, buf)
                     : H5Dread(f->dsets[v], mtype, mspace, fspace, f->dxpl, buf);
    int rc = IOK_OK;
    if (e < 0)
        rc = h5fail("%s failed on %s variable %s", write ? "H5Dwrite" : "H5Dread", f->path,
                    var->name);
    H5Sclose(mspace);
    return rc;
}

/* Subarray j of a as hyperslab start and count (HDF5 rank nd of a variable
 * of ndims dimensions, nf values per element); returns its count of values. */
static int64_t
sub_slab(const struct iok_access *a, int ndims, int nd, int nf, int j, hsize_t *st, hsize_t *ct)
{
    int64_t n = nf;
    for (int k = 0; k < nd; k++) {
        st[k] = (hsize_t)a->starts[(size_t)j * ndims + k];
        ct[k] = (hsize_t)a->counts[(size_t)j * ndims + k];
        n *= (int64_t)ct[k];
    }
    return n;
}

/* Sets *out to a copy of base selecting the union of subarrays [lo, hi) of a,
 * or to H5I_INVALID_HID when they hold no element. HDF5 1.10 merges one
 * hyperslab into a union in time linear in the union, so the union is built
 * by halves (n log n) rather than one subarray after another (n^2). */
static int
union_sel(struct h5file *f, const struct iok_access *a, hid_t base, int lo, int hi, hid_t *out)
{
    const struct iok_var *var = &f->s->vars[a->varid];
    hsize_t st[IOK_MAX_DIMS], ct[IOK_MAX_DIMS];
    *out = H5I_INVALID_HID;
    if (hi - lo > 32) {
        hid_t l, r;
        int mid = lo + (hi - lo) / 2;
        IOK_TRY(union_sel(f, a, base, lo, mid, &l));
        int rc = union_sel(f, a, base, mid, hi, &r);
        if (rc == IOK_OK && l >= 0 && r >= 0) {
            *out = H5Scombine_select(l, H5S_SELECT_OR, r);
            if (*out < 0)
                rc = h5fail("H5Scombine_select failed on %s variable %s", f->path, var->name);
        } else if (rc == IOK_OK) {
            *out = l >= 0 ? l : r;
            return IOK_OK;
        }
        if (l >= 0)
            H5Sclose(l);
        if (r >= 0)
            H5Sclose(r);
        return rc;
    }
    for (int j = lo; j < hi; j++) {
        if (sub_slab(a, var->ndims, var_rank(f, a->varid), 1, j, st, ct) == 0)
            continue;
        H5S_seloper_t op = H5S_SELECT_OR;
        if (*out < 0) {
            op = H5S_SELECT_SET;
            if ((*out = H5Scopy(base)) < 0)
                return h5fail("H5Scopy failed on %s variable %s", f->path, var->name);
        }
        if (H5Sselect_hyperslab(*out, op, st, NULL, ct, NULL) < 0) {
            int rc = h5fail("H5Sselect_hyperslab failed on %s variable %s", f->path, var->name);
            H5Sclose(*out);
            *out = H5I_INVALID_HID;
            return rc;
        }
    }
    return IOK_OK;
}

/* The calls of one access: the union, or one per subarray, then empty ones
 * up to `ncalls` (the most any rank makes for this access). */
static int
do_access(struct h5file *f, const struct iok_access *a, int can_union, int ncalls, int write)
{
    const struct iok_var *var = &f->s->vars[a->varid];
    hid_t fspace = H5Dget_space(f->dsets[a->varid]);
    if (fspace < 0)
        return h5fail("H5Dget_space failed on %s variable %s", f->path, var->name);
    int rc = IOK_OK, made = 0;
    if (can_union) {
        hid_t u;
        rc = union_sel(f, a, fspace, 0, a->nsub, &u);
        if (rc == IOK_OK)
            rc = xfer(f, a->varid, u >= 0 ? u : fspace, u >= 0 ? a->nelems : 0, a->buf, write);
        if (u >= 0)
            H5Sclose(u);
        made = 1;
    }
    char *buf = a->buf;
    hsize_t st[IOK_MAX_DIMS], ct[IOK_MAX_DIMS];
    int nd = var_rank(f, a->varid), nf = var_fields(f, a->varid);
    for (int j = 0; !can_union && rc == IOK_OK && j < a->nsub; j++, made++) {
        int64_t n = sub_slab(a, var->ndims, nd, nf, j, st, ct);
        herr_t e = nd == 0 ? H5Sselect_all(fspace)
                   : n > 0 ? H5Sselect_hyperslab(fspace, H5S_SELECT_SET, st, NULL, ct, NULL)
                           : 0;
        if (e < 0)
            rc = h5fail("H5Sselect_hyperslab failed on %s variable %s", f->path, var->name);
        else
            rc = xfer(f, a->varid, fspace, n, buf, write);
        buf += (size_t)n * iok_type_size(var->type);
    }
    for (; rc == IOK_OK && made < ncalls; made++)
        rc = xfer(f, a->varid, fspace, 0, a->buf, write);
    H5Sclose(fspace);
    return rc;
}

/* Untimed, before the ranks agree on the step: checks every access and
 * says how many H5Dwrite/H5Dread calls it takes here (one for a union). */
static int
hdf5_prepare(void *handle, struct iok_reqlist *r)
{
    struct h5file *f = handle;
    for (int i = 0; i < r->n; i++) {
        int can_union;
        IOK_TRY(plan_access(f, &r->acc[i], &can_union));
        if (can_union)
            r->acc[i].calls = 1;
    }
    return IOK_OK;
}

/* The calls of every access, padded with empty ones up to calls_max (the
 * most any rank makes, agreed by the core before the post). */
static int
hdf5_xfer(void *handle, enum iok_dir dir, struct iok_reqlist *r)
{
    struct h5file *f = handle;
    const int write = dir == IOK_DIR_WRITE;
    int rc = IOK_OK;
    for (int i = 0; i < r->n && rc == IOK_OK; i++) {
        const struct iok_access *a = &r->acc[i];
        int can_union = a->nsub > 1 && a->calls == 1;
        rc = do_access(f, a, can_union, f->p.collective ? a->calls_max : a->calls, write);
    }
    return rc;
}

static int
hdf5_flush(void *handle)
{
    struct h5file *f = handle;
    if (H5Fflush(f->file, H5F_SCOPE_GLOBAL) < 0)
        return h5fail("H5Fflush failed on %s", f->path);
    return IOK_OK;
}

static int
hdf5_close(void *handle)
{
    struct h5file *f = handle;
    if (!f)
        return IOK_OK;
    int rc = IOK_OK;
    for (int v = 0; f->dsets && v < f->s->nvars; v++)
        if (f->dsets[v] >= 0 && H5Dclose(f->dsets[v]) < 0 && rc == IOK_OK)
            rc = h5fail("H5Dclose failed on %s variable %s", f->path, f->s->vars[v].name);
    for (int g = 0; f->groups && g < f->s->ngroups; g++)
        if (f->groups[g] >= 0 && H5Gclose(f->groups[g]) < 0 && rc == IOK_OK)
            rc = h5fail("H5Gclose failed on %s group %s", f->path, f->s->groups[g].path);
    for (int c = 0; f->cfile && c < f->s->ncompounds; c++) {
        if (f->cfile[c] >= 0)
            H5Tclose(f->cfile[c]);
        if (f->cmem[c] >= 0)
            H5Tclose(f->cmem[c]);
    }
    if (f->file >= 0 && H5Fclose(f->file) < 0 && rc == IOK_OK)
        rc = h5fail("H5Fclose failed on %s", f->path);
    if (f->dxpl >= 0)
        H5Pclose(f->dxpl);
    if (f->fapl >= 0)
        H5Pclose(f->fapl);
    if (f->chartype >= 0)
        H5Tclose(f->chartype);
    free(f->dsets);
    free(f->dims);
    free(f->groups);
    free(f->cfile);
    free(f->cmem);
    free(f->path);
    free(f);
    return rc;
}

/* The hints of the MPI file under the HDF5 file (its mpio driver's handle). */
static int
hdf5_info(void *h, MPI_Info *out)
{
    struct h5file *f = h;
    MPI_File *fh = NULL;
    if (H5Fget_vfd_handle(f->file, f->fapl, (void **)&fh) < 0 || !fh)
        return h5fail("H5Fget_vfd_handle failed for %s", f->path);
    int err = MPI_File_get_info(*fh, out);
    return err == MPI_SUCCESS ? IOK_OK
                              : iok_error(IOK_EIO, "MPI_File_get_info failed for %s", f->path);
}

/* HDF5 registers its termination with atexit at its first call. A job
 * ending on an I/O error leaves unfinalized (src/core/cmd/main.c), under MPICH
 * through MPI_Abort, which exits through atexit: there HDF5 1.10 crashes
 * closing a file whose H5Fclose failed (a full disk). Its termination
 * still runs at MPI_Finalize, where HDF5 hooks MPI_COMM_SELF. Called when
 * the module is loaded, before any other HDF5 call. */
__attribute__((constructor)) static void
hdf5_no_atexit(void)
{
    H5dont_atexit();
}

const struct iok_backend iok_backend_hdf5 = {
    .abi = IOK_BACKEND_ABI,
    .name = "hdf5",
    .summary = "parallel HDF5 (MPI-IO driver)",
    .ext = ".h5",
    .caps = IOK_CAP_COLLECTIVE | IOK_CAP_INDEPENDENT | IOK_CAP_ATTRS | IOK_CAP_CHUNKS |
            IOK_CAP_FILL | IOK_CAP_DEFLATE | IOK_CAP_GROUPS | IOK_CAP_COMPOUND |
            IOK_CAP_AGREED_CALLS | IOK_CAP_HINTS | IOK_CAP_EMPTY_DIMS,
    .options = hdf5_options,
    .opts_size = sizeof(struct hdf5_opts),
    .version = hdf5_version,
    .create = hdf5_create,
    .define = hdf5_define,
    .open = hdf5_open,
    .prepare = hdf5_prepare,
    .xfer = hdf5_xfer,
    .flush = hdf5_flush,
    .close = hdf5_close,
    .info = hdf5_info,
};
