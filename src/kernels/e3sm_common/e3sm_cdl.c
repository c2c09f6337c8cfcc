/* SPDX-License-Identifier: BSD-3-Clause */
/* CDL headers -> schemas (pure, unit-tested through the header tests). */
#include "e3sm_cdl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

enum tok { T_END, T_WORD, T_STRING, T_PUNCT };

struct lex {
    const char *p;
    int line;
    enum tok t;
    char *text; /* word or string (unescaped); punct: the character */
    size_t len, cap;
    int tline;
};

static int
put(struct lex *x, char c)
{
    if (x->len + 2 > x->cap) {
        size_t ncap = x->cap ? 2 * x->cap : 256;
        char *n = realloc(x->text, ncap);
        if (!n)
            return -1;
        x->text = n;
        x->cap = ncap;
    }
    x->text[x->len++] = c;
    x->text[x->len] = '\0';
    return 0;
}

static int
is_punct(char c)
{
    return c == '=' || c == ';' || c == ',' || c == ':' || c == '(' || c == ')' || c == '{' ||
           c == '}';
}

static void
next(struct lex *x)
{
    x->len = 0;
    put(x, '\0');
    x->len = 0;
    for (;;) {
        while (*x->p && isspace((unsigned char)*x->p)) {
            if (*x->p == '\n')
                x->line++;
            x->p++;
        }
        if (x->p[0] == '/' && x->p[1] == '/') { /* comment to the end of the line */
            while (*x->p && *x->p != '\n')
                x->p++;
            continue;
        }
        break;
    }
    x->tline = x->line;
    if (!*x->p) {
        x->t = T_END;
        return;
    }
    if (is_punct(*x->p)) {
        x->t = T_PUNCT;
        put(x, *x->p++);
        return;
    }
    if (*x->p == '"') {
        x->t = T_STRING;
        x->p++;
        while (*x->p && *x->p != '"') {
            char c = *x->p++;
            if (c == '\n')
                x->line++;
            if (c == '\\' && *x->p) {
                c = *x->p++;
                switch (c) {
                case 'n':
                    c = '\n';
                    break;
                case 't':
                    c = '\t';
                    break;
                case 'r':
                    c = '\r';
                    break;
                case '0':
                    c = '\0';
                    break;
                default:
                    break; /* \\ \" \' */
                }
            }
            put(x, c);
        }
        if (*x->p == '"')
            x->p++;
        return;
    }
    x->t = T_WORD;
    while (*x->p && !isspace((unsigned char)*x->p) && !is_punct(*x->p) && *x->p != '"') {
        if (*x->p == '\\' && x->p[1]) /* escaped character in a name */
            x->p++;
        put(x, *x->p++);
    }
}

static int
is(const struct lex *x, char c)
{
    return x->t == T_PUNCT && x->text[0] == c;
}

static int
type_of(const char *w, enum iok_type *t)
{
    static const char *const names[] = {"char", "byte", "short", "int", "int64", "float", "double"};
    for (int i = 0; i < 7; i++)
        if (!strcmp(w, names[i])) {
            *t = (enum iok_type)i;
            return 1;
        }
    return 0;
}

/* The type a CDL number's spelling gives: 1.f float, 1b byte, 1s short,
 * 1LL int64, 1. / 1e5 / NaN double, 1 int. */
static enum iok_type
number_type(const char *w)
{
    size_t n = strlen(w);
    char last = n ? (char)tolower((unsigned char)w[n - 1]) : 0;
    if (n >= 2 && tolower((unsigned char)w[n - 2]) == 'l' && last == 'l')
        return IOK_INT64;
    if (last == 'b')
        return IOK_BYTE;
    if (last == 's')
        return IOK_SHORT;
    if (last == 'f' && strncmp(w, "Inf", 3) && strncmp(w, "-Inf", 4))
        return IOK_FLOAT;
    if (strpbrk(w, ".eEN") || strstr(w, "Inf"))
        return IOK_DOUBLE;
    return IOK_INT;
}

