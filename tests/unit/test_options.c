/* SPDX-License-Identifier: BSD-3-Clause */
/* The option parser (command line, key = value files) and BTIO's reader of
 * inputbt.data: the seed's file is accepted, malformed ones are rejected
 * with a message naming the file and line. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "iokernels/error.h"
#include "iokernels/kernel.h"
#include "iokernels/options.h"
#include "core/core.h"

struct t_opts {
    int flag, n;
    int64_t big;
    int g[3];
    char mode[IOK_OPT_STRLEN], name[IOK_OPT_STRLEN];
};

static const struct iok_option t_table[] = {
    {"flag", 'f', IOK_OPT_BOOL, offsetof(struct t_opts, flag), NULL, "a flag"},
    {"n", 0, IOK_OPT_INT, offsetof(struct t_opts, n), "7", "an int"},
    {"big", 0, IOK_OPT_INT64, offsetof(struct t_opts, big), "1k", "a size"},
    {"grid", 'g', IOK_OPT_INT3, offsetof(struct t_opts, g), "1,2,3", "three ints"},
    {"mode", 0, IOK_OPT_CHOICE, offsetof(struct t_opts, mode), "write", "mode", "write|read|both"},
    {"name", 0, IOK_OPT_STRING, offsetof(struct t_opts, name), NULL, "text"},
    {NULL}};

static int
split_apply(struct iok_optset *set, int argc, char **argv)
{
    struct iok_cmdline cl;
    iok_error_clear();
    int rc = iok_cmdline_split(argc, argv, set, 1, &cl);
    if (rc == IOK_OK)
        rc = iok_cmdline_apply(&cl, set, 1);
    iok_cmdline_free(&cl);
    return rc;
}

static void
test_cmdline(void)
{
    struct t_opts o;
    struct iok_optset set = {"t", t_table, &o};
    CHECK(iok_opts_defaults(&set) == IOK_OK, "defaults");
    CHECK(o.n == 7 && o.big == 1024 && o.g[2] == 3 && !strcmp(o.mode, "write"), "defaults");

    char *a1[] = {"--n=5", "--big", "2m", "--flag", "-g", "4 5 6", "--mode=read", "in.txt"};
    CHECK(split_apply(&set, 8, a1) == IOK_OK, "valid line: %s", iok_errmsg());
    CHECK(o.n == 5 && o.big == 2 << 20 && o.flag == 1, "values %d %lld", o.n, (long long)o.big);
    CHECK(o.g[0] == 4 && o.g[1] == 5 && o.g[2] == 6 && !strcmp(o.mode, "read"), "int3/choice");

    char *a2[] = {"--nope=1"};
    CHECK(split_apply(&set, 1, a2) == IOK_EUSAGE, "unknown option");
    CHECK(strstr(iok_errmsg(), "unknown option '--nope=1'"), "message: %s", iok_errmsg());
    char *a3[] = {"--n", "x12"};
    CHECK(split_apply(&set, 2, a3) == IOK_EUSAGE, "bad int");
    CHECK(strstr(iok_errmsg(), "--n takes an integer, not 'x12'"), "message: %s", iok_errmsg());
    char *a4[] = {"--mode", "append"};
    CHECK(split_apply(&set, 2, a4) == IOK_EUSAGE, "bad choice");
    CHECK(strstr(iok_errmsg(), "one of write|read|both"), "message: %s", iok_errmsg());
    char *a5[] = {"--grid=1,2"};
    CHECK(split_apply(&set, 1, a5) == IOK_EUSAGE, "two ints for int3");
    char *a6[] = {"--n"};
    CHECK(split_apply(&set, 1, a6) == IOK_EUSAGE, "missing value");
    CHECK(strstr(iok_errmsg(), "needs a value"), "message: %s", iok_errmsg());
    char *a7[] = {"--flag=maybe"};
    CHECK(split_apply(&set, 1, a7) == IOK_EUSAGE, "bad bool");

    iok_error_clear();
    CHECK(iok_keyvalue_apply("# comment\n n = 9  # trailing\n\nname = abc\n", "in.txt", &set, 1) ==
              IOK_OK,
          "key=value file: %s", iok_errmsg());
    CHECK(o.n == 9 && !strcmp(o.name, "abc"), "key=value values");
    iok_error_clear();
    CHECK(iok_keyvalue_apply("n = 1\nbogus = 2\n", "in.txt", &set, 1) == IOK_EUSAGE, "unknown");
    CHECK(strstr(iok_errmsg(), "in.txt line 2: unknown key 'bogus'"), "msg: %s", iok_errmsg());
    iok_error_clear();
    CHECK(iok_keyvalue_apply("n =\n", "in.txt", &set, 1) == IOK_EUSAGE, "missing value");
    CHECK(strstr(iok_errmsg(), "in.txt line 1: key 'n' has no value"), "msg: %s", iok_errmsg());
}

/* BTIO's inputbt.data reader, with a stand-in for the core's "mode". */
struct core_stub {
    char mode[IOK_OPT_STRLEN];
};
static const struct iok_option stub_table[] = {
    {"mode", 0, IOK_OPT_CHOICE, offsetof(struct core_stub, mode), "write", "", "write|read|both"},
    {NULL}};

static int
read_bt(const char *text, void *kopts, struct core_stub *core)
{
    const struct iok_kernel *k = iok_kernel_find("btio");
    struct iok_optset sets[2] = {{"core", stub_table, core}, {"btio", k->options, kopts}};
    iok_opts_defaults(&sets[0]);
    iok_opts_defaults(&sets[1]);
    iok_error_clear();
    return k->read_input(text, "inputbt.data", sets, 2);
}

