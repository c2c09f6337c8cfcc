/* SPDX-License-Identifier: BSD-3-Clause */
/* The adios2 backend driven directly, on the ranks mpiexec gives (ctest: 2):
 * a schema with what BTIO lacks (attributes, a scalar, a fixed variable, a
 * text variable, several subarrays per access), written with one
 * decomposition and read back with another whose subarrays span every
 * writer's blocks; the attributes read with the ADIOS2 C API itself; and
 * the errors a reader must name (a hole, a variable no rank wrote, a wrong
 * shape or type, not a dataset). As the core does, prepare (untimed) runs
 * before each get. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <adios2_c.h>
#include <mpi.h>

#include "check.h"
#include "iokernels/backend.h"
#include "iokernels/data.h"
#include "iokernels/error.h"

#define T 3 /* records */
#define Y 6
#define X 8
#define N 4
#define SEED 7

enum { V_REC, V_FIXED, V_SCALAR, V_TEXT, V_GHOST };

static int rank, nprocs;
static const struct iok_backend *be;
static void *bopts;
static int read_ghost; /* ask for the variable no rank writes */

static void
make_schema(struct iok_schema *s, enum iok_type rec_type, int64_t records)
{
    iok_schema_init(s);
    int t = iok_schema_add_dim(s, "time", records, 1), y = iok_schema_add_dim(s, "y", Y, 0);
    int x = iok_schema_add_dim(s, "x", X, 0), n = iok_schema_add_dim(s, "n", N, 0);
    int d3[3] = {t, y, x}, d1[1] = {n};
    iok_schema_add_var(s, "rec", rec_type, 3, d3);
    iok_schema_add_var(s, "fixed", IOK_INT64, 1, d1);
    iok_schema_add_var(s, "scalar", IOK_FLOAT, 0, d1); /* no dimension read: UBSan-clean */
    iok_schema_add_var(s, "text", IOK_CHAR, 1, d1);
    iok_schema_add_var(s, "ghost", IOK_INT, 1, d1); /* never written */
    int ints[3] = {1, 2, 3};
    double scale = 0.5;
    iok_schema_add_text_attr(s, IOK_GLOBAL, "title", "iokernels adios2 test");
    iok_schema_add_attr(s, IOK_GLOBAL, "ints", IOK_INT, 3, ints);
    iok_schema_add_text_attr(s, V_REC, "units", "m/s");
    iok_schema_add_attr(s, V_REC, "scale", IOK_DOUBLE, 1, &scale);
}

/* Writer decomposition of step t: rank r owns the rows y with y % P == r,
 * one subarray per row (several blocks per access); rank 0 also writes the
 * fixed, scalar and text variables at step 0. `hole` leaves row Y-1 of the
 * last record unwritten. */
static void
write_requests(const struct iok_schema *s, int t, int hole, struct iok_reqlist *r)
{
    int rows = 0;
    for (int y = rank; y < Y; y += nprocs)
        rows += !(hole && t == T - 1 && y == Y - 1);
    struct iok_access *a = iok_reqlist_add(r, s, V_REC, rows);
    int j = 0;
    for (int y = rank; y < Y; y += nprocs) {
        if (hole && t == T - 1 && y == Y - 1)
            continue;
        int64_t st[3] = {t, y, 0}, ct[3] = {1, 1, X};
        memcpy(a->starts + 3 * j, st, sizeof st);
        memcpy(a->counts + 3 * j, ct, sizeof ct);
        j++;
    }
    int once = rank == 0 && t == 0;
    a = iok_reqlist_add(r, s, V_FIXED, once);
    if (once)
        a->counts[0] = N;
    iok_reqlist_add(r, s, V_SCALAR, once);
    a = iok_reqlist_add(r, s, V_TEXT, once);
    if (once)
        a->counts[0] = N;
    iok_reqlist_add(r, s, V_GHOST, 0);
    iok_reqlist_finish(r, s);
}

/* Reader decomposition: rank r reads every row of columns [lo, hi) as one
 * subarray, so each subarray meets the blocks of every writer file. */
static void
read_requests(const struct iok_schema *s, int t, struct iok_reqlist *r)
{
    int64_t lo = X * rank / nprocs, hi = X * (rank + 1) / nprocs;
    struct iok_access *a = iok_reqlist_add(r, s, V_REC, 1);
    int64_t st[3] = {t, 0, lo}, ct[3] = {1, Y, hi - lo};
    memcpy(a->starts, st, sizeof st);
    memcpy(a->counts, ct, sizeof ct);
    a = iok_reqlist_add(r, s, V_FIXED, t == 0);
    if (t == 0) {
        a->starts[0] = 1;
        a->counts[0] = N - 1;
    }
    iok_reqlist_add(r, s, V_SCALAR, t == 0);
    a = iok_reqlist_add(r, s, V_TEXT, t == 0);
    if (t == 0)
        a->counts[0] = N;
    a = iok_reqlist_add(r, s, V_GHOST, read_ghost);
    if (read_ghost)
        a->counts[0] = N;
    iok_reqlist_finish(r, s);
}

