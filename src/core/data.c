/* Deterministic data: generation and verification of request buffers. */
#include "iokernels/data.h"

#include <inttypes.h>
#include <string.h>

static inline uint64_t
splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The part of the key that is fixed for one record of one variable. */
static inline uint64_t
record_key(uint64_t seed, uint64_t var_hash, int64_t record)
{
    return splitmix64(splitmix64(seed ^ var_hash) ^ (uint64_t)record);
}

uint64_t
iok_data_bits(uint64_t seed, uint64_t var_hash, int64_t record, int64_t index)
{
    return splitmix64(record_key(seed, var_hash, record) + (uint64_t)index);
}

/* Stores the value for `bits` in an element of type t. Values are chosen to
 * be exact in their type, so a round trip through any library is lossless. */
static inline void
store(enum iok_type t, uint64_t bits, void *dst)
{
    switch (t) {
    case IOK_CHAR:
    case IOK_BYTE:
        *(int8_t *)dst = (int8_t)(bits >> 56);
        break;
    case IOK_SHORT:
        *(int16_t *)dst = (int16_t)(bits >> 48);
        break;
    case IOK_INT:
        *(int32_t *)dst = (int32_t)(bits >> 32);
        break;
    case IOK_INT64:
        *(int64_t *)dst = (int64_t)bits;
        break;
    case IOK_FLOAT:
        *(float *)dst = (float)(bits >> 40) * 0x1p-24f;
        break;
    case IOK_DOUBLE:
        *(double *)dst = (double)(bits >> 11) * 0x1p-53;
        break;
    }
}

static void
format_value(enum iok_type t, const void *p, char *out, size_t len)
{
    switch (t) {
    case IOK_CHAR:
    case IOK_BYTE:
        snprintf(out, len, "%d", *(const int8_t *)p);
        break;
    case IOK_SHORT:
        snprintf(out, len, "%d", *(const int16_t *)p);
        break;
    case IOK_INT:
        snprintf(out, len, "%" PRId32, *(const int32_t *)p);
        break;
    case IOK_INT64:
        snprintf(out, len, "%" PRId64, *(const int64_t *)p);
        break;
    case IOK_FLOAT:
        snprintf(out, len, "%.9g", *(const float *)p);
        break;
    case IOK_DOUBLE:
        snprintf(out, len, "%.17g", *(const double *)p);
        break;
    }
}

/* Walks every element of every subarray of an access, row by row: calls
 * fn(ctx, record, first linear index in the record, coordinates of the row's
 * first element, number of elements, buffer position). */
typedef int (*row_fn)(void *ctx, int64_t record, int64_t index, const int64_t *coord, int64_t n,
                      char *buf);

static int
walk_rows(const struct iok_schema *s, const struct iok_access *a, row_fn fn, void *ctx)
{
    const struct iok_var *v = &s->vars[a->varid];
    int nd = v->ndims, rec = iok_var_is_record(s, a->varid);
    size_t esize = iok_type_size(v->type);
    char *buf = a->buf;
    int64_t len[IOK_MAX_DIMS];
    for (int k = 0; k < nd; k++)
        len[k] = iok_var_dim_len(s, a->varid, k);
    for (int j = 0; j < a->nsub; j++) {
        const int64_t *st = a->starts + (size_t)j * nd, *ct = a->counts + (size_t)j * nd;
        int64_t total = 1;
        for (int k = 0; k < nd; k++)
            total *= ct[k];
        if (total == 0)
            continue;
        if (nd == 0) { /* scalar */
            int64_t zero = 0;
            if (fn(ctx, 0, 0, &zero, 1, buf))
                return 1;
            buf += esize;
            continue;
        }
        int64_t idx[IOK_MAX_DIMS] = {0}, coord[IOK_MAX_DIMS];
        int64_t inner = ct[nd - 1];
        for (;;) {
            /* linear index of the row start within its record */
            int64_t lin = 0;
            for (int k = 0; k < nd; k++) {
                coord[k] = st[k] + idx[k];
                if (k >= rec)
                    lin = lin * len[k] + coord[k];
            }
            if (fn(ctx, rec ? coord[0] : 0, lin, coord, inner, buf))
                return 1;
            buf += (size_t)inner * esize;
            int k = nd - 2;
            for (; k >= 0; k--) {
                if (++idx[k] < ct[k])
                    break;
                idx[k] = 0;
            }
            if (k < 0)
                break;
        }
    }
    return 0;
}

