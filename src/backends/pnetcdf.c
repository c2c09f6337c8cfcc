/* SPDX-License-Identifier: BSD-3-Clause */
/* The PnetCDF backend: classic NetCDF formats (CDF-5 by default).
 *   --api blocking     one put_vara (or put_varn for several subarrays) per access
 *   --api nonblocking  one iput_vara / iput_varn per access, completed by wait_all
 *   --api varn         one varn request per access, even for a single subarray
 * Collective or independent; independent mode brackets the data phase with
 * begin_indep_data / end_indep_data. Buffers are passed with
 * the MPI type of the variable's own type: no conversion. */
#include <pnetcdf.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/backend.h"
#include "iokernels/error.h"

enum pnc_format { PNC_CDF5, PNC_CDF2, PNC_CDF1 }; /* --pnetcdf-format, in its choices' order */

struct pnetcdf_opts {
    enum pnc_format format;
};

static const struct iok_option pnetcdf_options[] = {
    {"pnetcdf-format", 0, IOK_OPT_CHOICE, offsetof(struct pnetcdf_opts, format), "cdf5",
     "file format: CDF-5 (64-bit data), CDF-2 (64-bit offsets) or CDF-1 (classic)",
     "cdf5|cdf2|cdf1"},
    {NULL}};

struct pnc_file {
    int ncid;
    MPI_Comm comm;
    int collective;
    enum iok_api api;
    int indep_on;
    const struct iok_schema *s;
    int *varids;
    int *reqs;
    int nreqs, cap_reqs;
    char path[1024];
};

static const nc_type nc_types[] = {NC_CHAR,  NC_BYTE,  NC_SHORT, NC_INT,
                                   NC_INT64, NC_FLOAT, NC_DOUBLE};

/* Buffers hold the variable's own type: no conversion on the way. */
static const MPI_Datatype mpi_types[] = {MPI_CHAR,      MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT,
                                         MPI_LONG_LONG, MPI_FLOAT,       MPI_DOUBLE};

static const char *
pnc_version(void)
{
    static char v[128];
    snprintf(v, sizeof v, "PnetCDF %s", ncmpi_inq_libvers());
    return v;
}

static int
fail(const struct pnc_file *f, const char *call, const char *what, int err)
{
    return iok_error(IOK_EIO, "%s on %s%s%s failed: %s", call, f->path, what ? " variable " : "",
                     what ? what : "", ncmpi_strerror(err));
}

static struct pnc_file *
new_file(const char *path, const struct iok_schema *s, const struct iok_backend_params *p)
{
    struct pnc_file *f = calloc(1, sizeof *f);
    f->comm = p->comm;
    f->collective = p->collective;
    f->api = p->api;
    f->s = s;
    f->varids = calloc((size_t)s->nvars + 1, sizeof *f->varids);
    snprintf(f->path, sizeof f->path, "%s", path);
    return f;
}

static void
free_file(struct pnc_file *f)
{
    free(f->varids);
    free(f->reqs);
    free(f);
}

static int
pnc_create(void **h, const char *path, const struct iok_schema *s,
           const struct iok_backend_params *p)
{
    const struct pnetcdf_opts *o = p->opts;
    enum pnc_format fmt = o ? o->format : PNC_CDF5;
    int cmode = NC_CLOBBER | (fmt == PNC_CDF5   ? NC_64BIT_DATA
                              : fmt == PNC_CDF2 ? NC_64BIT_OFFSET
                                                : 0);
    struct pnc_file *f = new_file(path, s, p);
    int err = ncmpi_create(p->comm, path, cmode, iok_params_info(p), &f->ncid);
    if (err != NC_NOERR) {
        int rc = fail(f, "ncmpi_create", NULL, err);
        free_file(f);
        return rc;
    }
    *h = f;
    return IOK_OK;
}

static int
begin_data(struct pnc_file *f)
{
    if (f->collective)
        return IOK_OK;
    int err = ncmpi_begin_indep_data(f->ncid);
    if (err != NC_NOERR)
        return fail(f, "ncmpi_begin_indep_data", NULL, err);
    f->indep_on = 1;
    return IOK_OK;
}

