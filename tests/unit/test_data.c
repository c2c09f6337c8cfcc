/* SPDX-License-Identifier: BSD-3-Clause */
/* Deterministic data: a value depends only on (seed, variable, record,
 * position), so any decomposition generates the same file; a changed value
 * is found and named. */
#include <string.h>

#include "check.h"
#include "iokernels/data.h"

/* The documented value of an element (iokernels/data.h: a pure function of
 * the element's bits), written here from the bits and not from data.c. */
static int
matches_reference(enum iok_type t, uint32_t bits, const char *p)
{
    switch (t) {
    case IOK_CHAR:
    case IOK_BYTE:
        return *(const int8_t *)p == (int8_t)(bits >> 24);
    case IOK_SHORT:
        return *(const int16_t *)p == (int16_t)(bits >> 16);
    case IOK_INT:
        return *(const int32_t *)p == (int32_t)bits;
    case IOK_INT64:
        return *(const int64_t *)p == (int64_t)(int32_t)bits;
    case IOK_FLOAT:
        return *(const float *)p == (float)(bits >> 8) * 0x1p-24f;
    case IOK_DOUBLE:
        return *(const double *)p == (double)bits * 0x1p-32;
    }
    return 0;
}

/* A schema of one variable v[t][y][x] of type t, t unlimited (4 records):
 * dimensions 0, 1, 2 are t, y, x. Returns v's id. */
static int
tyx_schema(struct iok_schema *s, int64_t ny, int64_t nx, enum iok_type type)
{
    iok_schema_init(s);
    int d3[3] = {iok_schema_add_dim(s, "t", 4, 1), iok_schema_add_dim(s, "y", ny, 0),
                 iok_schema_add_dim(s, "x", nx, 0)};
    return iok_schema_add_var(s, "v", type, 3, d3);
}

/* Every type, filled through runs that span rows (x whole), single rows (x
 * cut) and long runs (past the check's chunks): each element equals the
 * reference for its (record, linear index); a changed element in each of
 * two chunks of one run counts 2 and the first is named by its coordinates. */
static void
every_type_against_the_reference(void)
{
    static const enum iok_type types[] = {IOK_CHAR,  IOK_BYTE,  IOK_SHORT, IOK_INT,
                                          IOK_INT64, IOK_FLOAT, IOK_DOUBLE};
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
        enum iok_type t = types[ti];
        struct iok_schema s;
        int v = tyx_schema(&s, 30, 70, t);
        struct iok_reqlist r;
        iok_reqlist_init(&r);
        struct iok_access *a = iok_reqlist_add(&r, &s, v, 3);
        /* records 1-2 whole (runs of 2,100), y 3-9 of record 3 whole rows (a
         * run of 490), x 5-60 of y 10-12 in record 0 (rows of 56) */
        int64_t st[9] = {1, 0, 0, 3, 3, 0, 0, 10, 5}, ct[9] = {2, 30, 70, 1, 7, 70, 1, 3, 56};
        memcpy(a->starts, st, sizeof st);
        memcpy(a->counts, ct, sizeof ct);
        CHECK(iok_reqlist_finish(&r, &s) == 0, "alloc");
        iok_data_fill(&s, &r, 9, IOK_VALUES_FRESH);
        const char *p = a->buf;
        size_t es = iok_type_size(t);
        int64_t n = 0, wrong = 0;
        for (int j = 0; j < 3; j++)
            for (int64_t rec = st[3 * j]; rec < st[3 * j] + ct[3 * j]; rec++)
                for (int64_t y = st[3 * j + 1]; y < st[3 * j + 1] + ct[3 * j + 1]; y++)
                    for (int64_t x = st[3 * j + 2]; x < st[3 * j + 2] + ct[3 * j + 2]; x++, n++)
                        wrong += !matches_reference(
                            t, iok_data_bits(9, s.vars[v].name_hash, rec, y * 70 + x),
                            p + (size_t)n * es);
        CHECK(n == 4200 + 490 + 168 && wrong == 0, "type %d: %lld of %lld values differ", (int)t,
              (long long)wrong, (long long)n);
        int64_t checked = 0;
        char first[256] = "";
        CHECK(iok_data_check(&s, &r, 9, IOK_VALUES_FRESH, &checked, first, sizeof first) == 0 &&
                  checked == n,
              "type %d: clean check, %lld checked", (int)t, (long long)checked);
        /* record 2, y 1, x 3 and y 21, x 65: offsets 73 and 1,535 of its run,
         * the second the last of a chunk */
        char *b = a->buf;
        b[(size_t)(2100 + 73) * es] ^= 1;
        b[(size_t)(2100 + 1535) * es] ^= 1;
        CHECK(iok_data_check(&s, &r, 9, IOK_VALUES_FRESH, &checked, first, sizeof first) == 2,
              "type %d: 2 bad", (int)t);
        CHECK(strstr(first, "v[2][1][3]: read"), "type %d names the first: %s", (int)t, first);
        iok_reqlist_free(&r);
        iok_schema_free(&s);
    }
}

