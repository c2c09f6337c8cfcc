/* The MPI-IO backend: one raw file, no header. Variables lie one after
 * another in schema order, each in canonical row-major order with its full
 * extent (a record variable holds the run's number of records). All the
 * subarrays of one put or get become one derived file view and one
 * MPI_File_write_all (or write, independent): the rows of every subarray are
 * flattened to (file offset, length, buffer address) runs, sorted by file
 * offset (a file type must be monotone) and merged where contiguous. */
#include <stdlib.h>
#include <string.h>

#include "iokernels/backend.h"
#include "iokernels/error.h"

struct mpiio_file {
    MPI_File fh;
    int collective;
    const struct iok_schema *s;
    MPI_Offset *var_off; /* byte offset of each variable */
    MPI_Offset size;     /* bytes of the whole layout */
    char path[1024];
};

#define PIECE (1LL << 30) /* largest blocklength handed to MPI (an int) */

struct run {
    MPI_Offset off;
    MPI_Aint addr;
    MPI_Offset len;
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
    IOK_TRY(open_common(h, path, s, p, MPI_MODE_CREATE | MPI_MODE_WRONLY));
    struct mpiio_file *f = *h;
    int err = MPI_File_set_size(f->fh, 0); /* --overwrite: start from an empty file */
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

/* Flattens every subarray into rows of the fastest dimension. */
static int
flatten(const struct mpiio_file *f, const struct iok_reqlist *r, struct run **out, size_t *nout)
{
    size_t n = 0, cap = 0;
    struct run *runs = NULL;
    for (int i = 0; i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        const struct iok_var *v = &f->s->vars[a->varid];
        int nd = v->ndims;
        MPI_Offset es = (MPI_Offset)iok_type_size(v->type);
        char *buf = a->buf;
        for (int j = 0; j < a->nsub; j++) {
            const int64_t *st = a->starts + (size_t)j * nd, *ct = a->counts + (size_t)j * nd;
            int64_t rows = 1, len[IOK_MAX_DIMS], idx[IOK_MAX_DIMS] = {0};
            for (int k = 0; k < nd; k++) {
                len[k] = iok_var_dim_len(f->s, a->varid, k);
                if (k < nd - 1)
                    rows *= ct[k];
                if (ct[k] == 0 || st[k] < 0 || st[k] + ct[k] > len[k])
                    rows = ct[k] == 0 ? 0 : -1;
            }
            if (rows < 0)
                return iok_error(IOK_EIO, "request outside variable %s of %s", v->name, f->path);
            MPI_Offset row_bytes = (nd ? ct[nd - 1] : 1) * es;
            for (int64_t row = 0; row < rows; row++) {
                MPI_Offset lin = 0;
                for (int k = 0; k < nd; k++)
                    lin = lin * len[k] + st[k] + idx[k];
                if (n == cap) {
                    cap = cap ? 2 * cap : 1024;
                    struct run *p = realloc(runs, cap * sizeof *p);
                    if (!p) {
                        free(runs);
                        return iok_error(IOK_EIO, "out of memory flattening requests");
                    }
                    runs = p;
                }
                MPI_Get_address(buf, &runs[n].addr);
                runs[n].off = f->var_off[a->varid] + lin * es;
                runs[n].len = row_bytes;
                n++;
                buf += row_bytes;
                for (int k = nd - 2; k >= 0; k--) {
                    if (++idx[k] < ct[k])
                        break;
                    idx[k] = 0;
                }
            }
        }
    }
    qsort(runs, n, sizeof *runs, cmp_run);
    size_t m = 0; /* merge runs contiguous in both file and memory */
    for (size_t i = 0; i < n; i++) {
        if (m && runs[m - 1].off + runs[m - 1].len == runs[i].off &&
            runs[m - 1].addr + runs[m - 1].len == runs[i].addr &&
            runs[m - 1].len + runs[i].len <= PIECE)
            runs[m - 1].len += runs[i].len;
        else
            runs[m++] = runs[i];
    }
    *out = runs;
    *nout = m;
    return IOK_OK;
}

static int
transfer(struct mpiio_file *f, const struct iok_reqlist *r, int writing)
{
    struct run *runs = NULL;
    size_t n = 0, pieces = 0;
    /* on failure this rank still joins the collective call, with nothing */
    int rc = flatten(f, r, &runs, &n);
    if (rc)
        n = 0;
    for (size_t i = 0; i < n; i++) /* blocklengths are int: pieces of at most 1 GiB */
        pieces += (size_t)((runs[i].len + PIECE - 1) / PIECE);
    int *lens = malloc((pieces ? pieces : 1) * sizeof *lens);
    MPI_Aint *offs = malloc((pieces ? pieces : 1) * sizeof *offs),
             *addrs = malloc((pieces ? pieces : 1) * sizeof *addrs);
    if (!lens || !offs || !addrs) {
        rc = rc ? rc : iok_error(IOK_EIO, "out of memory for the file view of %s", f->path);
        pieces = 0;
    }
    for (size_t i = 0, k = 0; k < pieces; i++)
        for (MPI_Offset done = 0; done < runs[i].len; done += PIECE, k++) {
            MPI_Offset len = runs[i].len - done < PIECE ? runs[i].len - done : PIECE;
            lens[k] = (int)len;
            offs[k] = (MPI_Aint)(runs[i].off + done);
            addrs[k] = runs[i].addr + (MPI_Aint)done;
        }
    MPI_Datatype ftype, mtype;
    MPI_Type_create_hindexed((int)pieces, lens, offs, MPI_BYTE, &ftype);
    MPI_Type_create_hindexed((int)pieces, lens, addrs, MPI_BYTE, &mtype);
    MPI_Type_commit(&ftype);
    MPI_Type_commit(&mtype);
    free(runs);
    free(lens);
    free(offs);
    free(addrs);
    n = pieces;

    int err = MPI_File_set_view(f->fh, 0, MPI_BYTE, ftype, "native", MPI_INFO_NULL);
    const char *call = "MPI_File_set_view";
    if (err == MPI_SUCCESS) {
        MPI_Status st;
        int count = n ? 1 : 0;
        if (writing) {
            call = f->collective ? "MPI_File_write_all" : "MPI_File_write";
            err = f->collective ? MPI_File_write_all(f->fh, MPI_BOTTOM, count, mtype, &st)
                                : MPI_File_write(f->fh, MPI_BOTTOM, count, mtype, &st);
        } else {
            call = f->collective ? "MPI_File_read_all" : "MPI_File_read";
            err = f->collective ? MPI_File_read_all(f->fh, MPI_BOTTOM, count, mtype, &st)
                                : MPI_File_read(f->fh, MPI_BOTTOM, count, mtype, &st);
        }
    }
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    if (rc)
        return rc;
    return err == MPI_SUCCESS ? IOK_OK : mpi_fail(f, call, err);
}

static int
mpiio_put(void *h, const struct iok_reqlist *r)
{
    return transfer(h, r, 1);
}

static int
mpiio_get(void *h, struct iok_reqlist *r)
{
    return transfer(h, r, 0);
}

static int
mpiio_wait(void *h)
{
    return IOK_OK;
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
    .caps = IOK_CAP_COLLECTIVE | IOK_CAP_INDEPENDENT | IOK_CAP_HINTS,
    .version = mpiio_version,
    .create = mpiio_create,
    .define = mpiio_define,
    .open = mpiio_open,
    .put = mpiio_put,
    .get = mpiio_get,
    .wait = mpiio_wait,
    .flush = mpiio_flush,
    .close = mpiio_close,
    .info = mpiio_info,
};