struct fill_ctx {
    uint64_t seed, hash;
    enum iok_type type;
    size_t esize;
};

static int
fill_row(void *vctx, int64_t record, int64_t index, const int64_t *coord, int64_t n, char *buf)
{
    const struct fill_ctx *c = vctx;
    uint64_t key = record_key(c->seed, c->hash, record);
    for (int64_t i = 0; i < n; i++)
        store(c->type, splitmix64(key + (uint64_t)(index + i)), buf + (size_t)i * c->esize);
    return 0;
}

void
iok_data_fill(const struct iok_schema *s, const struct iok_reqlist *r, uint64_t seed)
{
    for (int i = 0; i < r->n; i++) {
        const struct iok_var *v = &s->vars[r->acc[i].varid];
        if (r->acc[i].values) {
            memcpy(r->acc[i].buf, r->acc[i].values,
                   (size_t)r->acc[i].nelems * iok_type_size(v->type));
            continue;
        }
        struct fill_ctx c = {seed, v->name_hash, v->type, iok_type_size(v->type)};
        walk_rows(s, &r->acc[i], fill_row, &c);
    }
}

struct check_ctx {
    struct fill_ctx f;
    const struct iok_schema *s;
    const struct iok_var *var;
    int64_t checked, bad;
    const char *values, *buf0; /* kernel-provided values and the buffer they mirror */
    char *first_bad;
    size_t first_bad_len;
};

static int
check_row(void *vctx, int64_t record, int64_t index, const int64_t *coord, int64_t n, char *buf)
{
    struct check_ctx *c = vctx;
    uint64_t key = record_key(c->f.seed, c->f.hash, record);
    char want[8];
    for (int64_t i = 0; i < n; i++) {
        char *got = buf + (size_t)i * c->f.esize;
        if (c->values) /* the kernel's own values, at the same buffer position */
            memcpy(want, c->values + (got - c->buf0), c->f.esize);
        else
            store(c->f.type, splitmix64(key + (uint64_t)(index + i)), want);
        if (memcmp(got, want, c->f.esize) == 0)
            continue;
        if (c->bad++ == 0 && c->first_bad[0] == '\0') {
            char pos[256] = "", g[48], w[48];
            size_t used = 0;
            for (int k = 0; k < c->var->ndims && used < sizeof pos; k++)
                used += (size_t)snprintf(pos + used, sizeof pos - used, "[%" PRId64 "]",
                                         coord[k] + (k == c->var->ndims - 1 ? i : 0));
            format_value(c->f.type, got, g, sizeof g);
            format_value(c->f.type, want, w, sizeof w);
            snprintf(c->first_bad, c->first_bad_len, "%s%s: read %s, expected %s", c->var->name,
                     pos, g, w);
        }
    }
    c->checked += n;
    return 0;
}

int64_t
iok_data_check(const struct iok_schema *s, const struct iok_reqlist *r, uint64_t seed,
               int64_t *checked, char *first_bad, size_t first_bad_len)
{
    int64_t bad = 0;
    for (int i = 0; i < r->n; i++) {
        const struct iok_var *v = &s->vars[r->acc[i].varid];
        struct check_ctx c = {.f = {seed, v->name_hash, v->type, iok_type_size(v->type)},
                              .s = s,
                              .var = v,
                              .values = r->acc[i].values,
                              .buf0 = r->acc[i].buf,
                              .first_bad = first_bad,
                              .first_bad_len = first_bad_len};
        walk_rows(s, &r->acc[i], check_row, &c);
        *checked += c.checked;
        bad += c.bad;
    }
    return bad;
}
