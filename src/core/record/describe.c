/* SPDX-License-Identifier: BSD-3-Clause */
/* The binary describes itself as JSON, built from the same tables as the
 * text: `iokernels --list --json` (kernels, backends with versions and
 * capabilities) and `iokernels KERNEL --help --json` (every option with its
 * type, default, choices, help and group). Tools read these instead of
 * parsing help text. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/lib/lib.h"
#include "core/record/record.h"
#include "iokernels/error.h"
#include "iokernels/input.h"

const struct iok_cap_word iok_cap_words[] = {{IOK_CAP_COLLECTIVE, "collective"},
                                             {IOK_CAP_INDEPENDENT, "independent"},
                                             {IOK_CAP_NONBLOCKING, "nonblocking"},
                                             {IOK_CAP_VARN, "varn"},
                                             {IOK_CAP_ATTRS, "attributes"},
                                             {IOK_CAP_NOIO, "noio"},
                                             {IOK_CAP_CHUNKS, "chunks"},
                                             {IOK_CAP_FILL, "fill"},
                                             {IOK_CAP_DEFLATE, "deflate"},
                                             {IOK_CAP_GROUPS, "groups"},
                                             {IOK_CAP_COMPOUND, "compound"},
                                             {IOK_CAP_HINTS, "hints"},
                                             {IOK_CAP_CALL_LEVEL, "call-level"},
                                             {IOK_CAP_READWRITE, "read-write"},
                                             {0, NULL}};

static void
dump(json_t *j, FILE *out)
{
    json_dumpf(j, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(j);
}

static json_t *
kernel_flags(unsigned flags)
{
    json_t *a = json_array();
    if (flags & IOK_KERNEL_SHIFTABLE)
        json_array_append_new(a, json_string("shiftable"));
    if (flags & IOK_KERNEL_TOOL)
        json_array_append_new(a, json_string("tool"));
    return a;
}

static json_t *
kernel_input(const struct iok_kernel *k)
{
    /* a kernel that reads an input takes it as the positional argument (main.c) */
    return json_pack("{s:b, s:o, s:b}", "positional", k->read_input || k->input_by_path, "default",
                     k->default_input ? json_string(k->default_input) : json_null(),
                     "read_by_ranks", k->input_by_path);
}

void
iok_describe_list(FILE *out)
{
    json_t *kernels = json_array(), *backends = json_array();
    for (int i = 0; i < iok_kernel_count(); i++) {
        const struct iok_kernel *k = iok_kernel_at(i);
        json_array_append_new(kernels, json_pack("{s:s, s:s, s:o, s:o}", "name", k->name, "summary",
                                                 k->summary, "flags", kernel_flags(k->flags),
                                                 "input", kernel_input(k)));
    }
    for (int i = 0; i < iok_backend_count(); i++) {
        const struct iok_backend *b = iok_backend_at(i);
        if (!b) { /* its module did not load */
            json_array_append_new(backends, json_pack("{s:s, s:s}", "name", iok_backend_name_at(i),
                                                      "error", iok_backend_error_at(i)));
            continue;
        }
        json_t *caps = json_array();
        for (const struct iok_cap_word *w = iok_cap_words; w->word; w++)
            if (b->caps & w->cap)
                json_array_append_new(caps, json_string(w->word));
        json_array_append_new(backends, json_pack("{s:s, s:s, s:s, s:s, s:o}", "name", b->name,
                                                  "summary", b->summary, "version", b->version(),
                                                  "extension", b->ext ? b->ext : "", "caps", caps));
    }
    dump(json_pack("{s:s, s:s, s:o, s:o, s:[{s:s, s:s}]}", "version", IOK_VERSION, "data",
                   iok_data_root(), "kernels", kernels, "backends", backends, "tools", "name",
                   "ceiling", "summary",
                   "probe plain contiguous I/O of this file system (--size, --dir)"),
         out);
}

static const char *const type_names[] = {
    [IOK_OPT_BOOL] = "bool",     [IOK_OPT_INT] = "int",       [IOK_OPT_INT64] = "int64",
    [IOK_OPT_DOUBLE] = "double", [IOK_OPT_STRING] = "string", [IOK_OPT_CHOICE] = "choice",
    [IOK_OPT_INT3] = "int3"};

/* The default as a typed JSON value: the set holds the defaults when help
 * is asked for (nothing from the command line or an input file applied). */
