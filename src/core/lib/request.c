/* SPDX-License-Identifier: BSD-3-Clause */
/* Request lists: accesses of variables by subarrays. */
#include "iokernels/request.h"

#include "iokernels/error.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void
iok_reqlist_init(struct iok_reqlist *r)
{
    memset(r, 0, sizeof *r);
}

void
iok_reqlist_free(struct iok_reqlist *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->acc[i].starts);
        free(r->acc[i].counts);
        free(r->acc[i].values);
    }
    free(r->arena);
    free(r->acc);
    iok_reqlist_init(r);
}

struct iok_access *
iok_reqlist_add(struct iok_reqlist *r, const struct iok_schema *s, int varid, int nsub)
{
    if (varid < 0 || varid >= s->nvars || nsub < 0)
        return NULL;
    if (r->n == r->cap) {
        int ncap = r->cap ? r->cap * 2 : 16;
        struct iok_access *p = realloc(r->acc, (size_t)ncap * sizeof *p);
        if (!p)
            return NULL;
        r->acc = p;
        r->cap = ncap;
    }
    struct iok_access *a = &r->acc[r->n];
    memset(a, 0, sizeof *a);
    size_t n = (size_t)nsub * (size_t)(s->vars[varid].ndims ? s->vars[varid].ndims : 1);
    a->starts = calloc(n ? n : 1, sizeof *a->starts);
    a->counts = calloc(n ? n : 1, sizeof *a->counts);
    if (!a->starts || !a->counts) {
        free(a->starts);
        free(a->counts);
        return NULL;
    }
    a->varid = varid;
    a->nsub = nsub;
    a->calls = a->calls_max = nsub; /* the core settles them before each post */
    r->n++;
    return a;
}

int
iok_reqlist_finish(struct iok_reqlist *r, const struct iok_schema *s)
{
    size_t total = 0;
    for (int i = 0; i < r->n; i++) {
        struct iok_access *a = &r->acc[i];
        int nd = s->vars[a->varid].ndims;
        size_t es = iok_type_size(s->vars[a->varid].type), align = es < 8 ? es : 8;
        a->nelems = 0;
        for (int j = 0; j < a->nsub; j++) {
            int64_t n = 1;
            for (int k = 0; k < nd; k++)
                n *= a->counts[(size_t)j * nd + k];
            a->nelems += n;
        }
        total = (total + align - 1) / align * align;
        a->buf = (void *)total; /* an offset until the arena exists */
        total += (size_t)a->nelems * es;
    }
    free(r->arena);
    r->arena = malloc(total ? total : 1); /* malloc aligns for every type */
    if (!r->arena) {
        for (int i = 0; i < r->n; i++)
            r->acc[i].buf = NULL;
        return -1;
    }
    for (int i = 0; i < r->n; i++)
        r->acc[i].buf = (char *)r->arena + (size_t)r->acc[i].buf;
    return 0;
}

int
iok_reqlist_same_elements(const struct iok_reqlist *a, const struct iok_reqlist *b,
                          const struct iok_schema *s)
{
    if (a->n != b->n || !a->arena || !b->arena)
        return 0;
    for (int i = 0; i < a->n; i++) {
        const struct iok_access *x = &a->acc[i], *y = &b->acc[i];
        if (x->varid != y->varid || x->nsub != y->nsub || x->nelems != y->nelems || x->values ||
            y->values)
            return 0;
        int nd = s->vars[x->varid].ndims, rec = iok_var_is_record(s, x->varid);
        size_t n = (size_t)x->nsub * (size_t)nd;
        if (memcmp(x->counts, y->counts, n * sizeof *x->counts))
            return 0;
        for (size_t j = 0; j < n; j++)
            if (x->starts[j] != y->starts[j] && !((rec || nd > 1) && j % (size_t)nd == 0))
                return 0;
    }
    return 1;
}

void
iok_reqlist_take_buffers(struct iok_reqlist *to, struct iok_reqlist *from)
{
    free(to->arena);
    to->arena = from->arena;
    from->arena = NULL;
    for (int i = 0; i < to->n; i++) {
        to->acc[i].buf = from->acc[i].buf; /* the same layout: the same offsets */
        from->acc[i].buf = NULL;
    }
}

int64_t
iok_reqlist_bytes(const struct iok_reqlist *r, const struct iok_schema *s)
{
    int64_t b = 0;
    for (int i = 0; i < r->n; i++)
        b += r->acc[i].nelems * (int64_t)iok_type_size(s->vars[r->acc[i].varid].type);
    return b;
}

int
iok_access_set_values(struct iok_access *a, const struct iok_schema *s, const void *values)
{
    size_t bytes = (size_t)a->nelems * iok_type_size(s->vars[a->varid].type);
    free(a->values);
    a->values = malloc(bytes ? bytes : 1);
    if (!a->values)
        return -1;
    memcpy(a->values, values, bytes);
    return 0;
}

int
iok_reqlist_check(const struct iok_reqlist *r, const struct iok_schema *s, const char *path)
{
    for (int i = 0; i < r->n; i++) {
        const struct iok_access *a = &r->acc[i];
        const struct iok_var *v = &s->vars[a->varid];
        int nd = v->ndims;
        int64_t lens[IOK_MAX_DIMS];
        for (int k = 0; k < nd; k++) /* hoisted: E3SM lists 10^5 subarrays per variable */
            lens[k] = iok_var_dim_len(s, a->varid, k);
        const int64_t *sp = a->starts, *cp = a->counts;
        for (int j = 0; j < a->nsub; j++, sp += nd, cp += nd)
            for (int k = 0; k < nd; k++) {
                int64_t st = sp[k], ct = cp[k], len = lens[k];
                if (st < 0 || ct < 0 || st + ct > len)
                    return iok_error(IOK_EIO,
                                     "%s: request %d of variable %s reaches [%" PRId64 ", %" PRId64
                                     ") in dimension %d of length %" PRId64 " (a kernel bug)",
                                     path, j, v->name, st, st + ct, k, len);
            }
    }
    return IOK_OK;
}
