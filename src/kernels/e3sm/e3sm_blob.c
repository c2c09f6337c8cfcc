/* SPDX-License-Identifier: BSD-3-Clause */
/* The blob strategy's layout: groups, prefixes, subfile schema. */
#include "e3sm_blob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

int
e3sm_blob_setup(const struct e3sm_decomps *d, MPI_Comm comm, int ngroups, struct e3sm_blob *b)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    memset(b, 0, sizeof *b);
    if (ngroups > nprocs)
        return iok_error(IOK_EUSAGE, "-g %d: more subfiles than the %d ranks", ngroups, nprocs);
    b->ngroups = ngroups;
    b->group = (int)((int64_t)rank * ngroups / nprocs);
    MPI_Comm g;
    MPI_Comm_split(comm, b->group, rank, &g);
    MPI_Comm_size(g, &b->gsize);
    MPI_Comm_rank(g, &b->grank);
    for (int k = 0; k < d->ndecomp; k++) {
        const struct e3sm_runs *r = &d->d[k].runs;
        b->elems[k] = r->nelems;
        MPI_Exscan(&b->elems[k], &b->prefix[k], 1, MPI_INT64_T, MPI_SUM, g);
        if (b->grank == 0)
            b->prefix[k] = 0;
        MPI_Allreduce(&b->elems[k], &b->blob_len[k], 1, MPI_INT64_T, MPI_SUM, g);
        MPI_Allreduce(&r->n, &b->group_runs[k], 1, MPI_INT64_T, MPI_SUM, g);
        /* the root gathers every group rank's runs: the subfile's index */
        int n = (int)r->n, *counts = NULL, *displs = NULL;
        if (b->grank == 0) {
            counts = malloc((size_t)b->gsize * sizeof *counts);
            displs = malloc((size_t)b->gsize * sizeof *displs);
        }
        MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, g);
        int32_t *len32 = malloc((size_t)(n + 1) * sizeof *len32);
        for (int j = 0; j < n; j++)
            len32[j] = (int32_t)r->len[j];
        if (b->grank == 0) {
            b->g_nreqs[k] = malloc((size_t)b->gsize * sizeof(int32_t));
            b->g_off[k] = malloc((size_t)(b->group_runs[k] + 1) * sizeof(int64_t));
            b->g_len[k] = malloc((size_t)(b->group_runs[k] + 1) * sizeof(int32_t));
            for (int i = 0, at = 0; i < b->gsize; i++) {
                b->g_nreqs[k][i] = counts[i];
                displs[i] = at;
                at += counts[i];
            }
        }
        MPI_Gatherv(r->off, n, MPI_INT64_T, b->g_off[k], counts, displs, MPI_INT64_T, 0, g);
        MPI_Gatherv(len32, n, MPI_INT32_T, b->g_len[k], counts, displs, MPI_INT32_T, 0, g);
        free(len32);
        free(counts);
        free(displs);
    }
    MPI_Comm_free(&g);
    /* every group's numbers, from its first rank */
    int64_t mine[1 + 2 * E3SM_MAX_DECOMP] = {b->gsize};
    for (int k = 0; k < d->ndecomp; k++) {
        mine[1 + k] = b->blob_len[k];
        mine[1 + E3SM_MAX_DECOMP + k] = b->group_runs[k];
    }
    int64_t *all = malloc((size_t)nprocs * sizeof mine);
    MPI_Allgather(mine, 1 + 2 * E3SM_MAX_DECOMP, MPI_INT64_T, all, 1 + 2 * E3SM_MAX_DECOMP,
                  MPI_INT64_T, comm);
    b->gsizes = calloc((size_t)ngroups, sizeof *b->gsizes);
    b->glen = calloc((size_t)ngroups, sizeof *b->glen);
    b->gruns = calloc((size_t)ngroups, sizeof *b->gruns);
    for (int i = 0; i < ngroups; i++) {
        int first = (int)(((int64_t)i * nprocs + ngroups - 1) / ngroups);
        const int64_t *m = all + (size_t)first * (1 + 2 * E3SM_MAX_DECOMP);
        b->gsizes[i] = (int)m[0];
        for (int k = 0; k < E3SM_MAX_DECOMP; k++) {
            b->glen[i][k] = m[1 + k];
            b->gruns[i][k] = m[1 + E3SM_MAX_DECOMP + k];
        }
    }
    free(all);
    return IOK_OK;
}

