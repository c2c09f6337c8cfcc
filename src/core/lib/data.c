/* SPDX-License-Identifier: BSD-3-Clause */
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

uint64_t
iok_rand_next(uint64_t *state)
{
    uint64_t r = splitmix64(*state);
    *state += 0x9e3779b97f4a7c15ull;
    return r;
}

/* The part of the key that is fixed for one record of one variable. */
static inline uint64_t
record_key(uint64_t seed, uint64_t var_hash, int64_t record)
{
    return splitmix64(splitmix64(seed ^ var_hash) ^ (uint64_t)record);
}

/* MurmurHash3's 32-bit finalizer: a bijection of 32 bits, so the elements of
 * a record get distinct bits (positions 2^32 elements apart in one record
 * share them). 32-bit lanes: 8 per AVX2 vector, native multiplies (the
 * datagen phase of a 1-rank ncbench record: 0.21 ns per int, 0.57 with the
 * 64-bit splitmix64 per element it replaced). */
static inline uint32_t
fmix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    return x ^ (x >> 16);
}

/* an element's bits: the record's key gives a base and a salt */
static inline uint32_t
element_bits(uint64_t key, uint64_t index)
{
    return fmix32(((uint32_t)key + (uint32_t)index) ^ (uint32_t)(key >> 32));
}

uint32_t
iok_data_bits(uint64_t seed, uint64_t var_hash, int64_t record, int64_t index)
{
    return element_bits(record_key(seed, var_hash, record), (uint64_t)index);
}

/* The value loops below, as AVX2 clones where the CPU has AVX2 (the loader
 * picks the clone the CPU runs). CMake lets GCC vectorize this file at -O2
 * (its cost model); clang does by default. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones) /* GCC 6, clang 14 */
#define IOK_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef IOK_CLONES
#define IOK_CLONES
#endif

/* n values of one type for consecutive indices of one record from its key,
 * the first at `index`: one loop per type, the type out of the loop. Values
 * are exact in their type, so a round trip through any library is lossless;
 * float and double take their bits through a signed 32-bit integer (exact,
 * and what the vector units convert); both lie in [0, 1). */
#define IOK_GEN(name, T, conv)                                                                     \
    IOK_CLONES static void name(uint64_t key, uint64_t index, int64_t n, void *out)                \
    {                                                                                              \
        T *o = out;                                                                                \
        for (int64_t i = 0; i < n; i++) {                                                          \
            uint32_t bits = element_bits(key, index + (uint64_t)i);                                \
            o[i] = (conv);                                                                         \
        }                                                                                          \
    }
IOK_GEN(gen_int8, int8_t, (int8_t)(bits >> 24))
IOK_GEN(gen_int16, int16_t, (int16_t)(bits >> 16))
IOK_GEN(gen_int32, int32_t, (int32_t)bits)
IOK_GEN(gen_int64, int64_t, (int64_t)(int32_t)bits)
IOK_GEN(gen_float, float, (float)(int32_t)(bits >> 8) * 0x1p-24f)
/* bits * 2^-32, through the signed conversion: (bits - 2^31) * 2^-32 + 0.5 */
IOK_GEN(gen_double, double, (double)(int32_t)(bits ^ 0x80000000u) * 0x1p-32 + 0.5)

static void
gen_values(enum iok_type t, uint64_t key, uint64_t index, int64_t n, void *out)
{
    switch (t) {
    case IOK_CHAR:
    case IOK_BYTE:
        gen_int8(key, index, n, out);
        break;
    case IOK_SHORT:
        gen_int16(key, index, n, out);
        break;
    case IOK_INT:
        gen_int32(key, index, n, out);
        break;
    case IOK_INT64:
        gen_int64(key, index, n, out);
        break;
    case IOK_FLOAT:
        gen_float(key, index, n, out);
        break;
    case IOK_DOUBLE:
        gen_double(key, index, n, out);
        break;
    }
}

void
iok_data_format(enum iok_type t, const void *p, char *out, size_t len)
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

/* Walks every element of every subarray of an access, in runs of elements
 * consecutive both in the buffer and in the record (a row, with the rows
 * after it while the dimensions inside it are whole): calls fn(ctx, record,
 * linear index of the run's first element in the record, number of
 * elements, buffer position). */
typedef int (*run_fn)(void *ctx, int64_t record, int64_t index, int64_t n, char *buf);

/* 1 if the variable's first dimension keys its values as records do: the
 * record dimension, and with --values once also the first dimension of a
 * fixed-size variable of 2 or more (NetCDF-Bench's t), so that no value
 * depends on its position along it. */
static int
keyed_by_record(const struct iok_schema *s, int varid, enum iok_values how)
{
    return iok_var_is_record(s, varid) || (how == IOK_VALUES_ONCE && s->vars[varid].ndims > 1);
}

static int
walk_runs(const struct iok_schema *s, const struct iok_access *a, enum iok_values how, run_fn fn,
          void *ctx)
{
    const struct iok_var *v = &s->vars[a->varid];
    int nd = v->ndims, rec = keyed_by_record(s, a->varid, how);
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
            if (fn(ctx, 0, 0, 1, buf))
                return 1;
            buf += esize;
            continue;
        }
        /* a run spans dimensions first..nd-1: the row, and each dimension
         * outside it whose inner ones are all whole (never the record's) */
        int first = nd - 1;
        int64_t run = ct[nd - 1];
        while (first > rec && ct[first] == len[first])
            run *= ct[--first];
        int64_t idx[IOK_MAX_DIMS] = {0};
        for (;;) {
            /* linear index of the run's start within its record */
            int64_t lin = 0;
            for (int k = rec; k < nd; k++)
                lin = lin * len[k] + st[k] + (k < first ? idx[k] : 0);
            if (fn(ctx, rec ? st[0] + idx[0] : 0, lin, run, buf))
                return 1;
            buf += (size_t)run * esize;
            int k = first - 1;
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
    enum iok_values how;
    int64_t record; /* the record whose key is `key` (-1: none yet) */
    uint64_t key;
};