/* a 1-D record variable: an access over several records is one run along
 * them, and a bad value is named by its record */
static void
record_run_names_its_record(void)
{
    struct iok_schema s;
    iok_schema_init(&s);
    int dt = iok_schema_add_dim(&s, "t", 5, 1);
    int v = iok_schema_add_var(&s, "tv", IOK_DOUBLE, 1, &dt);
    struct iok_reqlist r;
    iok_reqlist_init(&r);
    struct iok_access *a = iok_reqlist_add(&r, &s, v, 1);
    a->starts[0] = 1;
    a->counts[0] = 3;
    CHECK(iok_reqlist_finish(&r, &s) == 0, "alloc");
    iok_data_fill(&s, &r, 5, IOK_VALUES_FRESH);
    ((double *)a->buf)[2] += 1.0;
    int64_t checked = 0;
    char first[256] = "";
    CHECK(iok_data_check(&s, &r, 5, IOK_VALUES_FRESH, &checked, first, sizeof first) == 1 &&
              checked == 3,
          "one bad of 3");
    CHECK(strstr(first, "tv[3]: read"), "names record 3: %s", first);
    iok_reqlist_free(&r);
    iok_schema_free(&s);
}

/* A list of record `rec` of v[t][y][x]: y 2-3, x x0..x0+4. */
static void
rows_of(struct iok_reqlist *r, const struct iok_schema *s, int v, int64_t rec, int64_t x0)
{
    iok_reqlist_init(r);
    struct iok_access *a = iok_reqlist_add(r, s, v, 1);
    int64_t st[3] = {rec, 2, x0}, ct[3] = {1, 2, 5};
    memcpy(a->starts, st, sizeof st);
    memcpy(a->counts, ct, sizeof ct);
    CHECK(iok_reqlist_finish(r, s) == 0, "alloc");
}

/* --values once: every record holds the first record's values (a check
 * expecting fresh values finds them wrong), and a later step's list with
 * the same elements takes the buffers of the last one instead of new values;
 * other elements, or kernel-provided values, are not the same. */