static json_t *
default_value(const struct iok_optset *set, const struct iok_option *o)
{
    char text[IOK_OPT_STRLEN];
    iok_opts_format(set, o, text, sizeof text);
    switch (o->type) {
    case IOK_OPT_BOOL:
        return json_boolean(atoi(text));
    case IOK_OPT_INT:
    case IOK_OPT_INT64:
        return json_integer(strtoll(text, NULL, 10));
    case IOK_OPT_DOUBLE:
        return json_real(strtod(text, NULL));
    case IOK_OPT_INT3: {
        int x, y, z;
        return sscanf(text, "%d,%d,%d", &x, &y, &z) == 3 ? json_pack("[i,i,i]", x, y, z)
                                                         : json_null();
    }
    default: /* "" means none: the help says what is chosen instead */
        return text[0] ? json_string(text) : json_null();
    }
}

/* A bound of the option's range as a typed JSON value (null: none). */
static json_t *
bound(const struct iok_option *o, const char *text)
{
    int64_t v;
    if (!text)
        return json_null();
    if (o->type == IOK_OPT_DOUBLE)
        return json_real(strtod(text, NULL));
    return iok_parse_int64(text, &v, 1) ? json_null() : json_integer(v);
}

static json_t *
choices(const char *list)
{
    if (!list)
        return json_null();
    json_t *a = json_array();
    char *copy = strdup(list), *save = NULL;
    for (char *c = strtok_r(copy, "|", &save); c; c = strtok_r(NULL, "|", &save))
        json_array_append_new(a, json_string(c));
    free(copy);
    return a;
}

/* The hints the kernel's original sets itself, as `--help` ends with them
 * (backend null: every backend). */
static json_t *
original_hints(const struct iok_kernel *k)
{
    json_t *a = json_array();
    for (const struct iok_kernel_hint *h = k->original_hints; h && h->key; h++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:o}", "key", h->key, "value", h->value,
                                           "backend",
                                           h->backend ? json_string(h->backend) : json_null()));
    return a;
}

void
iok_describe_kernel(const struct iok_kernel *k, const struct iok_optset *sets, int nsets, FILE *out)
{
    json_t *opts = json_array();
    for (int i = 0; i < nsets; i++)
        for (const struct iok_option *o = sets[i].opts; o && o->name; o++) {
            char help[2048];
            iok_opt_help_text(o, help, sizeof help);
            char shortname[2] = {o->short_name, '\0'};
            const char *meta = iok_opt_meta(o);
            json_t *one = json_pack("{s:s, s:o, s:s, s:o, s:o, s:o, s:s, s:s}", "name", o->name,
                                    "short", o->short_name ? json_string(shortname) : json_null(),
                                    "type", type_names[o->type], "argument",
                                    meta[0] ? json_string(meta) : json_null(), "default",
                                    default_value(&sets[i], o), "choices",
                                    choices(o->type == IOK_OPT_CHOICE ? o->choices : NULL), "help",
                                    help, "group", sets[i].title);
            /* the range the parser enforces, from the same table entry */
            json_object_set_new(one, "min", bound(o, o->min));
            json_object_set_new(one, "max", bound(o, o->max));
            json_object_set_new(one, "unit", o->unit ? json_string(o->unit) : json_null());
            json_array_append_new(opts, one);
        }
    dump(json_pack("{s:s, s:s, s:o, s:o, s:s, s:s, s:o, s:o}", "kernel", k->name, "summary",
                   k->summary, "flags", kernel_flags(k->flags), "input", kernel_input(k), "ranks",
                   k->ranks ? k->ranks : "any", "barriers",
                   k->default_barriers ? k->default_barriers : "phase", "original_hints",
                   original_hints(k), "options", opts),
         out);
}

/* `KERNEL --help --json`: the bare "--json" (no file after it) asks for the
 * help as JSON; it is taken out of argv so that --json FILE keeps its
 * meaning everywhere else. */
int
iok_help_as_json(int *argc, char **argv)
{
    int help = 0, at = -1;
    for (int i = 0; i < *argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            help = 1;
        else if (!strcmp(argv[i], "--json") && (i + 1 == *argc || argv[i + 1][0] == '-'))
            at = i;
    }
    if (!help || at < 0)
        return 0;
    for (int i = at; i + 1 < *argc; i++)
        argv[i] = argv[i + 1];
    (*argc)--;
    return 1;
}
