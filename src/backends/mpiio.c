/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI-IO backend: one raw file, no header. Variables lie one after
 * another in schema order, each in canonical row-major order with its full
 * extent (a record variable holds the run's number of records). All the
 * subarrays of one put or get become one derived file view and one
 * MPI_File_write_all (or write, independent): the rows of every subarray are
 * flattened to (file offset, length, buffer address) runs, sorted by file
 * offset only when not already monotone (a file type must be) and merged
 * where contiguous. The view's type is kept while the pattern repeats at a
 * new displacement (a record variable's next record), as the original BTIO
 * sets its view once.
 *
 * --api nonblocking: MPI_File_iwrite_at_all / iread_at_all (collective) or
 * MPI_File_iwrite_at / iread_at (independent) at offset 0 of the step's view,
 * completed by MPI_Wait in wait (the core keeps the buffers alive until
 * then). ROMIO 3.2.1 (OpenMPI 4.1) crashes in MPI_File_iwrite_at_all: the
 * core refuses that combination (run/compute.c). */
#include <stdlib.h>
#include <string.h>

#include "iokernels/backend.h"
#include "iokernels/error.h"

#define PIECE (1LL << 30) /* largest blocklength handed to MPI (an int) */

struct run {
    MPI_Offset off;
    MPI_Aint addr;
    MPI_Offset len;
};

struct mpiio_file {
    MPI_File fh;
    int collective;
    const struct iok_schema *s;
    MPI_Offset *var_off; /* byte offset of each variable */
    MPI_Offset size;     /* bytes of the whole layout */
    char path[1024];
    /* kept between puts: the flattened runs, the file view's pieces and the
     * committed view type (reused while the pattern repeats), the memory
     * blocks */
    struct run *runs;
    size_t runs_cap;
    int *lens, *view_lens, *mlens;
    MPI_Aint *offs, *view_offs, *maddrs;
    size_t view_pieces, mcap;
    MPI_Datatype ftype;
    int nonblocking;     /* --api nonblocking */
    MPI_Request req;     /* the posted call, MPI_REQUEST_NULL when none */
    MPI_Offset expect;   /* its bytes, checked against its status in wait */
    const char *pending; /* its name */
};

static const char *
mpiio_version(void)
{
    static char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int major, minor;
    MPI_Get_version(&major, &minor);
    snprintf(v, sizeof v, "MPI %d.%d", major, minor);
    return v;
}

static int
mpi_fail(const struct mpiio_file *f, const char *call, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, msg, &len);
    return iok_error(IOK_EIO, "%s on %s failed: %s", call, f->path, msg);
}

static struct mpiio_file *
new_file(const char *path, const struct iok_schema *s, const struct iok_backend_params *p)
{
    struct mpiio_file *f = calloc(1, sizeof *f);
    f->collective = p->collective;
    f->s = s;
    f->ftype = MPI_DATATYPE_NULL;
    f->nonblocking = p->api == IOK_API_NONBLOCKING;
    f->req = MPI_REQUEST_NULL;
    snprintf(f->path, sizeof f->path, "%s", path);
    f->var_off = calloc((size_t)s->nvars + 1, sizeof *f->var_off);
    for (int v = 0; v < s->nvars; v++) {
        f->var_off[v] = f->size;
        f->size += iok_var_total_elems(s, v) * (MPI_Offset)iok_type_size(s->vars[v].type);
    }
    return f;
}

static int
open_common(void **h, const char *path, const struct iok_schema *s,
            const struct iok_backend_params *p, int amode)
{
    struct mpiio_file *f = new_file(path, s, p);
    int err = MPI_File_open(p->comm, path, amode, iok_params_info(p), &f->fh);
    if (err != MPI_SUCCESS) {
        int rc = mpi_fail(f, "MPI_File_open", err);
        free(f->var_off);
        free(f);
        return rc;
    }
    *h = f;
    return IOK_OK;
}

static int
mpiio_create(void **h, const char *path, const struct iok_schema *s,
             const struct iok_backend_params *p)
{
    IOK_TRY(open_common(h, path, s, p,
                        MPI_MODE_CREATE | (p->readwrite ? MPI_MODE_RDWR : MPI_MODE_WRONLY)));
    struct mpiio_file *f = *h;
    /* --overwrite: start from an empty file. Only a file that holds data is
     * truncated: on ext4 a truncate to zero arms auto_da_alloc, which
     * flushes the whole file at close (0.8-1.0 s of a 240 MiB BTIO run here,
     * where the original, which never truncates, closes in milliseconds). */
    MPI_Offset size = 0; /* rank 0's view, so that every rank decides alike */
    int err = MPI_File_get_size(f->fh, &size);
    MPI_Bcast(&size, 1, MPI_OFFSET, 0, p->comm);
    if (size > 0)
        err = MPI_File_set_size(f->fh, 0);
    return err == MPI_SUCCESS ? IOK_OK : mpi_fail(f, "MPI_File_set_size", err);
}

static int
mpiio_define(void *h)
{
    return IOK_OK; /* no header */
}

/* A raw file longer than the layout: more records of its one record
 * variable are fine when that variable is the last (the run reads a
 * prefix); anything else (whole records that do not fit, a file without
 * records) was written with other options. No header: a smaller grid whose
 * records divide the file's size goes unseen. */
static int
check_longer(const struct mpiio_file *f, MPI_Offset size)
{
    const struct iok_schema *s = f->s;
    int nrec = 0, last = s->nvars - 1;
    for (int v = 0; v < s->nvars; v++)
        nrec += iok_var_is_record(s, v);
    if (nrec == 1 && iok_var_is_record(s, last)) {
        MPI_Offset rec =
            iok_var_record_elems(s, last) * (MPI_Offset)iok_type_size(s->vars[last].type);
        if (rec > 0 && (size - f->var_off[last]) % rec == 0)
            return IOK_OK;
    }
    return iok_error(IOK_EUSAGE,
                     "%s is longer than its layout (%lld bytes found, %lld expected%s): read it "
                     "with the options it was written with",
                     f->path, (long long)size, (long long)f->size,
                     nrec == 1 ? ", or whole records more" : "");
}

static int
mpiio_open(void **h, const char *path, const struct iok_schema *s,
           const struct iok_backend_params *p)
{
    IOK_TRY(open_common(h, path, s, p, MPI_MODE_RDONLY));
    struct mpiio_file *f = *h;
    MPI_Offset size;
    int rc = IOK_OK, err = MPI_File_get_size(f->fh, &size);
    if (err != MPI_SUCCESS)
        rc = mpi_fail(f, "MPI_File_get_size", err);
    else if ((rc = iok_check_file_size(path, (int64_t)size, (int64_t)f->size)) == IOK_OK &&
             size > f->size)
        rc = check_longer(f, size);
    if (rc) { /* the core closes nothing after a failed open */
        MPI_File_close(&f->fh);
        free(f->var_off);
        free(f);
        *h = NULL;
    }
    return rc;
}

static int
cmp_run(const void *a, const void *b)
{
    const struct run *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Appends a run, merging it into the previous one when both are contiguous
 * in file and memory; *sorted drops to 0 when a run starts before the end of
 * the previous one (a file type must be monotone). */
static int
add_run(struct mpiio_file *f, size_t *n, MPI_Offset off, MPI_Aint addr, MPI_Offset len, int *sorted)
{
    struct run *last = *n ? &f->runs[*n - 1] : NULL;
    if (last && last->off + last->len == off && last->addr + last->len == addr &&
        last->len + len <= PIECE) {
        last->len += len;
        return IOK_OK;
    }
    if (last && off < last->off + last->len)
        *sorted = 0;
    if (*n == f->runs_cap) {
        size_t cap = f->runs_cap ? 2 * f->runs_cap : 1024;
        struct run *p = realloc(f->runs, cap * sizeof *p);
        if (!p)
            return iok_error(IOK_EIO, "out of memory flattening requests on %s", f->path);
        f->runs = p;
        f->runs_cap = cap;
    }
    f->runs[(*n)++] = (struct run){off, addr, len};
    return IOK_OK;
}

/* Flattens every subarray into its contiguous rows: the trailing dimensions
 * a subarray covers whole are folded into the row, so a row is as long as
 * the layout allows (BTIO: x times FIVE_DBL, not 5 doubles). Runs come out
 * in request order, merged where contiguous; they are sorted by file offset
 * only when that order is not already monotone. */
static int
flatten(struct mpiio_file *f, const struct iok_reqlist *r, size_t *nout)
{
    size_t n = 0;
    int sorted = 1;
    for (int i = 0; i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        const struct iok_var *v = &f->s->vars[a->varid];
        int nd = v->ndims;
        MPI_Offset es = (MPI_Offset)iok_type_size(v->type);
        MPI_Aint addr;
        MPI_Get_address(a->buf, &addr);
        for (int j = 0; j < a->nsub; j++) {
            const int64_t *st = a->starts + (size_t)j * nd, *ct = a->counts + (size_t)j * nd;
            int64_t len[IOK_MAX_DIMS], idx[IOK_MAX_DIMS] = {0}, rows = 1;
            for (int k = 0; k < nd; k++) {
                len[k] = iok_var_dim_len(f->s, a->varid, k);
                if (ct[k] == 0)
                    rows = 0;
                else if (st[k] < 0 || ct[k] < 0 || st[k] + ct[k] > len[k])
                    return iok_error(IOK_EIO, "request outside variable %s of %s", v->name,
                                     f->path);
            }
            if (rows == 0)
                continue;
            int inner = nd - 1; /* first dimension of the row */
            MPI_Offset row_elems = nd ? ct[nd - 1] : 1;
            while (inner > 0 && ct[inner] == len[inner]) {
                inner--;
                row_elems *= ct[inner];
            }
            for (int k = 0; k < inner; k++)
                rows *= ct[k];
            MPI_Offset row_bytes = row_elems * es;
            for (int64_t row = 0; row < rows; row++) {
                MPI_Offset lin = 0;
                for (int k = 0; k < nd; k++)
                    lin = lin * len[k] + st[k] + (k < inner ? idx[k] : 0);
                IOK_TRY(add_run(f, &n, f->var_off[a->varid] + lin * es, addr, row_bytes, &sorted));
                addr += (MPI_Aint)row_bytes;
                for (int k = inner - 1; k >= 0; k--) {
                    if (++idx[k] < ct[k])
                        break;
                    idx[k] = 0;
                }
            }
        }
    }
    if (!sorted) {
        qsort(f->runs, n, sizeof *f->runs, cmp_run);
        size_t m = 0; /* merge again what the sort brought together */
        for (size_t i = 0; i < n; i++) {
            struct run *last = m ? &f->runs[m - 1] : NULL;
            if (last && last->off + last->len == f->runs[i].off &&
                last->addr + last->len == f->runs[i].addr && last->len + f->runs[i].len <= PIECE)
                last->len += f->runs[i].len;
            else
                f->runs[m++] = f->runs[i];
        }
        n = m;
    }
    *nout = n;
    return IOK_OK;
}

static int
grow(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, (n ? n : 1) * size);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

/* The file view of runs[0..n): a hindexed type of (offset - first offset,
 * length) pieces of at most PIECE bytes, reused with a new displacement
 * when the pattern repeats (every record of a record variable). Returns the
 * view's displacement in *disp. */
static int
file_view(struct mpiio_file *f, size_t n, MPI_Offset *disp)
{
    size_t pieces = 0;
    for (size_t i = 0; i < n; i++) /* blocklengths are int: pieces of at most 1 GiB */
        pieces += (size_t)((f->runs[i].len + PIECE - 1) / PIECE);
    *disp = n ? f->runs[0].off : 0;
    if (grow((void **)&f->lens, pieces, sizeof *f->lens) ||
        grow((void **)&f->offs, pieces, sizeof *f->offs))
        return iok_error(IOK_EIO, "out of memory for the file view of %s", f->path);
    for (size_t i = 0, k = 0; k < pieces; i++)
        for (MPI_Offset done = 0; done < f->runs[i].len; done += PIECE, k++) {
            MPI_Offset len = f->runs[i].len - done < PIECE ? f->runs[i].len - done : PIECE;
            f->lens[k] = (int)len;
            f->offs[k] = (MPI_Aint)(f->runs[i].off + done - *disp);
        }
    if (f->ftype != MPI_DATATYPE_NULL && pieces == f->view_pieces &&
        !memcmp(f->lens, f->view_lens, pieces * sizeof *f->lens) &&
        !memcmp(f->offs, f->view_offs, pieces * sizeof *f->offs))
        return IOK_OK; /* same pattern: same type, new displacement */
    if (f->ftype != MPI_DATATYPE_NULL)
        MPI_Type_free(&f->ftype);
    if (grow((void **)&f->view_lens, pieces, sizeof *f->view_lens) ||
        grow((void **)&f->view_offs, pieces, sizeof *f->view_offs))
        return iok_error(IOK_EIO, "out of memory for the file view of %s", f->path);
    memcpy(f->view_lens, f->lens, pieces * sizeof *f->lens);
    memcpy(f->view_offs, f->offs, pieces * sizeof *f->offs);
    f->view_pieces = pieces;
    MPI_Type_create_hindexed((int)pieces, f->lens, f->offs, MPI_BYTE, &f->ftype);
    MPI_Type_commit(&f->ftype);
    return IOK_OK;
}

/* The memory side, in the file order of the runs: runs adjacent in memory
 * merge even where the file has gaps, so the subarrays' buffers are a few
 * blocks (one when they are one buffer: then no derived type at all). */
static int
mem_type(struct mpiio_file *f, size_t n, MPI_Datatype *mtype, void **base, int *count)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const struct run *x = &f->runs[i];
        for (MPI_Offset done = 0; done < x->len;) {
            MPI_Offset len = x->len - done;
            MPI_Aint addr = x->addr + (MPI_Aint)done;
            if (m && f->maddrs[m - 1] + f->mlens[m - 1] == addr && f->mlens[m - 1] < PIECE) {
                MPI_Offset room = PIECE - f->mlens[m - 1], add = len < room ? len : room;
                f->mlens[m - 1] += (int)add;
                done += add;
                continue;
            }
            if (m == f->mcap) {
                size_t cap = f->mcap ? 2 * f->mcap : 64;
                if (grow((void **)&f->mlens, cap, sizeof *f->mlens) ||
                    grow((void **)&f->maddrs, cap, sizeof *f->maddrs))
                    return iok_error(IOK_EIO, "out of memory for the memory type of %s", f->path);
                f->mcap = cap;
            }
            f->maddrs[m] = addr;
            f->mlens[m] = (int)(len < PIECE ? len : PIECE);
            done += f->mlens[m];
            m++;
        }
    }
    *mtype = MPI_BYTE;
    *base = MPI_BOTTOM;
    *count = 0;
    if (m == 1) {
        *base = (void *)f->maddrs[0];
        *count = f->mlens[0];
    } else if (m > 1) {
        MPI_Type_create_hindexed((int)m, f->mlens, f->maddrs, MPI_BYTE, mtype);
        MPI_Type_commit(mtype);
        *count = 1;
    }
    return IOK_OK;
}

