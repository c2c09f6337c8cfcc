/* SPDX-License-Identifier: BSD-3-Clause */
/* Schema groups and compound types: bad ones are refused; the HDF5 backend
 * writes a compound variable inside a group and reads back the same values
 * (one rank, a temporary directory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "check.h"
#include "iokernels/backend.h"
#include "iokernels/error.h"
#include "iokernels/request.h"
#include "iokernels/schema.h"

static const char *const fields[6] = {"lo_i", "lo_j", "lo_k", "hi_i", "hi_j", "hi_k"};

static void
test_validation(struct iok_schema *s, int *boxes_var)
{
    iok_schema_init(s);
    CHECK(iok_schema_add_group(s, "level_0") == 0, "group");
    CHECK(iok_schema_add_group(s, "level_0/data_attributes") == 1, "subgroup after its parent");
    CHECK(iok_schema_add_group(s, "level_1/data_attributes") < 0, "parent not listed");
    CHECK(iok_schema_add_group(s, "level_0") < 0, "duplicate");
    CHECK(iok_schema_add_group(s, "/abs") < 0 && iok_schema_add_group(s, "a//b") < 0 &&
              iok_schema_add_group(s, "") < 0,
          "malformed paths");
    int c = iok_schema_add_compound(s, IOK_INT, 6, fields);
    CHECK(c == 0, "compound");
    int n = iok_schema_add_dim(s, "n", 3, 0), six = iok_schema_add_dim(s, "six", 6, 0);
    int five = iok_schema_add_dim(s, "five", 5, 0);
    int d6[2] = {n, six}, d5[2] = {n, five};
    *boxes_var = iok_schema_add_var(s, "level_0/boxes", IOK_INT, 2, d6);
    CHECK(*boxes_var >= 0, "variable in a group");
    CHECK(iok_schema_add_var(s, "level_9/boxes", IOK_INT, 2, d6) < 0, "variable in no group");
    int v5 = iok_schema_add_var(s, "five", IOK_INT, 2, d5);
    int vd = iok_schema_add_var(s, "dbl", IOK_DOUBLE, 2, d6);
    CHECK(iok_schema_set_var_compound(s, *boxes_var, c) == 0, "compound on N x 6 ints");
    CHECK(iok_schema_set_var_compound(s, v5, c) < 0, "last dimension is not 6");
    CHECK(iok_schema_set_var_compound(s, vd, c) < 0, "base type differs");
    int dom[6] = {0, 0, 0, 7, 7, 7};
    int a = iok_schema_add_attr(s, IOK_GROUP(0), "prob_domain", IOK_INT, 6, dom);
    CHECK(a >= 0 && iok_schema_set_attr_compound(s, a, c) == 0, "compound attribute on a group");
    int a5 = iok_schema_add_attr(s, IOK_GROUP(1), "five", IOK_INT, 5, dom);
    CHECK(a5 >= 0 && iok_schema_set_attr_compound(s, a5, c) < 0, "5 values are not a box");
    CHECK(iok_schema_add_attr(s, IOK_GROUP(2), "x", IOK_INT, 1, dom) < 0, "no group 2");
    CHECK(iok_attr_group(IOK_GROUP(1)) == 1 && iok_attr_group(IOK_GLOBAL) == -1 &&
              iok_attr_group(0) == -1,
          "owners");
    s->scalar_attrs = 1;
}

/* Writes boxes (3 x 6 ints) through the backend and reads them back. */
static void
test_hdf5_round_trip(const struct iok_schema *s, int var)
{
    const struct iok_backend *be = iok_backend_find("hdf5");
    if (!be) {
        printf("hdf5 backend not built: round trip skipped\n");
        return;
    }
    CHECK((be->caps & IOK_CAP_GROUPS) && (be->caps & IOK_CAP_COMPOUND), "hdf5 caps");
    char dir[] = "/tmp/iok_groups_XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/t.h5", dir);
    struct iok_backend_params p = {MPI_COMM_WORLD, 1, IOK_API_BLOCKING, NULL};
    int want[18];
    for (int i = 0; i < 18; i++)
        want[i] = 100 + i;
    for (int pass = 0; pass < 2; pass++) {
        void *h = NULL;
        struct iok_reqlist r;
        iok_reqlist_init(&r);
        struct iok_access *a = iok_reqlist_add(&r, s, var, 2);
        int64_t st[4] = {0, 0, 1, 0}, ct[4] = {1, 6, 2, 6};
        memcpy(a->starts, st, sizeof st);
        memcpy(a->counts, ct, sizeof ct);
        iok_reqlist_finish(&r, s);
        int rc = pass == 0 ? be->create(&h, path, s, &p) : be->open(&h, path, s, &p);
        CHECK(rc == IOK_OK, "%s: %s", pass ? "open" : "create", iok_errmsg());
        if (rc != IOK_OK)
            break;
        if (pass == 0) {
            memcpy(r.acc[0].buf, want, sizeof want);
            CHECK(be->define(h) == IOK_OK, "define: %s", iok_errmsg());
            CHECK(be->xfer(h, IOK_DIR_WRITE, &r) == IOK_OK, "put: %s", iok_errmsg());
        } else {
            CHECK(be->xfer(h, IOK_DIR_READ, &r) == IOK_OK, "get: %s", iok_errmsg());
            CHECK(!memcmp(r.acc[0].buf, want, sizeof want), "values read back differ");
        }
        CHECK(be->close(h) == IOK_OK, "close: %s", iok_errmsg());
        iok_reqlist_free(&r);
    }
    /* a subarray of some fields only is refused */
    void *h = NULL;
    struct iok_reqlist r;
    iok_reqlist_init(&r);
    struct iok_access *a = iok_reqlist_add(&r, s, var, 1);
    a->counts[0] = 1;
    a->counts[1] = 3;
    iok_reqlist_finish(&r, s);
    iok_error_clear();
    if (be->open(&h, path, s, &p) == IOK_OK) {
        /* refused by the backend's untimed check, before any get */
        CHECK(be->prepare && be->prepare(h, &r) == IOK_EIO, "part of a compound");
        CHECK(strstr(iok_errmsg(), "only all 6 at once") != NULL, "message: %s", iok_errmsg());
        be->close(h);
    }
    iok_reqlist_free(&r);
    unlink(path);
    rmdir(dir);
}

