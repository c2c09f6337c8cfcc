/* SPDX-License-Identifier: BSD-3-Clause */
/* NetCDF-Bench geometry: parsing rejects anything but four positive
 * integers, defaults and checks follow the original (and catch what it
 * missed), the blocks of all ranks over all steps cover the data exactly
 * once, and the shifted read is a permutation with no rank reading itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "iokernels/error.h"
#include "kernels/ncbench/ncb_geom.h"

static int
msg_has(const char *needle)
{
    return strstr(iok_errmsg(), needle) != NULL;
}

static void
test_parse(void)
{
    int64_t g[NCB_NDIMS];
    CHECK(ncb_parse_geom("10:64:32:8", "-d", g) == IOK_OK, "%s", iok_errmsg());
    CHECK(g[0] == 10 && g[1] == 64 && g[2] == 32 && g[3] == 8, "parsed values");
    const char *bad[] = {
        "",        "2:4:4",     "2:4:4:2:1", "0:4:4:2",  "-1:4:4:2", "2::4:2",
        "a:b:c:d", "2:4:4:2x",  " 2:4:4:2",  "2:4:4:2:", "2,4,4,2",  "2:4:+4:2",
        "2:4:4:0", "2:4:4:1e3", "(2:4:4:2)", "2:4:4: 2", "2:4:4:2 ", "99999999999999999999:1:1:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        iok_error_clear();
        CHECK(ncb_parse_geom(bad[i], "-d/--data-geometry", g) == IOK_EUSAGE, "accepted '%s'",
              bad[i]);
        CHECK(msg_has("-d/--data-geometry") && msg_has("expected t:x:y:z"), "message '%s'",
              iok_errmsg());
    }
}

static struct ncb_spec
spec(const char *d, const char *b, const char *c, int64_t nn, int64_t ppn)
{
    struct ncb_spec s = {d, b, c, nn, ppn, 0};
    return s;
}

/* Resolves and expects an error whose message holds `needle`. */
static void
expect_error(struct ncb_spec s, int nprocs, const char *needle)
{
    struct ncb_geom g;
    iok_error_clear();
    int rc = ncb_resolve(&s, nprocs, &g);
    CHECK(rc == IOK_EUSAGE && msg_has(needle), "d=%s b=%s c=%s nn=%lld ppn=%lld np=%d: rc %d '%s'",
          s.data, s.block, s.chunk, (long long)s.nn, (long long)s.ppn, nprocs, rc, iok_errmsg());
}

static void
test_defaults(void)
{
    struct ncb_geom g;
    struct ncb_spec s = spec("", "", "", 0, 0);
    CHECK(ncb_resolve(&s, 1, &g) == IOK_OK, "%s", iok_errmsg());
    int64_t d1[] = {100, 100, 100, 10}, b1[] = {1, 100, 100, 10};
    CHECK(!memcmp(g.data, d1, sizeof d1) && !memcmp(g.block, b1, sizeof b1), "1 rank defaults");
    CHECK(g.steps == 100 && !g.chunked, "steps %lld", (long long)g.steps);

    s = spec("", "", "", 2, 2); /* the original's -n=2 -p=2 */
    CHECK(ncb_resolve(&s, 4, &g) == IOK_OK, "%s", iok_errmsg());
    int64_t d4[] = {100, 200, 200, 10}, b4[] = {1, 100, 100, 10};
    CHECK(!memcmp(g.data, d4, sizeof d4) && !memcmp(g.block, b4, sizeof b4), "nn 2 ppn 2");

    s = spec("", "", "", 0, 0); /* no -p, no SLURM: ppn = ranks / nn */
    CHECK(ncb_resolve(&s, 4, &g) == IOK_OK && g.nn == 1 && g.ppn == 4 && g.data[2] == 400,
          "4 ranks without -n/-p: nn %lld ppn %lld", (long long)g.nn, (long long)g.ppn);

    s = spec("20:256:256:64", "", "auto", 2, 2);
    s.unlimited = 1;
    CHECK(ncb_resolve(&s, 4, &g) == IOK_OK, "%s", iok_errmsg());
    int64_t c[] = {1, 128, 128, 64};
    CHECK(g.chunked && !memcmp(g.chunk, c, sizeof c) && !memcmp(g.block, c, sizeof c),
          "-c auto = block");

    s = spec("8:4:4:2", "4:2:2:2", "auto", 2, 2); /* auto takes the block's t too */
    CHECK(ncb_resolve(&s, 4, &g) == IOK_OK && g.chunk[0] == 4 && g.steps == 2, "auto t");
}