int
e3sm_blob_refuse_empty(const struct e3sm_decomps *d, const struct e3sm_blob *b, int nprocs,
                       const char *backend)
{
    for (int g = 0; g < b->ngroups; g++)
        for (int k = 0; k < d->ndecomp; k++) {
            if (b->glen[g][k] > 0)
                continue;
            int first = (int)(((int64_t)g * nprocs + b->ngroups - 1) / b->ngroups);
            return iok_error(IOK_EUSAGE,
                             "-x blob -g %d: subfile %d (ranks %d-%d) would hold no element of "
                             "D%d, and the %s backend cannot store an empty variable (a "
                             "dimension of length 0): use fewer subfiles (-g) or ranks, or the "
                             "hdf5 or mpiio backend",
                             b->ngroups, g, first, first + b->gsizes[g] - 1, k + 1, backend);
        }
    return IOK_OK;
}

void
e3sm_blob_free(struct e3sm_blob *b)
{
    for (int k = 0; k < E3SM_MAX_DECOMP; k++) {
        free(b->g_nreqs[k]);
        free(b->g_off[k]);
        free(b->g_len[k]);
    }
    free(b->gsizes);
    free(b->glen);
    free(b->gruns);
    memset(b, 0, sizeof *b);
}

int
e3sm_blob_schema(const struct e3sm_decomps *d, const struct e3sm_blob *b, int group,
                 const struct iok_schema *canon, const int *var_decomp, struct iok_schema *s)
{
    char name[64];
    int bad = 0, blob_dim[E3SM_MAX_DECOMP], runs_dim[E3SM_MAX_DECOMP];
    iok_schema_init(s);
    for (int i = 0; i < canon->ndims; i++)
        bad |= iok_schema_add_dim(s, canon->dims[i].name, canon->dims[i].len,
                                  canon->dims[i].unlimited) < 0;
    int nranks = iok_schema_add_dim(s, "blob_nprocs", b->gsizes[group], 0);
    for (int k = 0; k < d->ndecomp; k++) {
        snprintf(name, sizeof name, "D%d.blob_len", k + 1);
        blob_dim[k] = iok_schema_add_dim(s, name, b->glen[group][k], 0);
        snprintf(name, sizeof name, "D%d.total_nreqs", k + 1);
        runs_dim[k] = iok_schema_add_dim(s, name, b->gruns[group][k], 0);
    }
    for (int v = 0; v < canon->nvars; v++) {
        const struct iok_var *var = &canon->vars[v];
        int dn = var_decomp[v], rec = iok_var_is_record(canon, v), dims[2];
        if (!dn) {
            bad |= iok_schema_add_var(s, var->name, var->type, var->ndims, var->dimids) != v;
            continue;
        }
        dims[0] = var->dimids[0];
        dims[rec] = blob_dim[dn - 1];
        bad |= iok_schema_add_var(s, var->name, var->type, 1 + rec, dims) != v;
    }
    for (int i = 0; i < canon->nattrs; i++) {
        const struct iok_attr *a = &canon->attrs[i];
        bad |= iok_schema_add_attr(s, a->owner, a->name, a->type, a->len, a->value) < 0;
    }
    int32_t v32 = b->ngroups;
    bad |= iok_schema_add_attr(s, IOK_GLOBAL, "blob_num_subfiles", IOK_INT, 1, &v32) < 0;
    v32 = group;
    bad |= iok_schema_add_attr(s, IOK_GLOBAL, "blob_subfile", IOK_INT, 1, &v32) < 0;
    for (int k = 0; k < d->ndecomp; k++) {
        int id;
        snprintf(name, sizeof name, "D%d.nreqs", k + 1);
        bad |= (id = iok_schema_add_var(s, name, IOK_INT, 1, &nranks)) < 0;
        snprintf(name, sizeof name, "D%d.offsets", k + 1);
        bad |= (id = iok_schema_add_var(s, name, IOK_INT64, 1, &runs_dim[k])) < 0;
        snprintf(name, sizeof name, "D%d.lengths", k + 1);
        bad |= (id = iok_schema_add_var(s, name, IOK_INT, 1, &runs_dim[k])) < 0;
        int32_t dims[E3SM_MAX_DDIMS];
        for (int j = 0; j < d->d[k].ndims; j++)
            dims[j] = (int32_t)d->d[k].dims[j];
        snprintf(name, sizeof name, "D%d.dims", k + 1);
        bad |= iok_schema_add_attr(s, IOK_GLOBAL, name, IOK_INT, (size_t)d->d[k].ndims, dims) < 0;
    }
    return bad ? iok_error(IOK_EIO, "cannot build the blob subfile's schema") : IOK_OK;
}