/* The backends that compress through a parallel library refuse a deflate
 * level outside 0-9, and compression without collective transfers, before
 * any file exists (iok_backend_check_deflate). */
static void
test_deflate_refused(void)
{
    static const char *const names[] = {"hdf5", "netcdf4"}, *const libs[] = {"HDF5", "NetCDF-4"};
    for (int b = 0; b < 2; b++) {
        const struct iok_backend *be = iok_backend_find(names[b]);
        if (!be) {
            printf("%s backend not built: deflate checks skipped\n", names[b]);
            continue;
        }
        struct iok_schema s;
        iok_schema_init(&s);
        int d = iok_schema_add_dim(&s, "n", 4, 0);
        int v = iok_schema_add_var(&s, "x", IOK_DOUBLE, 1, &d);
        char dir[] = "/tmp/iok_deflate_XXXXXX", path[64];
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
        snprintf(path, sizeof path, "%s/never.h5", dir);
        for (int c = 0; c < 2; c++) {
            struct iok_backend_params p = {MPI_COMM_WORLD, c, IOK_API_BLOCKING, NULL};
            void *h = NULL;
            char want[160];
            s.vars[v].deflate = c ? 12 : 1; /* independent: any level; collective: 12 */
            if (c)
                snprintf(want, sizeof want, "variable x asks for deflate level 12: use 0-9");
            else
                snprintf(want, sizeof want,
                         "parallel %s writes compressed data only with collective transfers",
                         libs[b]);
            iok_error_clear();
            CHECK(be->create(&h, path, &s, &p) == IOK_EUSAGE && !h, "%s: deflate %d accepted",
                  names[b], s.vars[v].deflate);
            CHECK(strstr(iok_errmsg(), want) != NULL, "%s: message %s", names[b], iok_errmsg());
            CHECK(access(path, F_OK) != 0, "%s created %s", names[b], path);
            unlink(path); /* only when the check failed */
        }
        rmdir(dir);
        iok_schema_free(&s);
    }
}

int
main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct iok_schema s;
    int var = -1;
    test_validation(&s, &var);
    if (var >= 0)
        test_hdf5_round_trip(&s, var);
    iok_schema_free(&s);
    test_deflate_refused();
    int rc = check_summary("test_schema_groups");
    MPI_Finalize();
    return rc;
}