static void
test_checks(void)
{
    expect_error(spec("", "", "", 2, 2), 3, "3 ranks but nn x ppn = 2 x 2");
    expect_error(spec("", "", "", 3, 0), 4, "do not split over nn = 3");
    expect_error(spec("", "", "", -1, 0), 1, "must be positive");
    expect_error(spec("2:5:4:2", "", "", 2, 2), 4,
                 "x = 5 is not a multiple of the number of nodes");
    expect_error(spec("2:4:5:2", "", "", 2, 2), 4, "y = 5 is not a multiple of the processes");
    expect_error(spec("5:4:4:2", "2:2:2:2", "", 2, 2), 4, "t = 5 is not a multiple of the block");
    expect_error(spec("2:4:4:2", "3:2:2:2", "", 2, 2), 4, "along t");
    expect_error(spec("2:4:4:2", "1:3:2:2", "", 2, 2), 4, "along x, 2 block(s) of 3 exceed 4");
    expect_error(spec("2:4:4:2", "1:2:4:2", "", 2, 2), 4, "along y");
    expect_error(spec("2:4:4:2", "1:2:2:3", "", 2, 2), 4, "along z");
    expect_error(spec("2:4:4:2", "1:2:2", "", 2, 2), 4, "-b/--block-geometry '1:2:2'");
    expect_error(spec("2:4:4:2", "", "1:2:2", 2, 2), 4, "-c/--chunk-geometry");
    expect_error(spec("2:4:4:2", "", "1:8:2:2", 2, 2), 4,
                 "exceeds the data geometry 2:4:4:2 along x");
    expect_error(spec("2:4:4:2", "", "4:2:2:2", 2, 2), 4, "along t");
    expect_error(spec("1:70000:70000:1", "", "1:70000:70000:1", 1, 1), 1, "4 GiB or more");
    expect_error(spec("2:4611686018427387904:2:1", "", "", 1, 1), 1, "too large");

    struct ncb_geom g;
    struct ncb_spec s = spec("2:4:4:2", "", "4:2:2:2", 2, 2);
    s.unlimited = 1; /* an unlimited time bounds no chunk */
    CHECK(ncb_resolve(&s, 4, &g) == IOK_OK, "%s", iok_errmsg());
    s = spec("2:4:4:2", "1:1:1:1", "", 2, 2); /* smaller blocks leave holes: allowed */
    CHECK(ncb_resolve(&s, 4, &g) == IOK_OK, "%s", iok_errmsg());
}

/* Every rank's block at every step: hits per element. Returns the number of
 * elements covered more than once; *covered counts those covered at all. */
static int64_t
cover(const struct ncb_geom *g, int nprocs, int64_t *covered)
{
    int64_t n = ncb_elems(g->data), twice = 0;
    unsigned char *hits = calloc((size_t)n, 1);
    for (int r = 0; r < nprocs; r++)
        for (int64_t s = 0; s < g->steps; s++) {
            int64_t st[NCB_NDIMS];
            ncb_block_start(g, r, st);
            st[NCB_T] = s * g->block[NCB_T];
            for (int64_t t = st[0]; t < st[0] + g->block[0]; t++)
                for (int64_t x = st[1]; x < st[1] + g->block[1]; x++)
                    for (int64_t y = st[2]; y < st[2] + g->block[2]; y++)
                        for (int64_t z = st[3]; z < st[3] + g->block[3]; z++) {
                            int64_t i = ((t * g->data[1] + x) * g->data[2] + y) * g->data[3] + z;
                            hits[i]++;
                        }
        }
    *covered = 0;
    for (int64_t i = 0; i < n; i++) {
        *covered += hits[i] > 0;
        twice += hits[i] > 1;
    }
    free(hits);
    return twice;
}

