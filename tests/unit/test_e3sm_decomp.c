/* SPDX-License-Identifier: BSD-3-Clause */
/* E3SM decompositions: the readers of the three containers and of the legacy
 * layout agree; for 1, 2, 4, 16 and 20 ranks the runs of all (virtual) ranks
 * cover each decomposition's requests exactly once; bad pairs are refused. */
#define _GNU_SOURCE /* memmem */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "check.h"
#include "iokernels/error.h"
#include "kernels/e3sm/e3sm_box.h"
#include "kernels/e3sm_common/e3sm_dat.h"
#include "kernels/e3sm_common/e3sm_decomp.h"
#include "kernels/e3sm_common/e3sm_source.h"

/* the shipped 16-rank maps (data/e3sm) and the test data (tests/data/e3sm) */
#define MAPS IOK_DATA_DIR "/e3sm/"
#define DATA IOK_TEST_DATA "/e3sm/"

static int
same_runs(const struct e3sm_decomps *a, const struct e3sm_decomps *b)
{
    if (a->ndecomp != b->ndecomp || a->decomp_nprocs != b->decomp_nprocs)
        return 0;
    for (int i = 0; i < a->ndecomp; i++) {
        const struct e3sm_decomp *x = &a->d[i], *y = &b->d[i];
        if (x->ndims != y->ndims || x->total != y->total || x->runs.n != y->runs.n ||
            x->runs.nelems != y->runs.nelems)
            return 0;
        for (int64_t j = 0; j < x->runs.n; j++)
            if (x->runs.off[j] != y->runs.off[j] || x->runs.len[j] != y->runs.len[j])
                return 0;
    }
    return 1;
}

/* others: also the map's other containers and its legacy layout (F only) */
static void
readers_agree(const char *name, int others)
{
    char path[512];
    struct e3sm_decomps nc, other;
    snprintf(path, sizeof path, MAPS "map_%s_case_16p.nc", name);
    int rc = e3sm_decomp_read(path, MPI_COMM_SELF, &nc);
    CHECK(rc == IOK_OK, "%s: %s", path, iok_errmsg());
    CHECK(nc.layout == E3SM_LAYOUT_MAP, "%s is a map file", path);
    /* the other containers of the F map: the same readers serve G and I */
    const char *exts[] = {"nc4", "h5"};
    for (int e = 0; e < 2 && others; e++) {
        snprintf(path, sizeof path, DATA "map_%s_case_16p.%s", name, exts[e]);
        rc = e3sm_decomp_read(path, MPI_COMM_SELF, &other);
        CHECK(rc == IOK_OK, "%s: %s", path, iok_errmsg());
        CHECK(same_runs(&nc, &other), "%s differs from the .nc", path);
        e3sm_decomps_free(&other);
    }
    if (others) {
        rc = e3sm_decomp_read(DATA "legacy_pre2022/f_case_866x72_16p.nc", MPI_COMM_SELF, &other);
        CHECK(rc == IOK_OK, "legacy: %s", iok_errmsg());
        CHECK(other.layout == E3SM_LAYOUT_LEGACY, "legacy layout");
        CHECK(same_runs(&nc, &other), "legacy F file covers other elements than the map file");
        e3sm_decomps_free(&other);
    }
    e3sm_decomps_free(&nc);
}

/* The union of the runs of every virtual rank of P covers exactly the
 * elements the file's pairs cover, each once. */
