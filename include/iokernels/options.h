/* SPDX-License-Identifier: BSD-3-Clause */
/* Options declared as data, one table per kernel, per backend and for the
 * core. One setter serves the command line, the kernels' native input files
 * and JSON: every value arrives as (key, text) and is parsed by its type. */
#ifndef IOKERNELS_OPTIONS_H
#define IOKERNELS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum iok_opt_type {
    IOK_OPT_BOOL,   /* int; a flag: "--name" alone means 1, or 0|1|yes|no|true|false */
    IOK_OPT_INT,    /* int */
    IOK_OPT_INT64,  /* int64_t; accepts k/m/g/t suffixes (powers of 1024) */
    IOK_OPT_DOUBLE, /* double */
    IOK_OPT_STRING, /* char[size] (`size` below; 0: IOK_OPT_STRLEN), or with
                       size IOK_OPT_HEAP a char * of any length (paths) */
    IOK_OPT_CHOICE, /* int (an enum): the index of the value in `choices`, "a|b|c" = 0, 1, 2;
                       IOK_CHOICE_UNSET until set when the option has no default */
    IOK_OPT_INT3,   /* int[3]: "X,Y,Z" or "X Y Z" */
};

#define IOK_OPT_STRLEN 1024

/* A CHOICE option with no default, not given: "the kernel's default" (the
 * owner's enum names it, IOK_MODE_UNSET, IOK_BARRIERS_KERNEL, ...). */
#define IOK_CHOICE_UNSET (-1)

/* A macro's value as text, for a bound given by a constant:
 * .max = IOK_STR(IOK_CEILING_SAMPLES_MAX). */
#define IOK_STR_(x) #x
#define IOK_STR(x) IOK_STR_(x)

struct iok_option {
    const char *name; /* long name, used as --name and as key in input files */
    char short_name;  /* 0 if none; -x value */
    enum iok_opt_type type;
    size_t offset;   /* offsetof the field in the owner's struct */
    const char *def; /* default as text; NULL = zero/empty */
    const char *help;
    const char *choices; /* IOK_OPT_CHOICE only: "a|b|c" */
    /* What validation needs, declared here once: the parser refuses a value
     * outside [min, max] (numbers; each of the three of an INT3), --help
     * shows the range and --help --json carries it. Bounds are text the
     * option's own parser reads ("1", "16", "4k"); NULL: unbounded. A rule
     * that ties several options, or an option to the rank count, stays in
     * the kernel's configure() or check_ranks(). */
    const char *min, *max;
    const char *unit;    /* what the number counts ("records", "seconds"); NULL: none */
    const char *metavar; /* the argument's name in help and man: FILE, DIR, KEY=VALUE,...;
                            NULL: from the type (N, X, X,Y,Z; a string option must name it) */
    size_t size;         /* IOK_OPT_STRING: sizeof the field (the longest value is one less);
                            0: IOK_OPT_STRLEN; IOK_OPT_HEAP: a char * on the heap (never NULL
                            after iok_opts_defaults, "" when empty; iok_opts_release frees it) */
};

#define IOK_OPT_HEAP ((size_t)-1)

/* A STRING option's field: its offset and size, .size = IOK_OPT_SIZEOF(struct x, f). */
#define IOK_OPT_SIZEOF(type, member) sizeof(((type *)0)->member)

/* A table bound to the struct it fills. */
struct iok_optset {
    const char *title;             /* "core", "btio", "pnetcdf", ... (help sections) */
    const struct iok_option *opts; /* terminated by { NULL } */
    void *base;
};

/* A whole number as the options take it (k, m, g, t suffixes: powers of
 * 1024, when allow_suffix). 0, or -1 if `s` is not one. */
int iok_parse_int64(const char *s, int64_t *out, int allow_suffix);

/* Fills every field of the set with its default. A heap string's field
 * must be NULL (a zeroed struct) or the set's own. */
int iok_opts_defaults(const struct iok_optset *set);
/* Frees the set's heap strings (the fields become NULL). */
void iok_opts_release(const struct iok_optset *set);

/* Finds `key` in the sets (by long name, or by short name when key is one
 * character). Returns the option and its set, or NULL. */
const struct iok_option *iok_opts_find(const struct iok_optset *sets, int nsets, const char *key,
                                       const struct iok_optset **owner);

/* Parses `value` into the option's field. `where` names the source for the
 * error message ("command line", "inputbt.data line 3"). Returns IOK_OK or
 * IOK_EUSAGE with the error recorded. */
int iok_opts_set(const struct iok_optset *set, const struct iok_option *o, const char *value,
                 const char *where);

/* Choice `v` of `choices` ("a|b|c": 1 is "b") as text; "" for IOK_CHOICE_UNSET
 * or a value out of range. By value: iok_choice_name(IOK_MODE_CHOICES, m).s
 * is good until the end of the expression that holds it. */
struct iok_choice_text {
    char s[32];
};
struct iok_choice_text iok_choice_name(const char *choices, int v);
/* The index of `name` among `choices`, or -1 when it is none of them. */
int iok_choice_index(const char *choices, const char *name);

/* The option's current value as text (for reports and JSON). */
void iok_opts_format(const struct iok_optset *set, const struct iok_option *o, char *out,
                     size_t outlen);

/* The option's help text with its default, said once: "(default: x)",
 * "off" for a flag, "none" for an empty value, or as the help text words it
 * itself when it holds "(default". */
void iok_opt_help_text(const struct iok_option *o, char *out, size_t len);

/* The option's range as the help and the error line word it ("1 to 16
 * samples", "at least 1", "each at least 1"), or "" when it has none. */
void iok_opt_range_text(const struct iok_option *o, char *out, size_t len);

/* The option's argument as the help shows it: its metavar ("FILE",
 * "KEY=VALUE,..."), else "N", "X", "X,Y,Z", the choices "a|b|c", "" for a
 * flag, "TEXT" for a string option that names none. */
const char *iok_opt_meta(const struct iok_option *o);

/* Prints "  --name VALUE   help (default: x)" lines for a set. */
void iok_opts_help(const struct iok_optset *set, FILE *out);

/* Command line split into option pairs and positional arguments. Options are
 * "--key=value", "--key value", "--flag", "-k value", "-k=value", "-k";
 * whether a value follows is decided by the option's type, so the sets are
 * needed to split. Everything after "--" is positional. */
struct iok_cmdline {
    int npairs, npos;
    const char **keys, **values; /* value NULL for a bare flag */
    const char **pos;
};

int iok_cmdline_split(int argc, char **argv, const struct iok_optset *sets, int nsets,
                      struct iok_cmdline *cl);
/* Applies every pair to the sets (later pairs win). */
int iok_cmdline_apply(const struct iok_cmdline *cl, const struct iok_optset *sets, int nsets);
/* 1 if the user gave this option on the command line. */
int iok_cmdline_has(const struct iok_cmdline *cl, const struct iok_optset *sets, int nsets,
                    const char *name);
void iok_cmdline_free(struct iok_cmdline *cl);

/* `s` without leading and trailing white space (cut in place). */
char *iok_trim(char *s);
/* ParmParse style text ("key = value", '#' comments, blank lines): applies
 * each line to the sets. `path` names the file in error messages. */
int iok_keyvalue_apply(const char *text, const char *path, const struct iok_optset *sets,
                       int nsets);

#endif
