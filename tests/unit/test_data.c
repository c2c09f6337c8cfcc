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
        iok_schema_init(&s);
        int dt = iok_schema_add_dim(&s, "t", 4, 1), dy = iok_schema_add_dim(&s, "y", 30, 0);
        int dx = iok_schema_add_dim(&s, "x", 70, 0);
        int d3[3] = {dt, dy, dx};
        int v = iok_schema_add_var(&s, "v", t, 3, d3);
        struct iok_reqlist r;
        iok_reqlist_init(&r);
        struct iok_access *a = iok_reqlist_add(&r, &s, v, 3);
        /* records 1-2 whole (runs of 2,100), y 3-9 of record 3 whole rows (a
         * run of 490), x 5-60 of y 10-12 in record 0 (rows of 56) */
        int64_t st[9] = {1, 0, 0, 3, 3, 0, 0, 10, 5}, ct[9] = {2, 30, 70, 1, 7, 70, 1, 3, 56};
        memcpy(a->starts, st, sizeof st);
        memcpy(a->counts, ct, sizeof ct);
        CHECK(iok_reqlist_finish(&r, &s) == 0, "alloc");
        iok_data_fill(&s, &r, 9);
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
        CHECK(iok_data_check(&s, &r, 9, &checked, first, sizeof first) == 0 && checked == n,
              "type %d: clean check, %lld checked", (int)t, (long long)checked);
        /* record 2, y 1, x 3 and y 21, x 65: offsets 73 and 1,535 of its run,
         * the second the last of a chunk */
        char *b = a->buf;
        b[(size_t)(2100 + 73) * es] ^= 1;
        b[(size_t)(2100 + 1535) * es] ^= 1;
        CHECK(iok_data_check(&s, &r, 9, &checked, first, sizeof first) == 2, "type %d: 2 bad",
              (int)t);
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
    iok_data_fill(&s, &r, 5);
    ((double *)a->buf)[2] += 1.0;
    int64_t checked = 0;
    char first[256] = "";
    CHECK(iok_data_check(&s, &r, 5, &checked, first, sizeof first) == 1 && checked == 3,
          "one bad of 3");
    CHECK(strstr(first, "tv[3]: read"), "names record 3: %s", first);
    iok_reqlist_free(&r);
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
    iok_data_fill(&s, &whole, 42);
    iok_data_fill(&s, &halves, 42);
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
    CHECK(iok_data_check(&s, &whole, 42, &checked, first, sizeof first) == 0, "clean check");
    CHECK(checked == 24, "checked %lld", (long long)checked);
    CHECK(iok_data_check(&s, &whole, 43, &checked, first, sizeof first) == 24, "other seed");
    first[0] = '\0';
    ((double *)whole.acc[0].buf)[2 * 6 + 5] += 1.0; /* record 1, y 2, x 5 */
    CHECK(iok_data_check(&s, &whole, 42, &checked, first, sizeof first) == 1, "one bad value");
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
    iok_data_fill(&s, &ints, 7);
    checked = 0;
    CHECK(iok_data_check(&s, &ints, 7, &checked, first, sizeof first) == 0 && checked == 6,
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
    iok_data_fill(&s, &meta, 7);
    CHECK(memcmp(a->buf, given, sizeof given) == 0, "values written as given");
    checked = 0;
    first[0] = '\0';
    CHECK(iok_data_check(&s, &meta, 7, &checked, first, sizeof first) == 0 && checked == 6,
          "given values check");
    ((int32_t *)a->buf)[4] = 9;
    CHECK(iok_data_check(&s, &meta, 7, &checked, first, sizeof first) == 1, "changed value");
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
    iok_data_fill(&s, &mix, 3);
    checked = 0;
    CHECK(iok_data_check(&s, &mix, 3, &checked, first, sizeof first) == 0 && checked == 18,
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
    return check_summary("test_data");
}
