/* SPDX-License-Identifier: BSD-3-Clause */
/* A sample of what each rank wrote, read back after the write pass (untimed,
 * after its span): per variable, the first and the last element of the
 * rank's last access to it, as the backend was handed them. A library can
 * report success for writes that never reached the file (Open MPI 4.1's
 * OMPIO with cb_buffer_size 0 or 1 writes nothing in its collective calls
 * and returns MPI_SUCCESS): a run must not say "completed" for a file that
 * does not hold its values. The values are compared as bytes, so kernel
 * metadata and --values once are checked as written; a position other
 * ranks also write holds the same deterministic value (replay). */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "iokernels/data.h"
#include "iokernels/error.h"

enum { NSAMPLE = 2, VALUE_MAX = 16 };

struct sample_var {
    int n;
    int64_t pos[NSAMPLE][IOK_MAX_DIMS];
    unsigned char val[NSAMPLE][VALUE_MAX];
};

struct iok_wsample {
    int nvars;
    struct sample_var *v;
};

struct iok_wsample *
iok_wsample_new(const struct iok_schema *s)
{
    struct iok_wsample *w = calloc(1, sizeof *w);
    if (w && !(w->v = calloc((size_t)(s->nvars ? s->nvars : 1), sizeof *w->v))) {
        free(w);
        return NULL;
    }
    if (w)
        w->nvars = s->nvars;
    return w;
}

void
iok_wsample_free(struct iok_wsample *w)
{
    if (w)
        free(w->v);
    free(w);
}

/* row-major order of two positions: <0, 0, >0 */
static int
pos_cmp(const int64_t *a, const int64_t *b, int nd)
{
    for (int d = 0; d < nd; d++)
        if (a[d] != b[d])
            return a[d] < b[d] ? -1 : 1;
    return 0;
}

void
iok_wsample_take(struct iok_wsample *w, const struct iok_schema *s, const struct iok_reqlist *r)
{
    for (int i = 0; w && i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        const struct iok_var *var = &s->vars[a->varid];
        int nd = var->ndims;
        size_t es = iok_type_size(var->type);
        /* a compound is read whole by its backend: not sampled by element */
        if (a->nsub == 0 || a->nelems == 0 || es > VALUE_MAX || var->compound >= 0 ||
            a->varid >= w->nvars)
            continue;
        struct sample_var *sv = &w->v[a->varid];
        sv->n = 0;
        /* the first element of the first subarray with elements, the last of the last */
        for (int end = 0; end < NSAMPLE; end++) {
            for (int j0 = 0; j0 < a->nsub; j0++) {
                int j = end ? a->nsub - 1 - j0 : j0;
                const int64_t *st = a->starts + (size_t)j * (nd ? nd : 1);
                const int64_t *ct = a->counts + (size_t)j * (nd ? nd : 1);
                int64_t ne = 1;
                for (int d = 0; d < nd; d++)
                    ne *= ct[d];
                if (ne == 0)
                    continue;
                /* the subarrays before the first (after the last) with
                 * elements are empty: the buffer's first (last) element */
                int64_t at = end ? a->nelems - 1 : 0;
                for (int d = 0; d < nd; d++)
                    sv->pos[sv->n][d] = st[d] + (end ? ct[d] - 1 : 0);
                memcpy(sv->val[sv->n], (const char *)a->buf + (size_t)at * es, es);
                sv->n++;
                break;
            }
        }
        /* in the file's order (a backend may merge them so), once each */
        if (sv->n == 2 && pos_cmp(sv->pos[0], sv->pos[1], nd) > 0) {
            struct sample_var t = *sv;
            memcpy(sv->pos[0], t.pos[1], sizeof t.pos[1]);
            memcpy(sv->pos[1], t.pos[0], sizeof t.pos[0]);
            memcpy(sv->val[0], t.val[1], sizeof t.val[1]);
            memcpy(sv->val[1], t.val[0], sizeof t.val[0]);
        }
        if (sv->n == 2 && pos_cmp(sv->pos[0], sv->pos[1], nd) == 0)
            sv->n = 1;
    }
}

/* "name[i][j]" of a sample */
static void
describe(const struct iok_var *var, const int64_t *pos, char *out, size_t len)
{
    size_t o = (size_t)snprintf(out, len, "%s", var->name);
    for (int d = 0; d < var->ndims && o < len; d++)
        o += (size_t)snprintf(out + o, len - o, "[%lld]", (long long)pos[d]);
}