static uint64_t
key_of(struct fill_ctx *c, int64_t record)
{
    if (c->how == IOK_VALUES_ONCE) /* every record takes the first record's values */
        record = 0;
    if (record != c->record) {
        c->record = record;
        c->key = record_key(c->seed, c->hash, record);
    }
    return c->key;
}

static int
fill_run(void *vctx, int64_t record, int64_t index, int64_t n, char *buf)
{
    struct fill_ctx *c = vctx;
    gen_values(c->type, key_of(c, record), (uint64_t)index, n, buf);
    return 0;
}

void
iok_data_fill(const struct iok_schema *s, const struct iok_reqlist *r, uint64_t seed,
              enum iok_values how)
{
    for (int i = 0; i < r->n; i++) {
        const struct iok_var *v = &s->vars[r->acc[i].varid];
        if (r->acc[i].values) {
            memcpy(r->acc[i].buf, r->acc[i].values,
                   (size_t)r->acc[i].nelems * iok_type_size(v->type));
            continue;
        }
        struct fill_ctx c = {seed, v->name_hash, v->type, iok_type_size(v->type), how, -1, 0};
        walk_runs(s, &r->acc[i], how, fill_run, &c);
    }
}

struct check_ctx {
    struct fill_ctx f;
    const struct iok_schema *s;
    int varid;
    int64_t checked, bad;
    const char *values, *buf0; /* kernel-provided values and the buffer they mirror */
    char *first_bad;
    size_t first_bad_len;
};

/* "name[r][y][x]: read G, expected W" for element `index` of `record` */
static void
describe_bad(struct check_ctx *c, int64_t record, int64_t index, const char *got, const char *want)
{
    const struct iok_var *v = &c->s->vars[c->varid];
    int rec = keyed_by_record(c->s, c->varid, c->f.how);
    int64_t coord[IOK_MAX_DIMS] = {0};
    for (int k = v->ndims - 1; k >= rec; k--) {
        int64_t len = iok_var_dim_len(c->s, c->varid, k);
        coord[k] = len > 0 ? index % len : 0;
        index = len > 0 ? index / len : 0;
    }
    if (rec) /* a 1-D record variable's runs go along its records */
        coord[0] = record + (v->ndims == 1 ? index : 0);
    char pos[256] = "", g[48], w[48];
    size_t used = 0;
    for (int k = 0; k < v->ndims && used < sizeof pos; k++)
        used += (size_t)snprintf(pos + used, sizeof pos - used, "[%" PRId64 "]", coord[k]);
    iok_data_format(c->f.type, got, g, sizeof g);
    iok_data_format(c->f.type, want, w, sizeof w);
    snprintf(c->first_bad, c->first_bad_len, "%s%s: read %s, expected %s", v->name, pos, g, w);
}

/* compared a chunk at a time: the expected values made as in a fill, one
 * memcmp per chunk, element by element only where a chunk differs */
#define CHECK_CHUNK 512

static int
check_run(void *vctx, int64_t record, int64_t index, int64_t n, char *buf)
{
    struct check_ctx *c = vctx;
    size_t es = c->f.esize;
    uint64_t want[CHECK_CHUNK]; /* room for CHECK_CHUNK values of any type */
    for (int64_t i0 = 0; i0 < n; i0 += CHECK_CHUNK) {
        int64_t m = n - i0 < CHECK_CHUNK ? n - i0 : CHECK_CHUNK;
        const char *got = buf + (size_t)i0 * es, *exp = (const char *)want;
        if (c->values) /* the kernel's own values, at the same buffer position */
            exp = c->values + (got - c->buf0);
        else
            gen_values(c->f.type, key_of(&c->f, record), (uint64_t)(index + i0), m, want);
        if (memcmp(got, exp, (size_t)m * es) == 0)
            continue;
        for (int64_t i = 0; i < m; i++)
            if (memcmp(got + (size_t)i * es, exp + (size_t)i * es, es) != 0 && c->bad++ == 0 &&
                c->first_bad[0] == '\0')
                describe_bad(c, record, index + i0 + i, got + (size_t)i * es, exp + (size_t)i * es);
    }
    c->checked += n;
    return 0;
}

int64_t
iok_data_check(const struct iok_schema *s, const struct iok_reqlist *r, uint64_t seed,
               enum iok_values how, int64_t *checked, char *first_bad, size_t first_bad_len)
{
    int64_t bad = 0;
    for (int i = 0; i < r->n; i++) {
        const struct iok_var *v = &s->vars[r->acc[i].varid];
        struct check_ctx c = {
            .f = {seed, v->name_hash, v->type, iok_type_size(v->type), how, -1, 0},
            .s = s,
            .varid = r->acc[i].varid,
            .values = r->acc[i].values,
            .buf0 = r->acc[i].buf,
            .first_bad = first_bad,
            .first_bad_len = first_bad_len};
        walk_runs(s, &r->acc[i], how, check_run, &c);
        *checked += c.checked;
        bad += c.bad;
    }
    return bad;
}
