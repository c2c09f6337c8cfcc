/* SPDX-License-Identifier: BSD-3-Clause */
/* One parser for options declared as data: command line, ParmParse-style
 * key = value files, and the kernels' own input files all end in
 * iok_opts_set(). */
#include "iokernels/options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

static void *
field(const struct iok_optset *set, const struct iok_option *o)
{
    return (char *)set->base + o->offset;
}

int
iok_parse_int64(const char *s, int64_t *out, int allow_suffix)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno)
        return -1;
    if (allow_suffix && *end) {
        int shift = 0;
        switch (tolower((unsigned char)*end)) {
        case 'k':
            shift = 10;
            break;
        case 'm':
            shift = 20;
            break;
        case 'g':
            shift = 30;
            break;
        case 't':
            shift = 40;
            break;
        default:
            return -1;
        }
        end++;
        if (*end == 'b' || *end == 'B')
            end++;
        if (v > (INT64_MAX >> shift) || v < (INT64_MIN >> shift))
            return -1; /* out of range: refused like any malformed number */
        v *= 1LL << shift;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

int
iok_choice_index(const char *choices, const char *v)
{
    size_t n = strlen(v);
    int i = 0;
    for (const char *p = choices; p && *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return i;
        p = bar ? bar + 1 : NULL;
    }
    return -1;
}

struct iok_choice_text
iok_choice_name(const char *choices, int v)
{
    struct iok_choice_text t = {""};
    const char *p = v >= 0 ? choices : NULL;
    for (int i = 0; p && *p && i < v; i++) {
        p = strchr(p, '|');
        p = p ? p + 1 : NULL;
    }
    if (p && *p) {
        size_t len = strcspn(p, "|");
        snprintf(t.s, sizeof t.s, "%.*s", (int)len, p);
    }
    return t;
}

/* The longest value a STRING option's field holds. */
static size_t
string_max(const struct iok_option *o)
{
    return o->size == IOK_OPT_HEAP ? SIZE_MAX - 1 : (o->size ? o->size : IOK_OPT_STRLEN) - 1;
}

/* A STRING option's value: its array, or the heap string its field points to. */
static const char *
string_of(const struct iok_option *o, const void *f)
{
    return o->size == IOK_OPT_HEAP ? *(char *const *)f : (const char *)f;
}

static int
set_string(const struct iok_option *o, void *f, const char *value)
{
    if (o->size != IOK_OPT_HEAP) {
        strcpy((char *)f, value);
        return IOK_OK;
    }
    char *copy = strdup(value);
    if (!copy)
        return iok_error(IOK_EIO, "out of memory for the value of --%s", o->name);
    free(*(char **)f);
    *(char **)f = copy;
    return IOK_OK;
}

void
iok_opt_range_text(const struct iok_option *o, char *out, size_t len)
{
    const char *each = o->type == IOK_OPT_INT3 ? "three integers, each " : "";
    if (o->min && o->max)
        snprintf(out, len, "%s%s to %s", each, o->min, o->max);
    else if (o->min)
        snprintf(out, len, "%sat least %s", each, o->min);
    else if (o->max)
        snprintf(out, len, "%sat most %s", each, o->max);
    else
        snprintf(out, len, "%s", "");
}

/* Whether a parsed value lies outside the table's [min, max]. A bound the
 * option's parser cannot read is a bug in the table (test_options reads
 * every bound), never the user's: it bounds nothing here. */
static int
out_of_range(const struct iok_option *o, int64_t iv, double dv)
{
    if (o->type == IOK_OPT_DOUBLE) {
        return (o->min && dv < strtod(o->min, NULL)) || (o->max && dv > strtod(o->max, NULL));
    }
    int64_t b;
    return (o->min && !iok_parse_int64(o->min, &b, 1) && iv < b) ||
           (o->max && !iok_parse_int64(o->max, &b, 1) && iv > b);
}

/* One line: where, the option, its range (the fix) and the value refused. */
static int
range_error(const struct iok_option *o, const char *value, const char *where)
{
    char range[160], shortname[8] = "";
    iok_opt_range_text(o, range, sizeof range);
    if (o->short_name)
        snprintf(shortname, sizeof shortname, " (-%c)", o->short_name);
    return iok_error(IOK_EUSAGE, "%s: --%s%s takes %s, not '%s'", where, o->name, shortname, range,
                     iok_quote(value));
}

int
iok_opts_set(const struct iok_optset *set, const struct iok_option *o, const char *value,
             const char *where)
{
    void *f = field(set, o);
    int64_t v;
    if (value == NULL) {
        if (o->type != IOK_OPT_BOOL)
            return iok_error(IOK_EUSAGE, "%s: option --%s needs a value (%s)", where, o->name,
                             o->help);
        *(int *)f = 1;
        return IOK_OK;
    }
    switch (o->type) {
    case IOK_OPT_BOOL:
        if (!strcmp(value, "1") || !strcasecmp(value, "yes") || !strcasecmp(value, "true"))
            *(int *)f = 1;
        else if (!strcmp(value, "0") || !strcasecmp(value, "no") || !strcasecmp(value, "false"))
            *(int *)f = 0;
        else
            return iok_error(IOK_EUSAGE, "%s: --%s takes 0 or 1, not '%s'", where, o->name,
                             iok_quote(value));
        return IOK_OK;
    case IOK_OPT_INT:
        if (iok_parse_int64(value, &v, 0) || v < -2147483647LL || v > 2147483647LL)
            return iok_error(IOK_EUSAGE, "%s: --%s takes an integer, not '%s'", where, o->name,
                             iok_quote(value));
        if (out_of_range(o, v, 0))
            return range_error(o, value, where);
        *(int *)f = (int)v;
        return IOK_OK;
    case IOK_OPT_INT64:
        if (iok_parse_int64(value, &v, 1))
            return iok_error(IOK_EUSAGE,
                             "%s: --%s takes an integer (k, m, g suffixes allowed), not '%s'",
                             where, o->name, iok_quote(value));
        if (out_of_range(o, v, 0))
            return range_error(o, value, where);
        *(int64_t *)f = v;
        return IOK_OK;
    case IOK_OPT_DOUBLE: {
        char *end;
        errno = 0;
        double d = strtod(value, &end);
        if (end == value || *end || errno)
            return iok_error(IOK_EUSAGE, "%s: --%s takes a number, not '%s'", where, o->name,
                             iok_quote(value));
        if (!isfinite(d)) /* strtod takes "nan" and "inf": no option means either */
            return iok_error(IOK_EUSAGE, "%s: --%s takes a finite number, not '%s'", where, o->name,
                             iok_quote(value));
        if (out_of_range(o, 0, d))
            return range_error(o, value, where);
        *(double *)f = d;
        return IOK_OK;
    }
    case IOK_OPT_CHOICE: {
        int i = iok_choice_index(o->choices, value);
        if (i < 0)
            return iok_error(IOK_EUSAGE, "%s: --%s takes one of %s, not '%s'", where, o->name,
                             o->choices, iok_quote(value));
        *(int *)f = i;
        return IOK_OK;
    }
    case IOK_OPT_STRING:
        if (strlen(value) > string_max(o))
            return iok_error(IOK_EUSAGE,
                             "%s: value of --%s is %zu characters, more than the %zu an option "
                             "holds: shorten it%s",
                             where, o->name, strlen(value), string_max(o),
                             string_max(o) + 1 >= IOK_OPT_STRLEN
                                 ? " (a path relative to the working directory)"
                                 : "");
        return set_string(o, f, value);
    case IOK_OPT_INT3: {
        int *out = f;
        int vals[3], n = 0;
        const char *p = value;
        while (*p && n < 4) {
            while (*p == ' ' || *p == '\t' || *p == ',' || *p == 'x')
                p++;
            if (!*p)
                break;
            char *end;
            errno = 0;
            long x = strtol(p, &end, 10);
            if (end == p || errno || x < -2147483647L || x > 2147483647L)
                break;
            if (n < 3)
                vals[n] = (int)x;
            n++;
            p = end;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (n != 3 || *p)
            return iok_error(IOK_EUSAGE, "%s: --%s takes three integers 'X,Y,Z', not '%s'", where,
                             o->name, iok_quote(value));
        for (int k = 0; k < 3; k++)
            if (out_of_range(o, vals[k], 0))
                return range_error(o, value, where);
        memcpy(out, vals, sizeof vals);
        return IOK_OK;
    }
    }
    return IOK_EUSAGE;
}

int
iok_opts_defaults(const struct iok_optset *set)
{
    for (const struct iok_option *o = set->opts; o && o->name; o++) {
        void *f = field(set, o);
        switch (o->type) {
        case IOK_OPT_BOOL:
        case IOK_OPT_INT:
            *(int *)f = 0;
            break;
        case IOK_OPT_INT64:
            *(int64_t *)f = 0;
            break;
        case IOK_OPT_DOUBLE:
            *(double *)f = 0;
            break;
        case IOK_OPT_STRING:
            if (set_string(o, f, "") != IOK_OK)
                return IOK_EIO;
            break;
        case IOK_OPT_CHOICE:
            *(int *)f = IOK_CHOICE_UNSET;
            break;
        case IOK_OPT_INT3:
            memset(f, 0, 3 * sizeof(int));
            break;
        }
        if (o->def && iok_opts_set(set, o, o->def, "built-in default") != IOK_OK)
            return IOK_EUSAGE; /* a bug in a table, caught by the unit tests */
    }
    return IOK_OK;
}

void
iok_opts_release(const struct iok_optset *set)
{
    for (const struct iok_option *o = set->opts; o && o->name; o++)
        if (o->type == IOK_OPT_STRING && o->size == IOK_OPT_HEAP) {
            free(*(char **)field(set, o));
            *(char **)field(set, o) = NULL;
        }
}

static const struct iok_option *
find_by(const struct iok_optset *sets, int nsets, const char *key, int by_short,
        const struct iok_optset **owner)
{
    for (int i = 0; i < nsets; i++)
        for (const struct iok_option *o = sets[i].opts; o && o->name; o++)
            if (by_short ? (o->short_name && o->short_name == key[0] && !key[1])
                         : !strcmp(o->name, key)) {
                if (owner)
                    *owner = &sets[i];
                return o;
            }
    return NULL;
}

const struct iok_option *
iok_opts_find(const struct iok_optset *sets, int nsets, const char *key,
              const struct iok_optset **owner)
{
    /* long names first: "--n" is the option named n, "-n" its short form if none is */
    const struct iok_option *o = find_by(sets, nsets, key, 0, owner);
    return o ? o : find_by(sets, nsets, key, 1, owner);
}

void
iok_opts_format(const struct iok_optset *set, const struct iok_option *o, char *out, size_t outlen)
{
    const void *f = field(set, o);
    switch (o->type) {
    case IOK_OPT_BOOL:
    case IOK_OPT_INT:
        snprintf(out, outlen, "%d", *(const int *)f);
        break;
    case IOK_OPT_INT64:
        snprintf(out, outlen, "%" PRId64, *(const int64_t *)f);
        break;
    case IOK_OPT_DOUBLE:
        snprintf(out, outlen, "%g", *(const double *)f);
        break;
    case IOK_OPT_STRING:
        snprintf(out, outlen, "%s", string_of(o, f));
        break;
    case IOK_OPT_CHOICE:
        snprintf(out, outlen, "%s", iok_choice_name(o->choices, *(const int *)f).s);
        break;
    case IOK_OPT_INT3: {
        const int *v = f;
        snprintf(out, outlen, "%d,%d,%d", v[0], v[1], v[2]);
        break;
    }
    }
}

void
iok_opt_help_text(const struct iok_option *o, char *out, size_t len)
{
    /* a help text that says "(default: ...)" itself describes a default that
     * is no plain value (chosen by the kernel, by another option) */
    char range[160], tail[180] = "";
    iok_opt_range_text(o, range, sizeof range);
    if (range[0])
        snprintf(tail, sizeof tail, "; %s", range);
    if (strstr(o->help, "(default"))
        snprintf(out, len, "%s%s%s%s", o->help, tail[0] ? " (" : "", tail[0] ? range : "",
                 tail[0] ? ")" : "");
    else if (o->def && o->def[0])
        snprintf(out, len, "%s (default: %s%s)", o->help, o->def, tail);
    else
        snprintf(out, len, "%s (default: %s%s)", o->help, o->type == IOK_OPT_BOOL ? "off" : "none",
                 tail);
}

const char *
iok_opt_meta(const struct iok_option *o)
{
    static const char *const metas[] = {"", "N", "N", "X", "TEXT", "", "X,Y,Z"};
    if (o->metavar)
        return o->metavar;
    return o->type == IOK_OPT_CHOICE ? o->choices : metas[o->type];
}

void
iok_opts_help(const struct iok_optset *set, FILE *out)
{
    for (const struct iok_option *o = set->opts; o && o->name; o++) {
        char lhs[96], help[2048];
        const char *meta = iok_opt_meta(o);
        if (o->short_name)
            snprintf(lhs, sizeof lhs, "-%c, --%s %s", o->short_name, o->name, meta);
        else
            snprintf(lhs, sizeof lhs, "    --%s %s", o->name, meta);
        iok_opt_help_text(o, help, sizeof help);
        fprintf(out, "  %-40s %s\n", lhs, help);
    }
}

/* Splits "--key=value" / "-k=value" into key and value (value NULL if none).
 * Returns the key in a static-lifetime copy owned by the cmdline. */
static char *
split_key(const char *arg, const char **value)
{
    const char *k = arg[1] == '-' ? arg + 2 : arg + 1;
    const char *eq = strchr(k, '=');
    *value = eq ? eq + 1 : NULL;
    return strndup(k, eq ? (size_t)(eq - k) : strlen(k));
}

int
iok_cmdline_split(int argc, char **argv, const struct iok_optset *sets, int nsets,
                  struct iok_cmdline *cl)
{
    memset(cl, 0, sizeof *cl);
    cl->keys = calloc((size_t)argc + 1, sizeof *cl->keys);
    cl->values = calloc((size_t)argc + 1, sizeof *cl->values);
    cl->pos = calloc((size_t)argc + 1, sizeof *cl->pos);
    int dashdash = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (dashdash || a[0] != '-' || a[1] == '\0' || (isdigit((unsigned char)a[1]))) {
            cl->pos[cl->npos++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            dashdash = 1;
            continue;
        }
        const char *value;
        char *key = split_key(a, &value);
        const struct iok_option *o = iok_opts_find(sets, nsets, key, NULL);
        if (!o) {
            int rc = iok_error(IOK_EUSAGE, "unknown option '%s' (see --help)", iok_quote(a));
            free(key);
            return rc;
        }
        if (!value && o->type != IOK_OPT_BOOL) {
            if (i + 1 >= argc) {
                int rc =
                    iok_error(IOK_EUSAGE, "option '%s' needs a value (%s)", iok_quote(a), o->help);
                free(key);
                return rc;
            }
            value = argv[++i];
        }
        cl->keys[cl->npairs] = key;
        cl->values[cl->npairs] = value;
        cl->npairs++;
    }
    return IOK_OK;
}

int
iok_cmdline_apply(const struct iok_cmdline *cl, const struct iok_optset *sets, int nsets)
{
    for (int i = 0; i < cl->npairs; i++) {
        const struct iok_optset *owner;
        const struct iok_option *o = iok_opts_find(sets, nsets, cl->keys[i], &owner);
        if (!o)
            return iok_error(IOK_EUSAGE, "unknown option '--%s' (see --help)", cl->keys[i]);
        IOK_TRY(iok_opts_set(owner, o, cl->values[i], "command line"));
    }
    return IOK_OK;
}

int
iok_cmdline_has(const struct iok_cmdline *cl, const struct iok_optset *sets, int nsets,
                const char *name)
{
    for (int i = 0; i < cl->npairs; i++) {
        const struct iok_option *o = iok_opts_find(sets, nsets, cl->keys[i], NULL);
        if (o && !strcmp(o->name, name))
            return 1;
    }
    return 0;
}

void
iok_cmdline_free(struct iok_cmdline *cl)
{
    for (int i = 0; i < cl->npairs; i++)
        free((void *)cl->keys[i]);
    free(cl->keys);
    free(cl->values);
    free(cl->pos);
    memset(cl, 0, sizeof *cl);
}

char *
iok_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

int
iok_keyvalue_apply(const char *text, const char *path, const struct iok_optset *sets, int nsets)
{
    char *copy = strdup(text);
    int lineno = 0, rc = IOK_OK;
    for (char *line = copy, *next; line && rc == IOK_OK; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = iok_trim(line);
        if (!*s)
            continue;
        char where[IOK_OPT_STRLEN + 32];
        snprintf(where, sizeof where, "%s line %d", path, lineno);
        char *eq = strchr(s, '=');
        if (!eq) {
            rc = iok_error(IOK_EUSAGE, "%s: expected 'key = value', got '%s'", where, iok_quote(s));
            break;
        }
        *eq = '\0';
        char *key = iok_trim(s), *value = iok_trim(eq + 1);
        const struct iok_optset *owner;
        const struct iok_option *o = find_by(sets, nsets, key, 0, &owner);
        if (!o)
            rc = iok_error(IOK_EUSAGE, "%s: unknown key '%s'", where, iok_quote(key));
        else if (!*value)
            rc = iok_error(IOK_EUSAGE, "%s: key '%s' has no value", where, iok_quote(key));
        else
            rc = iok_opts_set(owner, o, value, where);
    }
    free(copy);
    return rc;
}