/* --api nonblocking: the step's call posted at offset 0 of its view (the
 * view's start, as the blocking call's file pointer after set_view); the
 * memory type is freed at once (MPI keeps it for the request). */
static int
post(struct mpiio_file *f, int writing, int coll, void *base, int count, MPI_Datatype mtype, int rc)
{
    int size = 0;
    MPI_Type_size(mtype, &size);
    f->expect = (MPI_Offset)size * count;
    f->pending = writing ? (coll ? "MPI_File_iwrite_at_all" : "MPI_File_iwrite_at")
                         : (coll ? "MPI_File_iread_at_all" : "MPI_File_iread_at");
    int err = writing ? (coll ? MPI_File_iwrite_at_all(f->fh, 0, base, count, mtype, &f->req)
                              : MPI_File_iwrite_at(f->fh, 0, base, count, mtype, &f->req))
                      : (coll ? MPI_File_iread_at_all(f->fh, 0, base, count, mtype, &f->req)
                              : MPI_File_iread_at(f->fh, 0, base, count, mtype, &f->req));
    if (mtype != MPI_BYTE)
        MPI_Type_free(&mtype);
    if (rc)
        return rc;
    return err == MPI_SUCCESS ? IOK_OK : mpi_fail(f, f->pending, err);
}

/* Completes the posted call; a short transfer (OMPIO's full disk) named. */
static int
mpiio_wait(void *h)
{
    struct mpiio_file *f = h;
    if (f->req == MPI_REQUEST_NULL)
        return IOK_OK;
    MPI_Status st;
    int err = MPI_Wait(&f->req, &st), moved = 0;
    if (err != MPI_SUCCESS)
        return mpi_fail(f, "MPI_Wait", err);
    if (f->expect > 0 && MPI_Get_count(&st, MPI_BYTE, &moved) == MPI_SUCCESS &&
        moved != MPI_UNDEFINED && moved < f->expect)
        return iok_error(IOK_EIO,
                         "%s on %s moved %d of %lld bytes: a short transfer (no space left on "
                         "the device, or a file shorter than its layout)",
                         f->pending, f->path, moved, (long long)f->expect);
    return IOK_OK;
}