static void
values_once(void)
{
    struct iok_schema s;
    int v = tyx_schema(&s, 6, 8, IOK_INT), dy = 1, dx = 2; /* tyx_schema's dimension ids */
    struct iok_reqlist r1, r3, other;
    rows_of(&r1, &s, v, 1, 1);
    rows_of(&r3, &s, v, 3, 1);
    rows_of(&other, &s, v, 3, 2);
    iok_data_fill(&s, &r3, 4, IOK_VALUES_ONCE);
    const int32_t *p = r3.acc[0].buf;
    int wrong = 0;
    for (int i = 0; i < 10; i++)
        wrong +=
            p[i] != (int32_t)iok_data_bits(4, s.vars[v].name_hash, 0, (2 + i / 5) * 8 + 1 + i % 5);
    CHECK(wrong == 0, "once: record 3 holds record 0's values (%d differ)", wrong);
    int64_t checked = 0;
    char first[256] = "";
    CHECK(iok_data_check(&s, &r3, 4, IOK_VALUES_ONCE, &checked, first, sizeof first) == 0,
          "once: clean check");
    CHECK(iok_data_check(&s, &r3, 4, IOK_VALUES_FRESH, &checked, first, sizeof first) == 10 &&
              strstr(first, "v[3][2][1]: read"),
          "fresh check of once values: 10 bad, first named: %s", first);
    CHECK(iok_reqlist_same_elements(&r3, &r1, &s), "records 3 and 1, same rows: same elements");
    CHECK(!iok_reqlist_same_elements(&r3, &other, &s), "x from 2: other elements");
    void *buf = r3.acc[0].buf;
    iok_reqlist_take_buffers(&r1, &r3);
    CHECK(r1.acc[0].buf == buf && r1.arena == buf && r3.arena == NULL && r3.acc[0].buf == NULL,
          "the buffers move");
    checked = 0;
    CHECK(iok_data_check(&s, &r1, 4, IOK_VALUES_ONCE, &checked, first, sizeof first) == 0 &&
              checked == 10,
          "record 1 with the moved buffers: as once writes it");
    int32_t mine[10] = {0};
    CHECK(iok_access_set_values(&other.acc[0], &s, mine) == 0, "values");
    iok_reqlist_free(&r3); /* its buffers went to r1 */
    rows_of(&r3, &s, v, 3, 2);
    CHECK(!iok_reqlist_same_elements(&r3, &other, &s), "kernel values: never the same");
    /* a fixed-size variable: its first dimension plays the record's part
     * (NetCDF-Bench's t), a 1-D one keeps its values by position */
    int d2[2] = {dy, dx};
    int f = iok_schema_add_var(&s, "f", IOK_INT, 2, d2),
        g = iok_schema_add_var(&s, "g", IOK_INT, 1, &dx);
    struct iok_reqlist f1, f4, g0, g1;
    iok_reqlist_init(&f1);
    iok_reqlist_init(&f4);
    iok_reqlist_init(&g0);
    iok_reqlist_init(&g1);
    struct iok_reqlist *lists[4] = {&f1, &f4, &g0, &g1};
    for (int l = 0; l < 4; l++) {
        struct iok_access *a = iok_reqlist_add(lists[l], &s, l < 2 ? f : g, 1);
        a->starts[0] = l == 0 ? 1 : l == 1 ? 4 : l == 2 ? 0 : 4; /* y (f) or x (g) */
        a->counts[0] = l < 2 ? 1 : 4;
        if (l < 2)
            a->counts[1] = 8;
        CHECK(iok_reqlist_finish(lists[l], &s) == 0, "alloc");
    }
    iok_data_fill(&s, &f4, 4, IOK_VALUES_ONCE);
    p = f4.acc[0].buf;
    wrong = 0;
    for (int x = 0; x < 8; x++)
        wrong += p[x] != (int32_t)iok_data_bits(4, s.vars[f].name_hash, 0, x);
    CHECK(wrong == 0, "once: row 4 of a fixed-size variable holds row 0's values (%d differ)",
          wrong);
    CHECK(iok_data_check(&s, &f4, 4, IOK_VALUES_FRESH, &checked, first, sizeof first) == 8,
          "fresh check of a fixed-size variable written once: 8 bad");
    CHECK(iok_reqlist_same_elements(&f4, &f1, &s), "rows 4 and 1 of f: same elements");
    CHECK(!iok_reqlist_same_elements(&g1, &g0, &s), "x 4-7 and 0-3 of 1-D g: not the same");
    iok_data_fill(&s, &g1, 4, IOK_VALUES_ONCE);
    CHECK(*(int32_t *)g1.acc[0].buf == (int32_t)iok_data_bits(4, s.vars[g].name_hash, 0, 4),
          "once: a 1-D fixed-size variable keeps its values by position");
    for (int l = 0; l < 4; l++)
        iok_reqlist_free(lists[l]);
    iok_reqlist_free(&r1);
    iok_reqlist_free(&r3);
    iok_reqlist_free(&other);
    iok_schema_free(&s);
}