static void
coverage(const char *file)
{
    struct e3sm_src src = {0};
    int rc = e3sm_src_open(&src, file, MPI_COMM_SELF);
    CHECK(rc == IOK_OK, "%s: %s", file, iok_errmsg());
    if (rc)
        return;
    for (int id = 1; id <= E3SM_MAX_DECOMP; id++) {
        char name[64];
        int64_t n, npairs, dims[E3SM_MAX_DDIMS];
        snprintf(name, sizeof name, "D%d.nreqs", id);
        if (src.var_len(&src, name, &n) != 1)
            break;
        snprintf(name, sizeof name, "D%d.dims", id);
        int nd = src.att(&src, name, dims, E3SM_MAX_DDIMS);
        int64_t total = 1;
        for (int k = 0; k < nd; k++)
            total *= dims[k];
        snprintf(name, sizeof name, "D%d.offsets", id);
        src.var_len(&src, name, &npairs);
        int64_t *nreqs = malloc(n * sizeof *nreqs), *off = malloc(npairs * sizeof *off),
                *len = malloc(npairs * sizeof *len);
        snprintf(name, sizeof name, "D%d.nreqs", id);
        src.read(&src, name, 0, n, nreqs);
        snprintf(name, sizeof name, "D%d.offsets", id);
        src.read(&src, name, 0, npairs, off);
        snprintf(name, sizeof name, "D%d.lengths", id);
        src.read(&src, name, 0, npairs, len);
        unsigned char *want = calloc(total, 1), *got = calloc(total, 1);
        for (int64_t j = 0; j < npairs; j++)
            for (int64_t e = off[j]; e < off[j] + len[j]; e++)
                want[e]++;
        const int procs[] = {1, 2, 4, 16, 20};
        for (size_t p = 0; p < sizeof procs / sizeof procs[0]; p++) {
            int P = procs[p];
            memset(got, 0, total);
            int64_t runs_total = 0;
            for (int r = 0; r < P; r++) {
                int64_t first, count, start = 0, cnt = 0;
                e3sm_assign(n, P, r, &first, &count);
                for (int64_t i = 0; i < first; i++)
                    start += nreqs[i];
                for (int64_t i = first; i < first + count; i++)
                    cnt += nreqs[i];
                CHECK(r < n || count == 0, "rank %d of %d past the decomposition has work", r, P);
                struct e3sm_runs runs;
                char why[256];
                rc = e3sm_runs_build(off + start, len + start, cnt, dims[nd - 1], total, &runs, why,
                                     sizeof why);
                CHECK(rc == 0, "%s D%d P=%d rank %d: %s", file, id, P, r, why);
                for (int64_t j = 0; j < runs.n; j++) {
                    CHECK(j == 0 || runs.off[j] > runs.off[j - 1], "runs sorted");
                    CHECK(runs.off[j] / dims[nd - 1] ==
                              (runs.off[j] + runs.len[j] - 1) / dims[nd - 1],
                          "run %lld crosses a row", (long long)j);
                    for (int64_t e = runs.off[j]; e < runs.off[j] + runs.len[j]; e++)
                        got[e]++;
                }
                runs_total += runs.n;
                e3sm_runs_free(&runs);
            }
            int64_t bad = 0, twice = 0;
            for (int64_t e = 0; e < total; e++) {
                bad += got[e] != want[e];
                twice += got[e] > 1;
            }
            CHECK(bad == 0 && twice == 0, "%s D%d P=%d: %lld elements covered differently", file,
                  id, P, (long long)bad);
            CHECK(P > 1 || runs_total <= npairs, "merging never adds runs at P=1");
        }
        free(want);
        free(got);
        free(nreqs);
        free(off);
        free(len);
    }
    src.close(&src);
}

static void
bad_pairs(void)
{
    struct e3sm_runs r;
    char why[256];
    int64_t off[] = {10, 0, 5}, len[] = {5, 5, 5};
    CHECK(e3sm_runs_build(off, len, 3, 8, 20, &r, why, sizeof why) == 0, "%s", why);
    /* [0,5) [5,8) | [8,10) [10,15) | [16,..: rows of 8 break the merge */
    CHECK(r.n == 2 && r.off[0] == 0 && r.len[0] == 8 && r.off[1] == 8 && r.len[1] == 7,
          "split and merged at the row: n=%lld", (long long)r.n);
    e3sm_runs_free(&r);
    int64_t o2[] = {0, 4}, l2[] = {5, 2};
    CHECK(e3sm_runs_build(o2, l2, 2, 100, 100, &r, why, sizeof why) == -1 && strstr(why, "overlap"),
          "overlap refused: %s", why);
    int64_t o3[] = {98}, l3[] = {3};
    CHECK(e3sm_runs_build(o3, l3, 1, 100, 100, &r, why, sizeof why) == -1 && strstr(why, "outside"),
          "out of range refused: %s", why);
    int64_t o4[] = {1}, l4[] = {0};
    CHECK(e3sm_runs_build(o4, l4, 1, 100, 100, &r, why, sizeof why) == -1 &&
              strstr(why, "length 0"),
          "zero length refused: %s", why);
}

/* dat2decomp's rules: zeros dropped (offsets past the array refused), 1-based,
 * consecutive offsets in file order merged, broken at rows of the fastest
 * (first, Fortran order) dimension; ranks without a line have no request. */