static int
mpiio_xfer(void *h, enum iok_dir dir, struct iok_reqlist *r)
{
    struct mpiio_file *f = h;
    const int writing = dir == IOK_DIR_WRITE;
    size_t n = 0;
    MPI_Offset disp = 0;
    MPI_Datatype mtype = MPI_BYTE;
    void *base = MPI_BOTTOM;
    int count = 0;
    /* on failure this rank still joins the collective calls, with nothing */
    int rc = flatten(f, r, &n);
    if (rc)
        n = 0;
    int vrc = file_view(f, n, &disp);
    if (!vrc)
        vrc = mem_type(f, n, &mtype, &base, &count);
    if (vrc) {
        rc = rc ? rc : vrc;
        count = 0;
    }
    MPI_Datatype ftype = f->ftype != MPI_DATATYPE_NULL ? f->ftype : MPI_BYTE;
    int coll = r->level == IOK_LEVEL_RUN ? f->collective : r->level == IOK_LEVEL_COLL;
    int err = MPI_File_set_view(f->fh, disp, MPI_BYTE, ftype, "native", MPI_INFO_NULL);
    const char *call = "MPI_File_set_view";
    /* an independent call with nothing to move is not made (a replayed
     * trace has no such call); the view above is collective, so it is set */
    if (err == MPI_SUCCESS && (coll || count > 0) && f->nonblocking)
        return post(f, writing, coll, base, count, mtype, rc);
    if (err == MPI_SUCCESS && (coll || count > 0)) {
        MPI_Status st;
        if (writing) {
            call = coll ? "MPI_File_write_all" : "MPI_File_write";
            err = coll ? MPI_File_write_all(f->fh, base, count, mtype, &st)
                       : MPI_File_write(f->fh, base, count, mtype, &st);
        } else {
            call = coll ? "MPI_File_read_all" : "MPI_File_read";
            err = coll ? MPI_File_read_all(f->fh, base, count, mtype, &st)
                       : MPI_File_read(f->fh, base, count, mtype, &st);
        }
        /* OMPIO returns success from a write the disk could not hold: the
         * status's count is the truth (a read past the end is short too) */
        int moved = count;
        if (err == MPI_SUCCESS && count > 0 && MPI_Get_count(&st, mtype, &moved) == MPI_SUCCESS &&
            moved != MPI_UNDEFINED && moved < count && rc == IOK_OK)
            rc = iok_error(IOK_EIO,
                           "%s on %s moved %d of %d blocks: a short %s (no space left on the "
                           "device, or a file shorter than its layout)",
                           call, f->path, moved, count, writing ? "write" : "read");
    }
    if (mtype != MPI_BYTE)
        MPI_Type_free(&mtype);
    if (rc)
        return rc;
    return err == MPI_SUCCESS ? IOK_OK : mpi_fail(f, call, err);
}