static int collective = 1; /* 0: the write without aggregation */

static struct iok_backend_params
params(enum iok_api api)
{
    return (struct iok_backend_params){MPI_COMM_WORLD, collective, api, bopts};
}

static int
write_file(const char *path, const struct iok_schema *s, enum iok_api api, int hole)
{
    struct iok_backend_params p = params(api);
    void *h = NULL;
    int rc = be->create(&h, path, s, &p);
    if (rc == IOK_OK)
        rc = be->define(h);
    for (int t = 0; t < T && rc == IOK_OK; t++) {
        struct iok_reqlist r;
        iok_reqlist_init(&r);
        write_requests(s, t, hole, &r);
        iok_data_fill(s, &r, SEED, IOK_VALUES_FRESH);
        rc = be->xfer(h, IOK_DIR_WRITE, &r);
        if (rc == IOK_OK)
            rc = be->wait(h);
        iok_reqlist_free(&r);
    }
    if (h) {
        int crc = be->close(h);
        rc = rc ? rc : crc;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* as the core's agreement: every file closed */
    return rc;
}

/* Reads every step back with the reader decomposition; returns the status
 * and adds the mismatches to *bad. */
static int
read_file(const char *path, const struct iok_schema *s, enum iok_api api, int64_t *bad,
          int64_t *checked)
{
    struct iok_backend_params p = params(api);
    void *h = NULL;
    char first[256] = "";
    int rc = be->open(&h, path, s, &p);
    for (int t = 0; t < T && rc == IOK_OK; t++) {
        struct iok_reqlist r;
        iok_reqlist_init(&r);
        read_requests(s, t, &r);
        rc = be->prepare ? be->prepare(h, &r) : IOK_OK;
        if (rc == IOK_OK)
            rc = be->xfer(h, IOK_DIR_READ, &r);
        if (rc == IOK_OK)
            rc = be->wait(h);
        if (rc == IOK_OK)
            *bad += iok_data_check(s, &r, SEED, IOK_VALUES_FRESH, checked, first, sizeof first);
        iok_reqlist_free(&r);
    }
    if (h) {
        int crc = be->close(h);
        rc = rc ? rc : crc;
    }
    CHECK(first[0] == '\0', "rank %d first mismatch: %s", rank, first);
    return rc;
}

/* The attributes, as the ADIOS2 C API sees them in the dataset (one
 * engine on rank 0 alone). */
static void
check_attributes(const char *path)
{
    char text[64] = "";
    adios2_adios *ad = adios2_init_mpi(MPI_COMM_SELF);
    adios2_io *io = adios2_declare_io(ad, "check");
    adios2_engine *e = adios2_open(io, path, adios2_mode_readRandomAccess);
    CHECK(e != NULL, "open %s", path);
    if (!e) {
        adios2_finalize(ad);
        return;
    }
    adios2_attribute *a = adios2_inquire_attribute(io, "title");
    size_t size = 0;
    CHECK(a && adios2_attribute_data(text, &size, a) == 0 && !strcmp(text, "iokernels adios2 test"),
          "title '%s'", text);
    int ints[3] = {0};
    a = adios2_inquire_attribute(io, "ints");
    CHECK(a && adios2_attribute_data(ints, &size, a) == 0 && size == 3 && ints[2] == 3,
          "ints %zu %d", size, ints[2]);
    a = adios2_inquire_variable_attribute(io, "units", "rec", "/");
    memset(text, 0, sizeof text);
    CHECK(a && adios2_attribute_data(text, &size, a) == 0 && !strcmp(text, "m/s"), "units '%s'",
          text);
    double scale = 0;
    a = adios2_inquire_variable_attribute(io, "scale", "rec", "/");
    CHECK(a && adios2_attribute_data(&scale, &size, a) == 0 && scale == 0.5, "scale %g", scale);
    adios2_variable *v = adios2_inquire_variable(io, "rec");
    size_t shape[3] = {0};
    CHECK(v && adios2_variable_shape(shape, v) == 0 && shape[0] == T && shape[1] == Y &&
              shape[2] == X,
          "rec shape %zu,%zu,%zu", shape[0], shape[1], shape[2]);
    adios2_close(e);
    adios2_finalize(ad);
}

/* The data.* subfiles of a dataset. */
static int
count_subfiles(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += !strncmp(e->d_name, "data.", 5);
    if (d)
        closedir(d);
    return n;
}

/* A failing call: the worst status over the ranks and rank 0's message. */
static void
expect_error(int rc, int want, const char *needle, const char *what)
{
    int worst;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(worst == want, "%s: status %d, want %d", what, worst, want);
    if (rank == 0) /* every rank fails here; the lowest holds the message */
        CHECK(strstr(iok_errmsg(), needle), "%s: message '%s' lacks '%s'", what, iok_errmsg(),
              needle);
    iok_error_clear();
}

static int
rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(p);
}

