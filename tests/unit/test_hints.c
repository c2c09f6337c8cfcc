/* SPDX-License-Identifier: BSD-3-Clause */
/* The hints file parser (ROMIO_HINTS' format: "key value" a line, '#'
 * comments) and the run's info built from --hints-file, --hints and
 * --mpiio-hints: later sources win, a bad line names file:line. */
#include <string.h>

#include "check.h"
#include "core/run/run.h"
#include "iokernels/error.h"

static const char *
get(MPI_Info info, const char *key, char *buf)
{
    int flag = 0;
    if (info != MPI_INFO_NULL)
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, buf, &flag);
    return flag ? buf : NULL;
}

static void
test_file(void)
{
    MPI_Info info = MPI_INFO_NULL;
    char v[MPI_MAX_INFO_VAL + 1];
    const char *text = "# a comment\n\n  cb_nodes   4  # trailing comment\n"
                       "romio_cb_write\tenable\ncb_nodes 2\nstriping_unit 1048576";
    CHECK(iok_hints_parse_file(text, "h.txt", &info) == IOK_OK, "%s", iok_errmsg());
    CHECK(info != MPI_INFO_NULL, "no info built");
    int n = 0;
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 3, "%d keys", n);
    CHECK(get(info, "cb_nodes", v) && !strcmp(v, "2"), "the later line wins");
    CHECK(get(info, "romio_cb_write", v) && !strcmp(v, "enable"), "tab separated");
    CHECK(get(info, "striping_unit", v) && !strcmp(v, "1048576"), "no final newline");
    MPI_Info_free(&info);

    info = MPI_INFO_NULL;
    CHECK(iok_hints_parse_file("# only comments\n\n", "h.txt", &info) == IOK_OK, "empty");
    CHECK(info == MPI_INFO_NULL, "an empty file builds no info");

    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"cb_nodes 1\ncb_buffer_size\n", "h.txt:2: expected 'key value'"},
        {"a b c\n", "h.txt:1: expected 'key value'"},
        {"\n\n# x\nkey value more # c\n", "h.txt:4: expected 'key value'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        iok_error_clear();
        info = MPI_INFO_NULL;
        int rc = iok_hints_parse_file(bad[i].text, "h.txt", &info);
        CHECK(rc == IOK_EUSAGE, "bad %zu: rc %d", i, rc);
        CHECK(strstr(iok_errmsg(), bad[i].msg), "bad %zu: '%s'", i, iok_errmsg());
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    }
}

static void
test_build(void)
{
    struct iok_core_opts o = {
        .json = "", .export_replay = "", .hints = "", .mpiio_hints = "", .hints_file = ""};
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    CHECK(iok_hints_build(&o, NULL, "mpiio", MPI_COMM_WORLD, &info) == IOK_OK &&
              info == MPI_INFO_NULL,
          "no hints: MPI_INFO_NULL");
    o.hints = "cb_nodes=2,romio_cb_read=disable";
    o.mpiio_hints = "cb_nodes=3";
    CHECK(iok_hints_build(&o, NULL, "mpiio", MPI_COMM_WORLD, &info) == IOK_OK, "%s", iok_errmsg());
    CHECK(get(info, "cb_nodes", v) && !strcmp(v, "3"), "--mpiio-hints after --hints");
    CHECK(get(info, "romio_cb_read", v) && !strcmp(v, "disable"), "both kept");
    MPI_Info_free(&info);

    iok_error_clear();
    o.hints = "cb_nodes=2,oops";
    CHECK(iok_hints_build(&o, NULL, "mpiio", MPI_COMM_WORLD, &info) == IOK_EUSAGE, "not key=value");
    CHECK(strstr(iok_errmsg(), "--hints: 'oops' is not key=value"), "%s", iok_errmsg());
    CHECK(info == MPI_INFO_NULL, "nothing kept after an error");
    iok_error_clear();

    /* the original's hints: first, for their backend only, --hints wins */
    static const struct iok_kernel_hint orig[] = {
        {NULL, "romio_cb_write", "enable"},
        {"pnetcdf", "nc_var_align_size", "1"},
        {NULL, NULL, NULL},
    };
    o.hints = "romio_cb_write=disable";
    o.mpiio_hints = "";
    CHECK(iok_hints_build(&o, orig, "pnetcdf", MPI_COMM_WORLD, &info) == IOK_OK, "%s",
          iok_errmsg());
    CHECK(get(info, "romio_cb_write", v) && !strcmp(v, "disable"), "--hints over the original's");
    CHECK(get(info, "nc_var_align_size", v) && !strcmp(v, "1"), "pnetcdf's own");
    MPI_Info_free(&info);
    o.hints = "";
    CHECK(iok_hints_build(&o, orig, "hdf5", MPI_COMM_WORLD, &info) == IOK_OK, "%s", iok_errmsg());
    CHECK(get(info, "romio_cb_write", v) && !get(info, "nc_var_align_size", v),
          "another backend: the hints for every backend only");
    MPI_Info_free(&info);
    o.no_original_hints = 1;
    CHECK(iok_hints_build(&o, orig, "pnetcdf", MPI_COMM_WORLD, &info) == IOK_OK &&
              info == MPI_INFO_NULL,
          "--no-original-hints: none");
}

int
main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_file();
    test_build();
    int rc = check_summary("test_hints");
    MPI_Finalize();
    return rc;
}