static void
test_cover(void)
{
    const struct {
        const char *d, *b;
        int64_t nn, ppn;
    } cases[] = {{"4:8:6:3", "", 2, 3},        {"3:5:7:2", "", 1, 1}, {"6:6:4:2", "", 3, 2},
                 {"4:8:8:2", "2:4:8:2", 2, 1}, {"2:4:4:2", "", 1, 4}, {"6:12:12:5", "", 3, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ncb_spec s = spec(cases[i].d, cases[i].b, "", cases[i].nn, cases[i].ppn);
        int np = (int)(cases[i].nn * cases[i].ppn);
        struct ncb_geom g;
        iok_error_clear();
        CHECK(ncb_resolve(&s, np, &g) == IOK_OK, "%s: %s", cases[i].d, iok_errmsg());
        int64_t covered, twice = cover(&g, np, &covered);
        CHECK(twice == 0 && covered == ncb_elems(g.data), "%s on %lldx%lld: %lld of %lld once",
              cases[i].d, (long long)g.nn, (long long)g.ppn, (long long)covered,
              (long long)ncb_elems(g.data));
    }
    /* a smaller block: no overlap, exactly the blocks' elements covered */
    struct ncb_spec s = spec("4:8:8:4", "2:3:2:4", "", 2, 2);
    struct ncb_geom g;
    CHECK(ncb_resolve(&s, 4, &g) == IOK_OK, "%s", iok_errmsg());
    int64_t covered, twice = cover(&g, 4, &covered);
    CHECK(twice == 0 && covered == 4 * g.steps * ncb_elems(g.block), "smaller block: %lld",
          (long long)covered);
}

static void
test_read_source(void)
{
    for (int np = 1; np <= 9; np++) {
        int *seen = calloc((size_t)np, sizeof *seen);
        for (int r = 0; r < np; r++) {
            int src = ncb_read_source(r, np);
            CHECK(src >= 0 && src < np, "source %d of rank %d", src, r);
            CHECK(np == 1 || src != r, "rank %d reads itself on %d ranks", r, np);
            seen[src]++;
        }
        for (int r = 0; r < np; r++)
            CHECK(seen[r] == 1, "block of rank %d read %d times on %d ranks", r, seen[r], np);
        free(seen);
    }
    CHECK(ncb_read_source(3, 4) == 0 && ncb_read_source(0, 4) == 1, "the original's shift");
}

static void
test_pretty(void)
{
    const struct {
        int64_t bytes;
        const char *want;
    } cases[] = {{40000000, "40.0 MB"},   {400000, "400.0 kB"},
                 {10485760, "10.4 MB"},   {524288, "524.2 kB"},
                 {335544320, "335.5 MB"}, {4194304, "4.1 MB"},
                 {128, "128.0 B"},        {1, "1.0 B"},
                 {999, "999.0 B"},        {1000, "1.0 kB"},
                 {1999, "1.9 kB"},        {INT64_MAX, "9.2 EB"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[48];
        ncb_pretty_size(cases[i].bytes, out, sizeof out);
        CHECK(!strcmp(out, cases[i].want), "%lld: '%s', want '%s'", (long long)cases[i].bytes, out,
              cases[i].want);
    }
}

int
main(void)
{
    test_parse();
    test_defaults();
    test_checks();
    test_cover();
    test_read_source();
    test_pretty();
    return check_summary("test_ncb_geom");
}
