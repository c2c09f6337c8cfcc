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
#include "core/cmd/cmd.h"

struct t_opts {
    int flag, n;
    int64_t big;
    int g[3];
    int mode, pick; /* CHOICE: the index of the value among the choices */
    char name[IOK_OPT_STRLEN], tag[8];
};

static const struct iok_option t_table[] = {
    {"flag", 'f', IOK_OPT_BOOL, offsetof(struct t_opts, flag), NULL, "a flag"},
    {"n", 0, IOK_OPT_INT, offsetof(struct t_opts, n), "7", "an int"},
    {"big", 0, IOK_OPT_INT64, offsetof(struct t_opts, big), "1k", "a size"},
    {"grid", 'g', IOK_OPT_INT3, offsetof(struct t_opts, g), "1,2,3", "three ints"},
    {"mode", 0, IOK_OPT_CHOICE, offsetof(struct t_opts, mode), "write", "mode", "write|read|both"},
    {"name", 0, IOK_OPT_STRING, offsetof(struct t_opts, name), NULL, "text"},
    {"pick", 0, IOK_OPT_CHOICE, offsetof(struct t_opts, pick), NULL, "no default", "a|b"},
    {"tag", 0, IOK_OPT_STRING, offsetof(struct t_opts, tag), NULL, "short text",
     .size = IOK_OPT_SIZEOF(struct t_opts, tag)},
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

/* The core's enums in the order of their options' choices, and every
 * kernel's default barriers one of them. */
static void
test_core_choices(void)
{
    CHECK(iok_choice_index(IOK_MODE_CHOICES, "write") == IOK_MODE_WRITE &&
              iok_choice_index(IOK_MODE_CHOICES, "read") == IOK_MODE_READ &&
              iok_choice_index(IOK_MODE_CHOICES, "both") == IOK_MODE_BOTH,
          "--mode");
    CHECK(iok_choice_index(IOK_API_CHOICES, "blocking") == IOK_API_BLOCKING &&
              iok_choice_index(IOK_API_CHOICES, "nonblocking") == IOK_API_NONBLOCKING &&
              iok_choice_index(IOK_API_CHOICES, "varn") == IOK_API_VARN,
          "--api");
    CHECK(iok_choice_index(IOK_VALUES_CHOICES, "fresh") == IOK_VALUES_FRESH &&
              iok_choice_index(IOK_VALUES_CHOICES, "once") == IOK_VALUES_ONCE,
          "--values");
    CHECK(iok_choice_index(IOK_BARRIERS_CHOICES, "phase") == IOK_BARRIERS_PHASE &&
              iok_choice_index(IOK_BARRIERS_CHOICES, "pass") == IOK_BARRIERS_PASS &&
              iok_choice_index(IOK_BARRIERS_CHOICES, "none") == IOK_BARRIERS_NONE,
          "--barriers");
    for (int i = 0; i < iok_kernel_count(); i++) {
        const struct iok_kernel *k = iok_kernel_at(i);
        CHECK(!k->default_barriers ||
                  iok_choice_index(IOK_BARRIERS_CHOICES, k->default_barriers) >= 0,
              "%s: default barriers '%s'", k->name, k->default_barriers);
    }
}

static void
test_cmdline(void)
{
    struct t_opts o;
    struct iok_optset set = {"t", t_table, &o};
    CHECK(iok_opts_defaults(&set) == IOK_OK, "defaults");
    CHECK(o.n == 7 && o.big == 1024 && o.g[2] == 3 && o.mode == 0, "defaults");
    CHECK(o.pick == IOK_CHOICE_UNSET, "a choice with no default: unset");
    char text[64];
    iok_opts_format(&set, iok_opts_find(&set, 1, "pick", NULL), text, sizeof text);
    CHECK(!text[0], "unset formats as '': '%s'", text);
    CHECK(!strcmp(iok_choice_name("write|read|both", 2).s, "both") &&
              !iok_choice_name("write|read|both", 3).s[0] &&
              !iok_choice_name("write|read|both", IOK_CHOICE_UNSET).s[0],
          "choice names");
    CHECK(iok_choice_index("write|read|both", "read") == 1 &&
              iok_choice_index("write|read|both", "rea") < 0,
          "choice indices");

    char *a1[] = {"--n=5", "--big", "2m", "--flag", "-g", "4 5 6", "--mode=read", "in.txt"};
    CHECK(split_apply(&set, 8, a1) == IOK_OK, "valid line: %s", iok_errmsg());
    CHECK(o.n == 5 && o.big == 2 << 20 && o.flag == 1, "values %d %lld", o.n, (long long)o.big);
    CHECK(o.g[0] == 4 && o.g[1] == 5 && o.g[2] == 6 && o.mode == 1, "int3/choice");
    iok_opts_format(&set, iok_opts_find(&set, 1, "mode", NULL), text, sizeof text);
    CHECK(!strcmp(text, "read"), "a choice formats as its name: %s", text);
    char *a8[] = {"--tag", "1234567"};
    CHECK(split_apply(&set, 2, a8) == IOK_OK && !strcmp(o.tag, "1234567"), "fits its field");
    char *a9[] = {"--tag", "12345678"};
    CHECK(split_apply(&set, 2, a9) == IOK_EUSAGE, "longer than its field");
    CHECK(strstr(iok_errmsg(), "is 8 characters, more than the 7 an option holds"), "msg: %s",
          iok_errmsg());

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
    enum iok_mode mode;
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

/* The option `name` of set, as --help would print its value, is `want`. */
static void
check_value(const struct iok_optset *set, const char *name, const char *want)
{
    char v[64] = "";
    const struct iok_option *o = iok_opts_find(set, 1, name, NULL);
    CHECK(o != NULL, "option %s found", name);
    if (o)
        iok_opts_format(set, o, v, sizeof v);
    CHECK(!strcmp(v, want), "%s %s, not %s", name, v, want);
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
        check_value(&set, "method", "3");
        check_value(&set, "dumps", "5");
        check_value(&set, "grid", "16,16,16");
        check_value(&set, "dir", "./output");
        CHECK(core.mode == IOK_MODE_WRITE, "mode %d", core.mode);
        free(seed);
    }
    CHECK(read_bt("r\n0\n2\n8 9 10\n/tmp\n", kopts, &core) == IOK_OK, "minimal file");
    CHECK(core.mode == IOK_MODE_READ, "r -> read");

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

/* A table's range is what the parser enforces: the bound is taken, one
 * past it refused with one line naming the option and the range. */
struct r_opts {
    int n, g[3];
    double x;
};
static const struct iok_option r_table[] = {
    {"n", 'n', IOK_OPT_INT, offsetof(struct r_opts, n), "1", "an int", .min = "1", .max = "16"},
    {"g", 0, IOK_OPT_INT3, offsetof(struct r_opts, g), "1,1,1", "three", .min = "1"},
    {"x", 0, IOK_OPT_DOUBLE, offsetof(struct r_opts, x), "0", "a number", .min = "0", .max = "0.5"},
    {NULL}};

static void
test_ranges(void)
{
    struct r_opts o;
    struct iok_optset set = {"r", r_table, &o};
    CHECK(iok_opts_defaults(&set) == IOK_OK, "defaults in range");
    const struct {
        const char *key, *value;
        int ok;
        const char *msg;
    } cases[] = {
        {"n", "1", 1, NULL},
        {"n", "16", 1, NULL},
        {"n", "0", 0, "here: --n (-n) takes 1 to 16, not '0'"},
        {"n", "17", 0, "here: --n (-n) takes 1 to 16, not '17'"},
        {"g", "1,2,3", 1, NULL},
        {"g", "1,0,3", 0, "here: --g takes three integers, each at least 1, not '1,0,3'"},
        {"x", "0.5", 1, NULL},
        {"x", "0.51", 0, "here: --x takes 0 to 0.5, not '0.51'"},
        {"x", "-1e-9", 0, "here: --x takes 0 to 0.5, not '-1e-9'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        iok_error_clear();
        const struct iok_option *x = iok_opts_find(&set, 1, cases[i].key, NULL);
        int rc = iok_opts_set(&set, x, cases[i].value, "here");
        CHECK((rc == IOK_OK) == cases[i].ok, "--%s %s: rc %d", cases[i].key, cases[i].value, rc);
        if (!cases[i].ok)
            CHECK(!strcmp(iok_errmsg(), cases[i].msg), "--%s %s: message '%s'", cases[i].key,
                  cases[i].value, iok_errmsg());
    }
    char help[512];
    iok_opt_help_text(&r_table[0], help, sizeof help);
    CHECK(!strcmp(help, "an int (default: 1; 1 to 16)"), "help shows the range: %s", help);
}

/* Every bound of every table reads as a number of the option's type, on a
 * numeric option, min <= max: a table with a bound that bounds nothing
 * fails here (the parser would ignore it). */
static void
check_bounds(const char *owner, const struct iok_option *t)
{
    for (const struct iok_option *x = t; x && x->name; x++) {
        if (!x->min && !x->max)
            continue;
        int num = x->type == IOK_OPT_INT || x->type == IOK_OPT_INT64 || x->type == IOK_OPT_INT3 ||
                  x->type == IOK_OPT_DOUBLE;
        CHECK(num, "%s --%s: a range on an option that is no number", owner, x->name);
        double b[2] = {-1e300, 1e300};
        const char *txt[2] = {x->min, x->max};
        for (int k = 0; k < 2; k++) {
            if (!txt[k])
                continue;
            char *end;
            int64_t v;
            if (x->type == IOK_OPT_DOUBLE) {
                b[k] = strtod(txt[k], &end);
                CHECK(end != txt[k] && !*end, "%s --%s: bound '%s' is no number", owner, x->name,
                      txt[k]);
            } else {
                CHECK(iok_parse_int64(txt[k], &v, 1) == 0, "%s --%s: bound '%s' is no integer",
                      owner, x->name, txt[k]);
                b[k] = (double)v;
            }
        }
        CHECK(b[0] <= b[1], "%s --%s: min above max", owner, x->name);
    }
}

static void
test_bounds(void)
{
    check_bounds("core", iok_core_options);
    for (int i = 0; i < iok_kernel_count(); i++)
        check_bounds(iok_kernel_at(i)->name, iok_kernel_at(i)->options);
    for (int i = 0; i < iok_backend_count(); i++)
        if (iok_backend_at(i))
            check_bounds(iok_backend_at(i)->name, iok_backend_at(i)->options);
    static const struct iok_option planted[] = {
        {"n", 0, IOK_OPT_INT, 0, NULL, "planted: min is no number", .min = "one"}, {NULL}};
    int failed = check_failures, count = check_count;
    fprintf(stderr, "(a planted bad bound follows: its FAILED lines are expected)\n");
    check_bounds("planted", planted);
    int caught = check_failures > failed;
    check_failures = failed; /* the planted failure was the point */
    check_count = count;
    CHECK(caught, "a bound that is no number is caught");
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
    test_core_choices();
    test_cmdline();
    test_btio_input();
    test_tables();
    test_ranges();
    test_bounds();
    return check_summary("test_options");
}