static void
dat_parse(void)
{
    const char *text = "version 2001 npes 3 ndims 2\n4 3\n"
                       "0 6\n1 2 0 3 4 5\n"
                       "2 3\n12 10 11\n"
                       "Obtained 10 stack frames.\n";
    struct e3sm_dat d;
    char why[256] = "";
    CHECK(e3sm_dat_parse(text, &d, why, sizeof why) == 0, "%s", why);
    CHECK(d.ndims == 2 && d.dims[0] == 3 && d.dims[1] == 4 && d.total == 12, "dims C order");
    CHECK(d.nreqs[0] == 2 && d.nreqs[1] == 0 && d.nreqs[2] == 2, "nreqs %lld %lld %lld",
          (long long)d.nreqs[0], (long long)d.nreqs[1], (long long)d.nreqs[2]);
    /* rank 0: 1 2 3 4 -> [0,4); 5 starts row 1 -> [4,5); rank 2: 12 -> [11,1), 10 11 -> [9,2) */
    int64_t want_off[] = {0, 4, 11, 9}, want_len[] = {4, 1, 1, 2};
    for (int i = 0; i < 4 && d.npairs == 4; i++)
        CHECK(d.off[i] == want_off[i] && d.len[i] == want_len[i], "pair %d: %lld+%lld", i,
              (long long)d.off[i], (long long)d.len[i]);
    CHECK(d.nraw == 8 && d.raw[0] == 1 && d.raw[7] == 11, "raw offsets 1-based");
    CHECK(!d.fully_covered, "elements 6..9 of 12 are nobody's");
    e3sm_dat_free(&d);
    CHECK(e3sm_dat_parse("version 2001 npes 1 ndims 1\n5\n0 2\n1\n", &d, why, sizeof why) == -1 &&
              strstr(why, "line 4: rank 0 should list 2 offsets"),
          "short line refused: %s", why);
    /* dat2decomp drops an offset past the array; here it is an error */
    CHECK(e3sm_dat_parse("version 2001 npes 2 ndims 2\n4 3\n0 2\n1 13\n", &d, why, sizeof why) ==
                  -1 &&
              strstr(why, "line 4: offset 13 is beyond the global array of 12 elements "
                          "(dimensions 4 3 on line 2)"),
          "offset past the array refused: %s", why);
}

/* The rearranger's boxes: a linear range as at most 2*nd-1 subarrays that
 * cover it exactly, in increasing order. */
static void
range_boxes(void)
{
    const int64_t dims[3] = {4, 5, 6};
    int64_t total = 120, st[5 * 3], ct[5 * 3];
    for (int64_t a = 0; a < total; a += 7)
        for (int64_t b = a + 1; b <= total; b += 5) {
            int n = e3sm_range_boxes(a, b, dims, 3, st, ct);
            CHECK(n >= 1 && n <= 5, "[%lld,%lld): %d boxes", (long long)a, (long long)b, n);
            int64_t next = a, bad = 0;
            for (int i = 0; i < n; i++) /* row-major walk of box i */
                for (int64_t x = 0; x < ct[3 * i]; x++)
                    for (int64_t y = 0; y < ct[3 * i + 1]; y++)
                        for (int64_t z = 0; z < ct[3 * i + 2]; z++) {
                            int64_t lin =
                                ((st[3 * i] + x) * 5 + st[3 * i + 1] + y) * 6 + st[3 * i + 2] + z;
                            bad += lin != next++;
                        }
            CHECK(bad == 0 && next == b, "[%lld,%lld) not covered in order", (long long)a,
                  (long long)b);
        }
}

/* A damaged CDF-5 header is refused before PnetCDF parses it: a copy of the
 * F map cut inside its header, and copies whose counts claim more bytes than
 * the file holds (dimensions, an attribute's values, variables). */
static void
put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (unsigned char)v;
}

static void
damaged_header(const char *what, const unsigned char *bytes, size_t len, const char *expect)
{
    char path[] = "/tmp/iok-test-header-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    CHECK(f && fwrite(bytes, 1, len, f) == len, "writing %s", path);
    if (f)
        fclose(f);
    struct e3sm_decomps d;
    iok_error_clear();
    int rc = e3sm_decomp_read(path, MPI_COMM_SELF, &d);
    CHECK(rc == IOK_EUSAGE && strstr(iok_errmsg(), path) &&
              strstr(iok_errmsg(), "damaged NetCDF header") && strstr(iok_errmsg(), expect) &&
              !strchr(iok_errmsg(), '\n'),
          "%s: rc %d, message: %s", what, rc, iok_errmsg());
    if (rc == IOK_OK)
        e3sm_decomps_free(&d);
    iok_error_clear();
    unlink(path);
}

