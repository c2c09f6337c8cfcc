/* SPDX-License-Identifier: BSD-3-Clause */
/* The blob replay's input: each rank reads, from its group's blob subfile,
 * the blocks it wrote (the canonical values of its runs, in their order)
 * and rank 0 the non-decomposed variables; the canonical write then writes
 * them as given (kernel-provided values). Reading the subfiles is the
 * replay's input parsing, done when the run is planned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e3sm_kernel.h"
#include "iokernels/error.h"
#include "kernels/e3sm_common/e3sm_source.h"

static int
load_file(struct e3sm_state *st, const struct iok_schema *s, int f, const char *sub, int nrecs,
          MPI_Comm gcomm, int rank)
{
    struct e3sm_src src = {0};
    IOK_TRY(e3sm_src_open(&src, sub, gcomm));
    const struct e3sm_blob *b = &st->bl;
    int rc = IOK_OK;
    st->replay_vals[f] = calloc((size_t)s->nvars + 1, sizeof(void *));
    for (int v = 0; v < s->nvars && rc == IOK_OK; v++) {
        const struct iok_var *var = &s->vars[v];
        int dn = st->var_decomp[f][v], rec = iok_var_is_record(s, v), recs = rec ? nrecs : 1;
        int64_t per = dn ? b->elems[dn - 1] : rank == 0 ? iok_var_record_elems(s, v) : 0;
        if (per == 0)
            continue;
        if (!dn && var->ndims - rec > 1) {
            rc = iok_error(IOK_EUSAGE, "%s: replay of %s: more than one fixed dimension", sub,
                           var->name);
            break;
        }
        size_t es = iok_type_size(var->type);
        char *buf = malloc((size_t)(per * recs) * es);
        st->replay_vals[f][v] = buf;
        if (!buf) {
            rc = iok_error(IOK_EIO, "out of memory replaying %s", var->name);
            break;
        }
        for (int r = 0; r < recs && rc == IOK_OK; r++) {
            int64_t start[2] = {0, 0}, count[2] = {1, 1};
            if (rec)
                start[0] = r;
            if (var->ndims > rec) {
                start[rec] = dn ? b->prefix[dn - 1] : 0;
                count[rec] = dn ? per : iok_var_dim_len(s, v, rec);
            }
            rc = src.read_data(&src, var->name, dn ? 1 + rec : var->ndims, start, count, var->type,
                               buf + (size_t)(r * per) * es);
        }
    }
    int crc = src.close(&src);
    return rc ? rc : crc;
}

int
e3sm_replay_load(struct e3sm_state *st, const struct iok_run *run, const struct iok_plan *plan,
                 int nrecs)
{
    MPI_Comm g;
    MPI_Comm_split(run->comm, st->bl.group, run->rank, &g);
    int rc = IOK_OK;
    for (int f = 0; f < plan->nfiles && rc == IOK_OK; f++)
        rc = load_file(st, &plan->files[f].schema, f, st->replay_path[f],
                       nrecs < plan->files[f].nsteps ? nrecs : plan->files[f].nsteps, g, run->rank);
    MPI_Comm_free(&g);
    return rc;
}

int
e3sm_replay_values(const struct e3sm_state *st, const struct iok_schema *s, int f, int step,
                   struct iok_reqlist *out)
{
    for (int i = 0; i < out->n; i++) {
        struct iok_access *a = &out->acc[i];
        const char *vals = st->replay_vals[f] ? st->replay_vals[f][a->varid] : NULL;
        if (!a->nsub || !vals)
            continue;
        size_t bytes = (size_t)a->nelems * iok_type_size(s->vars[a->varid].type);
        int rec = iok_var_is_record(s, a->varid);
        if (iok_access_set_values(a, s, vals + (rec ? (size_t)step * bytes : 0)))
            return iok_error(IOK_EIO, "out of memory for replayed values");
    }
    return IOK_OK;
}