int
main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    be = iok_backend_find("adios2");
    CHECK(be != NULL, "adios2 backend registered");
    if (!be) {
        MPI_Finalize();
        return check_summary("test_adios2");
    }
    char dir[64] = "/tmp/iok-test-adios2-XXXXXX";
    if (rank == 0 && !mkdtemp(dir))
        dir[0] = '\0';
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    bopts = calloc(1, be->opts_size);
    struct iok_optset set = {be->name, be->options, bopts};
    iok_opts_defaults(&set);

    static const struct {
        const char *engine;
        enum iok_api api;
        int collective;
    } cases[] = {{"bp5", IOK_API_BLOCKING, 1},
                 {"bp5", IOK_API_NONBLOCKING, 1},
                 {"bp4", IOK_API_BLOCKING, 1},
                 {"bp5", IOK_API_NONBLOCKING, 0},
                 {"bp4", IOK_API_BLOCKING, 0}};
    struct iok_schema s;
    make_schema(&s, IOK_DOUBLE, T);
    char path[128];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        iok_opts_set(&set, iok_opts_find(&set, 1, "adios2-engine", NULL), cases[c].engine, "test");
        snprintf(path, sizeof path, "%s/case%zu.adios2", dir, c);
        collective = cases[c].collective;
        int rc = write_file(path, &s, cases[c].api, 0);
        CHECK(rc == IOK_OK, "%s write: %s", cases[c].engine, iok_errmsg());
        int64_t bad = 0, checked = 0, total;
        rc = read_file(path, &s, cases[c].api, &bad, &checked);
        CHECK(rc == IOK_OK, "%s read: %s", cases[c].engine, iok_errmsg());
        MPI_Allreduce(&checked, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        /* rec, plus fixed (N-1), scalar and text on every rank */
        CHECK(total == (int64_t)T * Y * X + nprocs * (N - 1 + 1 + N), "%s checked %lld",
              cases[c].engine, (long long)total);
        CHECK(bad == 0, "%s: %lld mismatches", cases[c].engine, (long long)bad);
        if (rank == 0)
            check_attributes(path);
        if (rank == 0 && !collective) /* no aggregation: a subfile per rank */
            CHECK(count_subfiles(path) == nprocs, "%s independent: %d subfiles for %d ranks",
                  cases[c].engine, count_subfiles(path), nprocs);
    }

    /* errors a reader names */
    collective = 1;
    int64_t bad = 0, checked = 0;
    snprintf(path, sizeof path, "%s/case0.adios2", dir);
    struct iok_schema more, other;
    make_schema(&more, IOK_DOUBLE, T + 1);
    make_schema(&other, IOK_FLOAT, T);
    expect_error(read_file(path, &more, IOK_API_BLOCKING, &bad, &checked), IOK_EUSAGE,
                 "is 3 long in the file, at least 4 expected", "more records than written");
    expect_error(read_file(path, &other, IOK_API_BLOCKING, &bad, &checked), IOK_EUSAGE,
                 "variable rec is double in the file, float expected", "another type");
    expect_error(read_file(dir, &s, IOK_API_BLOCKING, &bad, &checked), IOK_EUSAGE,
                 "is not an ADIOS2 dataset (no readable md.idx", "a directory without md.idx");
    read_ghost = 1;
    expect_error(read_file(path, &s, IOK_API_BLOCKING, &bad, &checked), IOK_EIO,
                 "variable ghost is not in the dataset", "a variable no rank wrote");
    read_ghost = 0;
    snprintf(path, sizeof path, "%s/hole.adios2", dir);
    CHECK(write_file(path, &s, IOK_API_BLOCKING, 1) == IOK_OK, "hole write: %s", iok_errmsg());
    expect_error(read_file(path, &s, IOK_API_BLOCKING, &bad, &checked), IOK_EIO,
                 "covered by the writers' blocks", "a hole in the last record");

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && dir[0])
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); /* the test made all of it */
    iok_schema_free(&s);
    iok_schema_free(&more);
    iok_schema_free(&other);
    free(bopts);
    int failed = check_failures, any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int rc = check_summary("test_adios2");
    MPI_Finalize();
    return any ? 1 : rc;
}