static int
pnc_define(void *h)
{
    struct pnc_file *f = h;
    const struct iok_schema *s = f->s;
    int err, *dimids = calloc((size_t)s->ndims + 1, sizeof *dimids);
    for (int d = 0; d < s->ndims; d++) {
        err = ncmpi_def_dim(f->ncid, s->dims[d].name,
                            s->dims[d].unlimited ? NC_UNLIMITED : s->dims[d].len, &dimids[d]);
        if (err != NC_NOERR) {
            free(dimids);
            return fail(f, "ncmpi_def_dim", s->dims[d].name, err);
        }
    }
    for (int v = 0; v < s->nvars; v++) {
        const struct iok_var *var = &s->vars[v];
        int ids[IOK_MAX_DIMS];
        for (int k = 0; k < var->ndims; k++)
            ids[k] = dimids[var->dimids[k]];
        err =
            ncmpi_def_var(f->ncid, var->name, nc_types[var->type], var->ndims, ids, &f->varids[v]);
        if (err != NC_NOERR) {
            free(dimids);
            return fail(f, "ncmpi_def_var", var->name, err);
        }
    }
    free(dimids);
    for (int i = 0; i < s->nattrs; i++) {
        const struct iok_attr *a = &s->attrs[i];
        int owner = a->owner == IOK_GLOBAL ? NC_GLOBAL : f->varids[a->owner];
        err = a->type == IOK_CHAR
                  ? ncmpi_put_att_text(f->ncid, owner, a->name, (MPI_Offset)a->len, a->value)
                  : ncmpi_put_att(f->ncid, owner, a->name, nc_types[a->type], (MPI_Offset)a->len,
                                  a->value);
        if (err != NC_NOERR)
            return fail(f, "ncmpi_put_att", a->name, err);
    }
    err = ncmpi_enddef(f->ncid);
    if (err != NC_NOERR)
        return fail(f, "ncmpi_enddef", NULL, err);
    return begin_data(f);
}

static int check_vars(struct pnc_file *f, const char *path, const struct iok_schema *s);

static int
pnc_open(void **h, const char *path, const struct iok_schema *s, const struct iok_backend_params *p)
{
    struct pnc_file *f = new_file(path, s, p);
    int err = ncmpi_open(p->comm, path, NC_NOWRITE, iok_params_info(p), &f->ncid);
    if (err != NC_NOERR) {
        int rc = fail(f, "ncmpi_open", NULL, err);
        free_file(f);
        return rc;
    }
    int rc = check_vars(f, path, s);
    if (rc == IOK_OK)
        rc = begin_data(f);
    if (rc) { /* the core closes nothing after a failed open */
        ncmpi_close(f->ncid);
        free_file(f);
        return rc;
    }
    *h = f;
    return IOK_OK;
}

/* Every variable of the schema is in the file with its type and extents (a
 * record dimension: at least the records read). */
static int
check_vars(struct pnc_file *f, const char *path, const struct iok_schema *s)
{
    int err;
    for (int v = 0; v < s->nvars; v++) {
        const struct iok_var *var = &s->vars[v];
        int nd, ids[IOK_MAX_DIMS]; /* PnetCDF's NC_MAX_VAR_DIMS is INT_MAX */
        nc_type xt;
        err = ncmpi_inq_varid(f->ncid, var->name, &f->varids[v]);
        if (err != NC_NOERR)
            return fail(f, "ncmpi_inq_varid", var->name, err);
        if ((err = ncmpi_inq_vartype(f->ncid, f->varids[v], &xt)) != NC_NOERR ||
            (err = ncmpi_inq_varndims(f->ncid, f->varids[v], &nd)) != NC_NOERR)
            return fail(f, "ncmpi_inq_var", var->name, err);
        if (xt != nc_types[var->type]) {
            char tname[32];
            snprintf(tname, sizeof tname, "of NetCDF type %d", (int)xt);
            for (int t = 0; t < (int)(sizeof nc_types / sizeof nc_types[0]); t++)
                if (nc_types[t] == xt)
                    snprintf(tname, sizeof tname, "%s", iok_type_name((enum iok_type)t));
            return iok_check_var_type(path, s, v, tname);
        }
        IOK_TRY(iok_check_var_rank(path, s, v, nd));
        ncmpi_inq_vardimid(f->ncid, f->varids[v], ids);
        for (int k = 0; k < nd; k++) {
            MPI_Offset len;
            if ((err = ncmpi_inq_dimlen(f->ncid, ids[k], &len)) != NC_NOERR)
                return fail(f, "ncmpi_inq_dimlen", var->name, err);
            IOK_TRY(iok_check_var_dim(path, s, v, k, (int64_t)len));
        }
    }
    return IOK_OK;
}