/* Compares what was read with what was written; the first difference. */
static int64_t
compare(const struct iok_wsample *w, const struct iok_schema *s, const struct iok_reqlist *rl,
        char *first, size_t len)
{
    int64_t bad = 0;
    for (int i = 0; i < rl->n; i++) {
        const struct iok_access *a = &rl->acc[i];
        const struct iok_var *var = &s->vars[a->varid];
        size_t es = iok_type_size(var->type);
        for (int j = 0; j < a->nsub; j++) {
            const void *got = (const char *)a->buf + (size_t)j * es;
            const void *want = w->v[a->varid].val[j];
            if (!memcmp(got, want, es))
                continue;
            if (!bad++) {
                char where[256], g[64], x[64];
                describe(var, w->v[a->varid].pos[j], where, sizeof where);
                iok_data_format(var->type, got, g, sizeof g);
                iok_data_format(var->type, want, x, sizeof x);
                snprintf(first, len, "%s reads %s, the run wrote %s", where, g, x);
            }
        }
    }
    return bad;
}

/* The library's file is left open after a failure (see pass.c's close). */
static int
failed(int rc)
{
    iok_abandoned = 1;
    return rc;
}

int
iok_wsample_check(const struct iok_run *run, const struct iok_backend_params *params,
                  const char *path, const struct iok_schema *s, int shared,
                  const struct iok_wsample *w)
{
    const struct iok_backend *be = run->backend;
    struct iok_reqlist rl;
    iok_reqlist_init(&rl);
    int *has = calloc((size_t)(s->nvars ? s->nvars : 1), sizeof *has);
    int rc = has && w ? IOK_OK : iok_error(IOK_EIO, "out of memory checking %s", path);
    for (int v = 0; rc == IOK_OK && v < s->nvars; v++)
        has[v] = w->v[v].n > 0;
    /* every rank lists the same variables: those any rank sampled */
    if (shared && has)
        MPI_Allreduce(MPI_IN_PLACE, has, s->nvars, MPI_INT, MPI_MAX, run->comm);
    for (int v = 0; rc == IOK_OK && v < s->nvars; v++) {
        if (!has[v])
            continue;
        struct iok_access *a = iok_reqlist_add(&rl, s, v, w->v[v].n);
        if (!a) {
            rc = iok_error(IOK_EIO, "out of memory checking %s", path);
            break;
        }
        int nd = s->vars[v].ndims;
        for (int j = 0; j < w->v[v].n; j++)
            for (int d = 0; d < nd; d++) {
                a->starts[(size_t)j * nd + d] = w->v[v].pos[j][d];
                a->counts[(size_t)j * nd + d] = 1;
            }
    }
    free(has);
    if (rc == IOK_OK)
        rc = iok_reqlist_finish(&rl, s);
    void *h = NULL;
    if ((rc = iok_agree(run->comm, rc)) == IOK_OK)
        rc = iok_agree(run->comm, be->open(&h, path, s, params));
    int stop = 0;
    if (rc == IOK_OK && (rc = iok_step_agree(run, run->comm, h, shared, IOK_OK, &rl, &stop, 1)))
        rc = failed(rc);
    if (rc == IOK_OK) {
        int grc = be->xfer(h, IOK_DIR_READ, &rl), wrc = iok_backend_wait(be, h);
        if ((rc = iok_agree(run->comm, grc ? grc : wrc)))
            rc = failed(rc);
    }
    if (rc == IOK_OK)
        rc = iok_agree(run->comm, be->close(h));
    if (rc == IOK_OK) {
        char first[512] = "";
        int64_t bad = compare(w, s, &rl, first, sizeof first), total = 0;
        for (int i = 0; i < rl.n; i++)
            total += rl.acc[i].nsub;
        rc = iok_agree(run->comm,
                       bad ? iok_error(IOK_EIO,
                                       "%s does not hold what the write put there, though every "
                                       "library call reported success: %lld of the %lld values "
                                       "rank %d read back differ; first: %s",
                                       path, (long long)bad, (long long)total, run->rank, first)
                           : IOK_OK);
    }
    iok_reqlist_free(&rl);
    return rc;
}
