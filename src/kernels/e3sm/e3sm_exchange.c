/* SPDX-License-Identifier: BSD-3-Clause */
/* The box rearranger's data movement, the kernel's exchange hook: per step,
 * the I/O ranks' request list (few large subarrays of each decomposed
 * variable, the whole non-decomposed ones on rank 0) and one MPI_Alltoallv
 * per decomposed variable between the ranks' runs and the I/O ranks' boxes.
 * The core times all of it as the "exchange" phase (I/O time). */
#include <stdlib.h>
#include <string.h>

#include "e3sm_kernel.h"
#include "iokernels/error.h"

/* The I/O list: same variables in the same order as the compute list. */
static int
build_io(const struct e3sm_state *st, const struct iok_schema *s, int file, int step,
         const struct iok_reqlist *compute, struct iok_reqlist *io)
{
    for (int i = 0; i < compute->n; i++) {
        const struct iok_access *c = &compute->acc[i];
        int v = c->varid, nd = s->vars[v].ndims, rec = iok_var_is_record(s, v);
        int dn = st->var_decomp[file][v];
        if (!dn) { /* as computed: rank 0 has it whole */
            struct iok_access *a = iok_reqlist_add(io, s, v, c->nsub);
            if (!a)
                return iok_error(IOK_EIO, "out of memory for the I/O list");
            memcpy(a->starts, c->starts, (size_t)(c->nsub * nd) * sizeof *a->starts);
            memcpy(a->counts, c->counts, (size_t)(c->nsub * nd) * sizeof *a->counts);
            continue;
        }
        const struct e3sm_box *b = &st->box[dn - 1];
        int dd = st->dec.d[dn - 1].ndims;
        struct iok_access *a = iok_reqlist_add(io, s, v, (int)b->nsub);
        if (!a)
            return iok_error(IOK_EIO, "out of memory for the I/O list");
        for (int64_t j = 0; j < b->nsub; j++) {
            int64_t *sa = a->starts + j * nd, *ca = a->counts + j * nd;
            if (rec) {
                sa[0] = step;
                ca[0] = 1;
            }
            memcpy(sa + rec, b->st + j * dd, (size_t)dd * sizeof *sa);
            memcpy(ca + rec, b->ct + j * dd, (size_t)dd * sizeof *ca);
        }
    }
    return iok_reqlist_finish(io, s) ? iok_error(IOK_EIO, "out of memory for I/O buffers") : IOK_OK;
}

static int
move(const struct e3sm_state *st, const struct iok_schema *s, int file, MPI_Comm comm,
     const struct iok_access *c, const struct iok_access *a, int to_io)
{
    int v = c->varid, dn = st->var_decomp[file][v];
    size_t es = iok_type_size(s->vars[v].type);
    if (!dn) {
        if (to_io)
            memcpy(a->buf, c->buf, (size_t)c->nelems * es);
        else
            memcpy(c->buf, a->buf, (size_t)c->nelems * es);
        return IOK_OK;
    }
    const struct e3sm_box *b = &st->box[dn - 1];
    char *tmp = malloc((size_t)(b->io_elems ? b->io_elems : 1) * es);
    if (!tmp)
        return iok_error(IOK_EIO, "out of memory exchanging %s", s->vars[v].name);
    MPI_Datatype t;
    MPI_Type_contiguous((int)es, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    char *io = a->buf;
    int err;
    if (to_io) {
        err = MPI_Alltoallv(c->buf, b->scount, b->sdispl, t, tmp, b->rcount, b->rdispl, t, comm);
        for (int64_t i = 0; i < b->npieces; i++)
            memcpy(io + b->p_io[i] * es, tmp + b->p_recv[i] * es, (size_t)b->p_len[i] * es);
    } else {
        for (int64_t i = 0; i < b->npieces; i++)
            memcpy(tmp + b->p_recv[i] * es, io + b->p_io[i] * es, (size_t)b->p_len[i] * es);
        err = MPI_Alltoallv(tmp, b->rcount, b->rdispl, t, c->buf, b->scount, b->sdispl, t, comm);
    }
    MPI_Type_free(&t);
    free(tmp);
    return err == MPI_SUCCESS
               ? IOK_OK
               : iok_error(IOK_EIO, "MPI_Alltoallv failed moving %s", s->vars[v].name);
}

int
e3sm_exchange(const void *kopts, const struct iok_run *run, const struct iok_plan *plan, int file,
              int step, enum iok_xstage stage, struct iok_reqlist *compute, struct iok_reqlist *io)
{
    const struct e3sm_state *st = plan->priv;
    const struct iok_schema *s = &plan->files[file].schema;
    if (!st->rearrange) { /* the backend executes the compute list: hand it over */
        if (stage != IOK_X_RETURN) {
            struct iok_reqlist t = *compute;
            *compute = *io;
            *io = t;
            return IOK_OK;
        }
        /* back to compute for the check; io keeps the shape of what was
         * read (variables, subarray and element counts) for the counts */
        compute->acc = malloc((size_t)(io->n ? io->n : 1) * sizeof *compute->acc);
        if (!compute->acc)
            return iok_error(IOK_EIO, "out of memory returning a read");
        memcpy(compute->acc, io->acc, (size_t)io->n * sizeof *io->acc);
        compute->n = compute->cap = io->n;
        compute->arena = io->arena;
        io->arena = NULL;
        for (int i = 0; i < io->n; i++) {
            io->acc[i].starts = io->acc[i].counts = NULL;
            io->acc[i].buf = io->acc[i].values = NULL;
        }
        return IOK_OK;
    }
    if (stage != IOK_X_RETURN)
        IOK_TRY(build_io(st, s, file, step, compute, io));
    if (stage == IOK_X_PREPARE)
        return IOK_OK;
    int rc = IOK_OK;
    for (int i = 0; i < compute->n; i++) { /* every rank enters every Alltoallv */
        int e = move(st, s, file, run->comm, &compute->acc[i], &io->acc[i], stage == IOK_X_SEND);
        if (e && rc == IOK_OK)
            rc = e;
    }
    return rc;
}