static int
add_req(struct pnc_file *f, int req)
{
    if (f->nreqs == f->cap_reqs) {
        int ncap = f->cap_reqs ? 2 * f->cap_reqs : 64;
        int *p = realloc(f->reqs, (size_t)ncap * sizeof *p);
        if (!p)
            return iok_error(IOK_EIO, "out of memory for PnetCDF requests on %s", f->path);
        f->reqs = p;
        f->cap_reqs = ncap;
    }
    f->reqs[f->nreqs++] = req;
    return IOK_OK;
}

/* The blocking call of one direction (put or get): collective (_all) or
 * independent, one subarray (vara) or several (varn). PnetCDF's names and
 * arguments differ only by the direction, so the choice is written once. */
#define BLOCKING(dir)                                                                              \
    (f->collective                                                                                 \
         ? (single ? ncmpi_##dir##_vara_all(f->ncid, id, s0, c0, a->buf, n, mt)                    \
                   : ncmpi_##dir##_varn_all(f->ncid, id, a->nsub, st, ct, a->buf, n, mt))          \
         : (single ? ncmpi_##dir##_vara(f->ncid, id, s0, c0, a->buf, n, mt)                        \
                   : ncmpi_##dir##_varn(f->ncid, id, a->nsub, st, ct, a->buf, n, mt)))

/* One access: the call the API flavour asks for; `single` says vara (an
 * empty one when the access has no subarray) rather than varn. */
static int
access_one(struct pnc_file *f, const struct iok_access *a, int writing, int single)
{
    static const MPI_Offset zeros[IOK_MAX_DIMS] = {0};
    int id = f->varids[a->varid], nd = f->s->vars[a->varid].ndims, err, req;
    const char *name = f->s->vars[a->varid].name;
    MPI_Offset **st = NULL, **ct = NULL;
    if (!single) {
        st = malloc((size_t)(a->nsub + 1) * sizeof *st);
        ct = malloc((size_t)(a->nsub + 1) * sizeof *ct);
        for (int j = 0; j < a->nsub; j++) {
            st[j] = (MPI_Offset *)a->starts + (size_t)j * nd;
            ct[j] = (MPI_Offset *)a->counts + (size_t)j * nd;
        }
    }
    MPI_Offset n = a->nelems;
    MPI_Datatype mt = mpi_types[f->s->vars[a->varid].type];
    const MPI_Offset *s0 = a->nsub ? (const MPI_Offset *)a->starts : zeros;
    const MPI_Offset *c0 = a->nsub ? (const MPI_Offset *)a->counts : zeros;
    const char *call;
    if (f->api == IOK_API_NONBLOCKING) {
        if (a->nsub == 0) {
            err = NC_NOERR;
            call = "";
        } else if (writing) {
            call = single ? "ncmpi_iput_vara" : "ncmpi_iput_varn";
            err = single ? ncmpi_iput_vara(f->ncid, id, s0, c0, a->buf, n, mt, &req)
                         : ncmpi_iput_varn(f->ncid, id, a->nsub, st, ct, a->buf, n, mt, &req);
        } else {
            call = single ? "ncmpi_iget_vara" : "ncmpi_iget_varn";
            err = single ? ncmpi_iget_vara(f->ncid, id, s0, c0, a->buf, n, mt, &req)
                         : ncmpi_iget_varn(f->ncid, id, a->nsub, st, ct, a->buf, n, mt, &req);
        }
        if (err == NC_NOERR && a->nsub > 0)
            err = add_req(f, req) ? NC_ENOMEM : NC_NOERR;
    } else if (writing) {
        call = single ? "ncmpi_put_vara" : "ncmpi_put_varn";
        err = BLOCKING(put);
    } else {
        call = single ? "ncmpi_get_vara" : "ncmpi_get_varn";
        err = BLOCKING(get);
    }
    free(st);
    free(ct);
    return err == NC_NOERR ? IOK_OK : fail(f, call, name, err);
}
#undef BLOCKING

static int complete(struct pnc_file *f);

/* One collective call per access in collective blocking and varn modes, the
 * same call on every rank: PnetCDF 1.12's put_varn_all takes its vara path
 * for one subarray and its iput path for several, and put_vara_all on one
 * rank meets put_varn_all on another nowhere (a hang). So: vara_all when no
 * rank has more than one subarray (calls_max, agreed by the core before the
 * post; a rank with none joins with an empty one); otherwise, and always for
 * --api varn and for scalars, the access is posted (iput_vara/iput_varn) and
 * completed at once by one wait_all, which every rank enters. Independent
 * and nonblocking modes decide locally (nonblocking requests meet in the
 * step's wait_all). */
static int
pnc_xfer(void *h, enum iok_dir dir, struct iok_reqlist *r)
{
    struct pnc_file *f = h;
    const int writing = dir == IOK_DIR_WRITE;
    int rc = IOK_OK;
    int coll = f->collective && f->api != IOK_API_NONBLOCKING;
    for (int i = 0; i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        int e;
        /* a scalar cannot be written with zero elements by vara: posted too */
        int scalar = f->s->vars[a->varid].ndims == 0;
        if (coll && (f->api == IOK_API_VARN || a->calls_max > 1 || scalar)) {
            enum iok_api api = f->api;
            f->api = IOK_API_NONBLOCKING;
            e = access_one(f, a, writing, a->nsub == 1);
            f->api = api;
            int w = complete(f);
            e = e ? e : w;
        } else {
            e = access_one(f, a, writing, coll ? 1 : a->nsub == 1 && f->api != IOK_API_VARN);
        }
        if (e && !rc)
            rc = e; /* keep going: the other ranks are in the same collectives */
    }
    return rc;
}

/* Completes the posted requests (collective wait_all, or wait). */
static int
complete(struct pnc_file *f)
{
    int *st = malloc((size_t)(f->nreqs + 1) * sizeof *st);
    int err = f->collective ? ncmpi_wait_all(f->ncid, f->nreqs, f->reqs, st)
                            : ncmpi_wait(f->ncid, f->nreqs, f->reqs, st);
    int rc = err == NC_NOERR ? IOK_OK
                             : fail(f, f->collective ? "ncmpi_wait_all" : "ncmpi_wait", NULL, err);
    for (int i = 0; i < f->nreqs && rc == IOK_OK; i++)
        if (st[i] != NC_NOERR)
            rc = fail(f, "nonblocking request", NULL, st[i]);
    free(st);
    f->nreqs = 0;
    return rc;
}

static int
pnc_wait(void *h)
{
    struct pnc_file *f = h;
    return f->api == IOK_API_NONBLOCKING ? complete(f) : IOK_OK;
}

static int
pnc_flush(void *h)
{
    struct pnc_file *f = h;
    int err = ncmpi_sync(f->ncid);
    return err == NC_NOERR ? IOK_OK : fail(f, "ncmpi_sync", NULL, err);
}

static int
pnc_close(void *h)
{
    struct pnc_file *f = h;
    int err = NC_NOERR;
    if (f->indep_on)
        err = ncmpi_end_indep_data(f->ncid);
    int err2 = ncmpi_close(f->ncid);
    int rc = err != NC_NOERR    ? fail(f, "ncmpi_end_indep_data", NULL, err)
             : err2 != NC_NOERR ? fail(f, "ncmpi_close", NULL, err2)
                                : IOK_OK;
    free_file(f);
    return rc;
}

/* MPI-IO's hints in effect plus PnetCDF's own (nc_header_align_size, ...). */
static int
pnc_info(void *h, MPI_Info *out)
{
    struct pnc_file *f = h;
    int err = ncmpi_inq_file_info(f->ncid, out);
    return err == NC_NOERR ? IOK_OK : fail(f, "ncmpi_inq_file_info", NULL, err);
}

const struct iok_backend iok_backend_pnetcdf = {
    .abi = IOK_BACKEND_ABI,
    .name = "pnetcdf",
    .summary = "PnetCDF, CDF-5 by default; blocking, nonblocking and varn APIs",
    .ext = ".nc",
    .caps = IOK_CAP_COLLECTIVE | IOK_CAP_INDEPENDENT | IOK_CAP_NONBLOCKING | IOK_CAP_VARN |
            IOK_CAP_ATTRS | IOK_CAP_AGREED_CALLS | IOK_CAP_HINTS,
    .options = pnetcdf_options,
    .opts_size = sizeof(struct pnetcdf_opts),
    .version = pnc_version,
    .create = pnc_create,
    .define = pnc_define,
    .open = pnc_open,
    .xfer = pnc_xfer,
    .wait = pnc_wait,
    .flush = pnc_flush,
    .close = pnc_close,
    .info = pnc_info,
};