static int
mpiio_flush(void *h)
{
    struct mpiio_file *f = h;
    int err = MPI_File_sync(f->fh);
    return err == MPI_SUCCESS ? IOK_OK : mpi_fail(f, "MPI_File_sync", err);
}

static int
mpiio_close(void *h)
{
    struct mpiio_file *f = h;
    int err = MPI_File_close(&f->fh);
    int rc = err == MPI_SUCCESS ? IOK_OK : mpi_fail(f, "MPI_File_close", err);
    if (f->ftype != MPI_DATATYPE_NULL)
        MPI_Type_free(&f->ftype);
    free(f->runs);
    free(f->lens);
    free(f->offs);
    free(f->view_lens);
    free(f->view_offs);
    free(f->mlens);
    free(f->maddrs);
    free(f->var_off);
    free(f);
    return rc;
}

static int
mpiio_info(void *h, MPI_Info *out)
{
    struct mpiio_file *f = h;
    int err = MPI_File_get_info(f->fh, out);
    return err == MPI_SUCCESS ? IOK_OK : mpi_fail(f, "MPI_File_get_info", err);
}

const struct iok_backend iok_backend_mpiio = {
    .abi = IOK_BACKEND_ABI,
    .name = "mpiio",
    .summary = "raw MPI-IO, canonical row-major layout, no header",
    .ext = ".mpi",
    .caps = IOK_CAP_COLLECTIVE | IOK_CAP_INDEPENDENT | IOK_CAP_HINTS | IOK_CAP_EMPTY_DIMS |
            IOK_CAP_READWRITE | IOK_CAP_CALL_LEVEL | IOK_CAP_NONBLOCKING,
    .version = mpiio_version,
    .create = mpiio_create,
    .define = mpiio_define,
    .open = mpiio_open,
    .xfer = mpiio_xfer,
    .wait = mpiio_wait, /* --api nonblocking's MPI_Wait; nothing after a blocking call */
    .flush = mpiio_flush,
    .close = mpiio_close,
    .info = mpiio_info,
};