static int
number_value(const char *w, enum iok_type t, void *dst)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", w);
    size_t n = strlen(buf);
    while (n && strchr("fFbBsSlL", buf[n - 1]) && !(n >= 3 && !strcmp(buf + n - 3, "NaN")))
        buf[--n] = '\0';
    char *end;
    errno = 0;
    if (t == IOK_FLOAT || t == IOK_DOUBLE) {
        double d = !strcmp(buf, "NaN") ? NAN : strtod(buf, &end);
        if (strcmp(buf, "NaN") && (end == buf || *end))
            return -1;
        if (t == IOK_FLOAT)
            *(float *)dst = !strcmp(buf, "NaN") ? NAN : strtof(buf, NULL);
        else
            *(double *)dst = d;
        return 0;
    }
    long long v = strtoll(buf, &end, 10);
    if (end == buf || *end || errno)
        return -1;
    switch (t) {
    case IOK_BYTE:
        *(int8_t *)dst = (int8_t)v;
        break;
    case IOK_SHORT:
        *(int16_t *)dst = (int16_t)v;
        break;
    case IOK_INT:
        *(int32_t *)dst = (int32_t)v;
        break;
    default:
        *(int64_t *)dst = v;
        break;
    }
    return 0;
}

/* owner = variable id or IOK_GLOBAL; the lexer stands on the first value. */
static int
attribute(struct lex *x, struct iok_schema *s, int owner, const char *name, char *err,
          size_t errlen)
{
    int line = x->tline, rc = 0;
    if (x->t == T_STRING) {
        size_t cap = 256, len = 0;
        char *all = malloc(cap);
        while (x->t == T_STRING) {
            if (len + x->len + 1 > cap) {
                while (len + x->len + 1 > cap)
                    cap *= 2;
                all = realloc(all, cap);
            }
            memcpy(all + len, x->text, x->len);
            len += x->len;
            next(x);
            if (!is(x, ','))
                break;
            next(x);
        }
        if (iok_schema_add_attr(s, owner, name, IOK_CHAR, len, all) < 0)
            rc = -1;
        free(all);
    } else if (x->t == T_WORD) {
        enum iok_type t = number_type(x->text);
        size_t n = 0, cap = 16;
        char *vals = malloc(cap * 8);
        while (x->t == T_WORD) {
            if (n == cap)
                vals = realloc(vals, (cap *= 2) * 8);
            if (number_value(x->text, t, vals + n * iok_type_size(t))) {
                snprintf(err, errlen, "line %d: attribute %s: bad value '%s'", x->tline,
                         iok_quote(name), iok_quote(x->text));
                free(vals);
                return -1;
            }
            n++;
            next(x);
            if (!is(x, ','))
                break;
            next(x);
        }
        if (iok_schema_add_attr(s, owner, name, t, n, vals) < 0)
            rc = -1;
        free(vals);
    } else {
        rc = -1;
    }
    if (rc || !is(x, ';')) {
        snprintf(err, errlen, "line %d: attribute %s: expected values then ';'", line,
                 iok_quote(name));
        return -1;
    }
    next(x);
    return 0;
}

static int
fail(char *err, size_t errlen, const struct lex *x, const char *what)
{
    snprintf(err, errlen, "line %d: expected %s, got '%s'", x->tline, what,
             x->t == T_END ? "end of file" : iok_quote(x->text));
    return -1;
}

/* ":NAME = values ;" after the owner, the ':' current: the attribute of owner. */
static int
named_attribute(struct lex *x, struct iok_schema *s, int owner, char *err, size_t errlen)
{
    next(x);
    char name[256];
    snprintf(name, sizeof name, "%s", x->text);
    next(x);
    if (!is(x, '='))
        return fail(err, errlen, x, "'='");
    next(x);
    return attribute(x, s, owner, name, err, errlen);
}