static void
damaged_headers(void)
{
    FILE *f = fopen(MAPS "map_f_case_16p.nc", "rb");
    CHECK(f != NULL, "open the F map");
    if (!f)
        return;
    static unsigned char map[1 << 20], copy[1 << 20];
    size_t len = fread(map, 1, sizeof map, f);
    fclose(f);
    CHECK(len > 1000 && !memcmp(map, "CDF\5", 4), "the F map is CDF-5 (%zu bytes)", len);
    damaged_header("cut in the header", map, 200, "the file is truncated or corrupt");

    memcpy(copy, map, len); /* magic 4, numrecs 8, NC_DIMENSION 4, then the count */
    put_be64(copy + 16, (uint64_t)1 << 40);
    damaged_header("dimension count", copy, len, "the dimension count 1099511627776");

    /* D1.dims: name length 8, "D1.dims" padded to 8, type 4, then its count */
    const unsigned char *att = memmem(map, 4096, "D1.dims", 7);
    CHECK(att != NULL, "D1.dims in the header");
    if (att) {
        memcpy(copy, map, len);
        put_be64(copy + (att - map) + 8 + 4, (uint64_t)1 << 61);
        damaged_header("attribute values", copy, len, "an attribute's value count");
    }
    /* the first variable, D1.nreqs, after NC_VARIABLE (4 bytes) and the count (8) */
    const unsigned char *var = memmem(map, 4096,
                                      "\0\0\0\0\0\0\0\x08"
                                      "D1.nreqs",
                                      16);
    CHECK(var != NULL && var - map >= 12 && !memcmp(var - 12, "\0\0\0\x0b", 4),
          "the variable list in the header");
    if (var && var - map >= 12) {
        memcpy(copy, map, len);
        put_be64(copy + (var - map) - 8, 0x7fffffffffffffffull);
        damaged_header("variable count", copy, len, "the variable count");
    }
}

static void
assignment(void)
{
    int64_t first, count;
    e3sm_assign(16, 3, 0, &first, &count);
    CHECK(first == 0 && count == 6, "16 on 3, rank 0");
    e3sm_assign(16, 3, 2, &first, &count);
    CHECK(first == 11 && count == 5, "16 on 3, rank 2");
    e3sm_assign(16, 20, 17, &first, &count);
    CHECK(count == 0, "16 on 20, rank 17 has none");
}

int
main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    assignment();
    damaged_headers();
    bad_pairs();
    dat_parse();
    range_boxes();
    readers_agree("f", 1);
    readers_agree("g", 0);
    readers_agree("i", 0);
    coverage(MAPS "map_f_case_16p.nc");
    coverage(MAPS "map_g_case_16p.nc");
    coverage(MAPS "map_i_case_16p.nc");
    coverage(DATA "legacy_pre2022/g_case_cmpaso_16p.nc");
    struct e3sm_decomps d;
#ifdef IOK_HAVE_ADIOS2
    { /* E3SM-IO's BP3 form of the F map, read through ADIOS2: the same runs */
        struct e3sm_decomps nc;
        CHECK(e3sm_decomp_read(DATA "map_f_case_16p.bp", MPI_COMM_SELF, &d) == IOK_OK, "bp: %s",
              iok_errmsg());
        CHECK(e3sm_decomp_read(MAPS "map_f_case_16p.nc", MPI_COMM_SELF, &nc) == IOK_OK, "nc: %s",
              iok_errmsg());
        CHECK(same_runs(&nc, &d), "the .bp map covers other elements than the .nc map");
        e3sm_decomps_free(&nc);
        e3sm_decomps_free(&d);
    }
#else
    CHECK(e3sm_decomp_read(DATA "map_f_case_16p.bp", MPI_COMM_SELF, &d) == IOK_EUSAGE &&
              strstr(iok_errmsg(), "ADIOS2"),
          "bp refused: %s", iok_errmsg());
#endif
    iok_error_clear();
    CHECK(e3sm_decomp_read(MAPS "f_case_h0.cdl", MPI_COMM_SELF, &d) == IOK_EUSAGE &&
              strstr(iok_errmsg(), "neither NetCDF nor HDF5"),
          "text refused: %s", iok_errmsg());
    int rc = check_summary("test_e3sm_decomp");
    MPI_Finalize();
    return rc;
}