int
main(void)
{
    struct iok_schema s;
    iok_schema_init(&s);
    int x = iok_schema_add_dim(&s, "x", 6, 0), y = iok_schema_add_dim(&s, "y", 4, 0);
    int t = iok_schema_add_dim(&s, "t", 3, 1);
    int d2[2] = {y, x}, d3[3] = {t, y, x};
    int vf = iok_schema_add_var(&s, "f", IOK_FLOAT, 2, d2);
    int vd = iok_schema_add_var(&s, "d", IOK_DOUBLE, 3, d3);
    int vi = iok_schema_add_var(&s, "i", IOK_INT, 3, d3);
    CHECK(vf == 0 && vd == 1 && vi == 2, "ids");
    CHECK(iok_var_is_record(&s, vd) && !iok_var_is_record(&s, vf), "record vars");
    CHECK(iok_var_record_elems(&s, vd) == 24 && iok_var_total_elems(&s, vd) == 72, "sizes");

    /* whole record 1 of d in one access vs. as two halves split along x */
    struct iok_reqlist whole, halves;
    iok_reqlist_init(&whole);
    iok_reqlist_init(&halves);
    struct iok_access *a = iok_reqlist_add(&whole, &s, vd, 1);
    int64_t st[3] = {1, 0, 0}, ct[3] = {1, 4, 6};
    memcpy(a->starts, st, sizeof st);
    memcpy(a->counts, ct, sizeof ct);
    a = iok_reqlist_add(&halves, &s, vd, 2);
    int64_t st2[6] = {1, 0, 0, 1, 0, 3}, ct2[6] = {1, 4, 3, 1, 4, 3};
    memcpy(a->starts, st2, sizeof st2);
    memcpy(a->counts, ct2, sizeof ct2);
    CHECK(iok_reqlist_finish(&whole, &s) == 0 && iok_reqlist_finish(&halves, &s) == 0, "alloc");
    CHECK(iok_reqlist_bytes(&whole, &s) == 24 * 8, "bytes");
    iok_data_fill(&s, &whole, 42, IOK_VALUES_FRESH);
    iok_data_fill(&s, &halves, 42, IOK_VALUES_FRESH);
    const double *w = whole.acc[0].buf, *h = halves.acc[0].buf;
    int same = 1;
    for (int yy = 0; yy < 4; yy++)
        for (int xx = 0; xx < 6; xx++) {
            double hv = xx < 3 ? h[yy * 3 + xx] : h[12 + yy * 3 + (xx - 3)];
            same &= w[yy * 6 + xx] == hv;
        }
    CHECK(same, "values independent of the decomposition");

    int64_t checked = 0;
    char first[256] = "";
    CHECK(iok_data_check(&s, &whole, 42, IOK_VALUES_FRESH, &checked, first, sizeof first) == 0,
          "clean check");
    CHECK(checked == 24, "checked %lld", (long long)checked);
    CHECK(iok_data_check(&s, &whole, 43, IOK_VALUES_FRESH, &checked, first, sizeof first) == 24,
          "other seed");
    first[0] = '\0';
    ((double *)whole.acc[0].buf)[2 * 6 + 5] += 1.0; /* record 1, y 2, x 5 */
    CHECK(iok_data_check(&s, &whole, 42, IOK_VALUES_FRESH, &checked, first, sizeof first) == 1,
          "one bad value");
    CHECK(strstr(first, "d[1][2][5]: read"), "first bad names it: %s", first);

    /* other types round-trip, and records differ */
    double r0 = iok_data_bits(1, s.vars[vd].name_hash, 0, 0);
    double r1 = iok_data_bits(1, s.vars[vd].name_hash, 1, 0);
    CHECK(r0 != r1, "records differ");
    struct iok_reqlist ints;
    iok_reqlist_init(&ints);
    a = iok_reqlist_add(&ints, &s, vi, 1);
    int64_t st3[3] = {2, 1, 1}, ct3[3] = {1, 2, 3};
    memcpy(a->starts, st3, sizeof st3);
    memcpy(a->counts, ct3, sizeof ct3);
    iok_reqlist_finish(&ints, &s);
    iok_data_fill(&s, &ints, 7, IOK_VALUES_FRESH);
    checked = 0;
    CHECK(iok_data_check(&s, &ints, 7, IOK_VALUES_FRESH, &checked, first, sizeof first) == 0 &&
              checked == 6,
          "int round trip");
    /* kernel-provided values are written as given and checked as given */
    struct iok_reqlist meta;
    iok_reqlist_init(&meta);
    a = iok_reqlist_add(&meta, &s, vi, 1);
    memcpy(a->starts, st3, sizeof st3);
    memcpy(a->counts, ct3, sizeof ct3);
    iok_reqlist_finish(&meta, &s);
    const int32_t given[6] = {5, 4, 3, 2, 1, 0};
    CHECK(iok_access_set_values(a, &s, given) == 0, "set values");
    iok_data_fill(&s, &meta, 7, IOK_VALUES_FRESH);
    CHECK(memcmp(a->buf, given, sizeof given) == 0, "values written as given");
    checked = 0;
    first[0] = '\0';
    CHECK(iok_data_check(&s, &meta, 7, IOK_VALUES_FRESH, &checked, first, sizeof first) == 0 &&
              checked == 6,
          "given values check");
    ((int32_t *)a->buf)[4] = 9;
    CHECK(iok_data_check(&s, &meta, 7, IOK_VALUES_FRESH, &checked, first, sizeof first) == 1,
          "changed value");
    CHECK(strstr(first, "i[2][2][2]: read 9, expected 1"), "names it: %s", first);
    /* one list's buffers lie back to back in access order (a library sees
     * one contiguous buffer), a wider type aligned to itself */
    struct iok_reqlist mix;
    iok_reqlist_init(&mix);
    int64_t stf[2] = {0, 0}, ctf[2] = {1, 3}; /* 3 floats: 12 bytes */
    int vars[4] = {vf, vf, vd, vi};
    for (int k = 0; k < 4; k++) {
        a = iok_reqlist_add(&mix, &s, vars[k], 1);
        memcpy(a->starts, vars[k] == vf ? stf : st3, (vars[k] == vf ? 2 : 3) * sizeof *stf);
        memcpy(a->counts, vars[k] == vf ? ctf : ct3, (vars[k] == vf ? 2 : 3) * sizeof *ctf);
    }
    CHECK(iok_reqlist_finish(&mix, &s) == 0, "alloc mix");
    char *b0 = mix.acc[0].buf;
    CHECK((char *)mix.acc[1].buf == b0 + 12, "floats back to back");
    CHECK((char *)mix.acc[2].buf == b0 + 24, "double after 24 float bytes: no gap");
    CHECK((char *)mix.acc[3].buf == b0 + 24 + 48, "int right after the doubles");
    iok_data_fill(&s, &mix, 3, IOK_VALUES_FRESH);
    checked = 0;
    CHECK(iok_data_check(&s, &mix, 3, IOK_VALUES_FRESH, &checked, first, sizeof first) == 0 &&
              checked == 18,
          "mixed list round trip");
    iok_reqlist_free(&mix);
    iok_reqlist_init(&mix); /* a float then a double: the double aligned to 8 */
    a = iok_reqlist_add(&mix, &s, vf, 1);
    memcpy(a->starts, stf, sizeof stf);
    memcpy(a->counts, ctf, sizeof ctf);
    a = iok_reqlist_add(&mix, &s, vd, 1);
    memcpy(a->starts, st3, sizeof st3);
    memcpy(a->counts, ct3, sizeof ct3);
    CHECK(iok_reqlist_finish(&mix, &s) == 0, "alloc aligned");
    CHECK((char *)mix.acc[1].buf == (char *)mix.acc[0].buf + 16, "double aligned after 12 bytes");
    iok_reqlist_free(&mix);
    iok_reqlist_free(&meta);
    iok_reqlist_free(&whole);
    iok_reqlist_free(&halves);
    iok_reqlist_free(&ints);
    iok_schema_free(&s);
    every_type_against_the_reference();
    record_run_names_its_record();
    values_once();
    return check_summary("test_data");
}