static int
parse(struct lex *x, int64_t nrecs, struct iok_schema *s, char *err, size_t errlen)
{
    next(x);
    if (x->t != T_WORD || strcmp(x->text, "netcdf"))
        return fail(err, errlen, x, "'netcdf NAME {'");
    next(x);
    next(x);
    if (!is(x, '{'))
        return fail(err, errlen, x, "'{'");
    next(x);
    int section = 0; /* 1 dimensions, 2 variables */
    int last_var = -1;
    while (x->t != T_END && !is(x, '}')) {
        if (x->t == T_WORD && (!strcmp(x->text, "dimensions") || !strcmp(x->text, "variables"))) {
            section = x->text[0] == 'd' ? 1 : 2;
            next(x);
            if (!is(x, ':'))
                return fail(err, errlen, x, "':' after a section name");
            next(x);
            continue;
        }
        if (section == 1) {
            char name[256];
            if (x->t != T_WORD)
                return fail(err, errlen, x, "a dimension name");
            snprintf(name, sizeof name, "%s", x->text);
            next(x);
            if (!is(x, '='))
                return fail(err, errlen, x, "'='");
            next(x);
            int unlim = x->t == T_WORD && !strcmp(x->text, "UNLIMITED");
            char *end;
            long long len = unlim ? nrecs : strtoll(x->text, &end, 10);
            if (x->t != T_WORD || (!unlim && (*end || len < 0)))
                return fail(err, errlen, x, "a dimension length");
            if (iok_schema_add_dim(s, name, len, unlim) < 0)
                return fail(err, errlen, x, "a valid dimension");
            next(x);
            if (!is(x, ';'))
                return fail(err, errlen, x, "';'");
            next(x);
            continue;
        }
        if (section != 2)
            return fail(err, errlen, x, "'dimensions:'");
        enum iok_type t;
        if (is(x, ':')) { /* global attribute */
            if (named_attribute(x, s, IOK_GLOBAL, err, errlen))
                return -1;
            continue;
        }
        if (x->t != T_WORD)
            return fail(err, errlen, x, "a variable or an attribute");
        char word[256];
        snprintf(word, sizeof word, "%s", x->text);
        next(x);
        if (is(x, ':')) { /* variable attribute */
            int v = iok_schema_find_var(s, word);
            if (v < 0) {
                snprintf(err, errlen, "line %d: attribute of unknown variable %s", x->tline,
                         iok_quote(word));
                return -1;
            }
            if (named_attribute(x, s, v, err, errlen))
                return -1;
            continue;
        }
        if (!type_of(word, &t)) {
            snprintf(err, errlen, "line %d: unknown type '%s'", x->tline, iok_quote(word));
            return -1;
        }
        char name[256];
        snprintf(name, sizeof name, "%s", x->text);
        next(x);
        int dims[IOK_MAX_DIMS], nd = 0;
        if (is(x, '(')) {
            do {
                next(x);
                int d = -1;
                for (int k = 0; k < s->ndims; k++)
                    if (x->t == T_WORD && !strcmp(s->dims[k].name, x->text))
                        d = k;
                if (d < 0 || nd == IOK_MAX_DIMS)
                    return fail(err, errlen, x, "a dimension defined above");
                dims[nd++] = d;
                next(x);
            } while (is(x, ','));
            if (!is(x, ')'))
                return fail(err, errlen, x, "')'");
            next(x);
        }
        if (!is(x, ';'))
            return fail(err, errlen, x, "';' after a variable");
        last_var = iok_schema_add_var(s, name, t, nd, dims);
        if (last_var < 0) {
            snprintf(err, errlen, "line %d: variable %s is not valid", x->tline, iok_quote(name));
            return -1;
        }
        next(x);
    }
    if (!is(x, '}'))
        return fail(err, errlen, x, "'}'");
    return 0;
}

int
e3sm_cdl_parse(const char *text, int64_t nrecs, struct iok_schema *s, char *err, size_t errlen)
{
    struct lex x = {.p = text, .line = 1};
    int rc = parse(&x, nrecs, s, err, errlen);
    free(x.text);
    return rc;
}