static void
test_btio_input(void)
{
    const struct iok_kernel *k = iok_kernel_find("btio");
    CHECK(k != NULL, "btio registered");
    if (!k)
        return;
    void *kopts = calloc(1, k->opts_size);
    struct core_stub core;
    struct iok_optset set = {"btio", k->options, kopts};
    char *seed = check_slurp(IOK_TEST_DATA "/btio/inputbt.data");
    CHECK(seed != NULL, "shared inputbt.data readable");
    if (seed) {
        CHECK(read_bt(seed, kopts, &core) == IOK_OK, "seed file: %s", iok_errmsg());
        char v[64];
        const struct iok_option *o;
        o = iok_opts_find(&set, 1, "method", NULL);
        iok_opts_format(&set, o, v, sizeof v);
        CHECK(!strcmp(v, "3"), "method %s", v);
        o = iok_opts_find(&set, 1, "dumps", NULL);
        iok_opts_format(&set, o, v, sizeof v);
        CHECK(!strcmp(v, "5"), "dumps %s", v);
        o = iok_opts_find(&set, 1, "grid", NULL);
        iok_opts_format(&set, o, v, sizeof v);
        CHECK(!strcmp(v, "16,16,16"), "grid %s", v);
        o = iok_opts_find(&set, 1, "dir", NULL);
        iok_opts_format(&set, o, v, sizeof v);
        CHECK(!strcmp(v, "./output"), "dir %s", v);
        CHECK(!strcmp(core.mode, "write"), "mode %s", core.mode);
        free(seed);
    }
    CHECK(read_bt("r\n0\n2\n8 9 10\n/tmp\n", kopts, &core) == IOK_OK, "minimal file");
    CHECK(!strcmp(core.mode, "read"), "r -> read");

    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"x\n3\n5\n16 16 16\n.\n", "inputbt.data line 1: expected the I/O mode: w or r"},
        {"w\nthree\n5\n16 16 16\n.\n", "inputbt.data line 2: --method takes an integer"},
        {"w\n3\n5\n16 16\n.\n", "inputbt.data line 4: expected three grid sizes X Y Z"},
        {"w\n3\n5\n16 16 16 16\n.\n", "inputbt.data line 4: expected three grid sizes"},
        {"w\n3\n5\n16 16 16\n", "inputbt.data line 5: missing the output directory"},
        {"w\n3\n", "inputbt.data line 3: missing the number of writes/reads"},
        {"", "inputbt.data line 1: missing the I/O mode"},
        {"w 3\n3\n5\n16 16 16\n.\n", "inputbt.data line 1: expected the I/O mode"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = read_bt(bad[i].text, kopts, &core);
        CHECK(rc == IOK_EUSAGE, "bad file %zu accepted", i);
        CHECK(strstr(iok_errmsg(), bad[i].msg), "bad file %zu: message '%s', want '%s'", i,
              iok_errmsg(), bad[i].msg);
    }
    free(kopts);
}

/* Every option table of every kernel and backend has valid defaults and
 * unique names across the tables that share a command line. */
static void
test_tables(void)
{
    for (int i = 0; i < iok_backend_count(); i++) {
        const struct iok_backend *b = iok_backend_at(i);
        CHECK(b->abi == IOK_BACKEND_ABI, "backend %s abi", b->name);
        CHECK(b->create && b->define && b->open && b->xfer && b->close,
              "backend %s has every entry point", b->name);
        if (!b->options)
            continue;
        void *o = calloc(1, b->opts_size);
        struct iok_optset set = {b->name, b->options, o};
        CHECK(iok_opts_defaults(&set) == IOK_OK, "backend %s defaults: %s", b->name, iok_errmsg());
        for (const struct iok_option *x = b->options; x->name; x++)
            CHECK(!strncmp(x->name, b->name, strlen(b->name)), "backend option %s unprefixed",
                  x->name);
        free(o);
    }
    for (int i = 0; i < iok_kernel_count(); i++) {
        const struct iok_kernel *k = iok_kernel_at(i);
        void *o = calloc(1, k->opts_size);
        struct iok_optset set = {k->name, k->options, o};
        CHECK(iok_opts_defaults(&set) == IOK_OK, "kernel %s defaults: %s", k->name, iok_errmsg());
        free(o);
    }
}

/* The tables that share one command line (core, one kernel, every backend)
 * use each long and each short name once: the parser takes the first match,
 * so a clash would make an option unreachable. */
static void
test_names_unique(void)
{
    for (int k = 0; k < iok_kernel_count(); k++) {
        const struct iok_option *tables[64];
        int nt = 0;
        tables[nt++] = iok_core_options;
        tables[nt++] = iok_kernel_at(k)->options;
        for (int b = 0; b < iok_backend_count() && nt < 64; b++)
            tables[nt++] = iok_backend_at(b)->options;
        for (int t = 0; t < nt; t++)
            for (const struct iok_option *x = tables[t]; x && x->name; x++)
                for (int u = t; u < nt; u++)
                    for (const struct iok_option *y = u == t ? x + 1 : tables[u]; y && y->name;
                         y++) {
                        CHECK(strcmp(x->name, y->name) != 0, "kernel %s: --%s declared twice",
                              iok_kernel_at(k)->name, x->name);
                        CHECK(!x->short_name || x->short_name != y->short_name,
                              "kernel %s: -%c is both --%s and --%s", iok_kernel_at(k)->name,
                              x->short_name, x->name, y->name);
                    }
    }
}

int
main(void)
{
    test_names_unique();
    test_cmdline();
    test_btio_input();
    test_tables();
    return check_summary("test_options");
}
