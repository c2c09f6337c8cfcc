/* SPDX-License-Identifier: BSD-3-Clause */
/* ABR grid files: reader (with line-numbered errors) and writer. */
#include "abr.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

enum { K_VERSION, K_LEVELS, K_RATIO, K_CENTERING, K_STEPS, K_PROCS, K_DOMAIN, NKEYS };

static const char *const key_names[NKEYS] = {
    "ABR file format version", "Number of Levels",     "Refinement Ratio", "Cell Centering",
    "Number of Time Steps",    "Number of Processors", "Level 0 Domain"};

void
abr_init(struct abr_grid *g)
{
    memset(g, 0, sizeof *g);
}

void
abr_free(struct abr_grid *g)
{
    for (int l = 0; l < AMR_MAX_LEVELS; l++)
        amr_boxlist_free(&g->boxes[l]);
    abr_init(g);
}

struct amr_box
abr_level_domain(const struct abr_grid *g, int level)
{
    struct amr_box d = g->domain0;
    for (int l = 0; l < level; l++)
        for (int k = 0; k < 3; k++) {
            d.lo[k] *= g->ratio[l];
            d.hi[k] = (d.hi[k] + 1) * g->ratio[l] - 1;
        }
    return d;
}

/* ---- reading ---- */

struct reader {
    const char *path;
    char *cursor;
    int lineno;
};

/* The next line that is neither blank nor a '!' comment, trimmed; NULL at
 * the end. r->lineno is its number. */
static char *
next_line(struct reader *r)
{
    while (r->cursor && *r->cursor) {
        char *line = r->cursor, *nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
            r->cursor = nl + 1;
        } else {
            r->cursor = line + strlen(line);
        }
        r->lineno++;
        while (isspace((unsigned char)*line))
            line++;
        char *e = line + strlen(line);
        while (e > line && isspace((unsigned char)e[-1]))
            *--e = '\0';
        if (*line && *line != '!')
            return line;
    }
    return NULL;
}

static const char *
skip_space(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

/* An integer at *s (spaces first allowed); advances *s. */
static int
read_int(const char **s, int *v)
{
    const char *p = skip_space(*s);
    char *end;
    errno = 0;
    long x = strtol(p, &end, 10);
    if (end == p || errno || x < INT_MIN || x > INT_MAX)
        return -1;
    *v = (int)x;
    *s = end;
    return 0;
}

static int
read_char(const char **s, char c)
{
    const char *p = skip_space(*s);
    if (*p != c)
        return -1;
    *s = p + 1;
    return 0;
}

/* "(i,j,k)" */
static int
read_intvect(const char **s, int *v)
{
    return read_char(s, '(') || read_int(s, &v[0]) || read_char(s, ',') || read_int(s, &v[1]) ||
                   read_char(s, ',') || read_int(s, &v[2]) || read_char(s, ')')
               ? -1
               : 0;
}

/* "(lo)(hi)" and, when rank is not NULL, "[rank]" after it. */
static int
read_box(const char **s, struct amr_box *b, int *rank)
{
    if (read_intvect(s, b->lo) || read_intvect(s, b->hi))
        return -1;
    if (rank && (read_char(s, '[') || read_int(s, rank) || read_char(s, ']')))
        return -1;
    return 0;
}

static int
bad(const struct reader *r, const char *fmt, const char *what)
{
    return iok_error(IOK_EUSAGE, "%s line %d: %s%s", r->path, r->lineno, fmt,
                     what ? iok_quote(what) : "");
}

/* One header line "KEY = VALUE": which key, and the value text. */
static int
header_key(char *line, char **value)
{
    for (int k = 0; k < NKEYS; k++) {
        size_t n = strlen(key_names[k]);
        if (strncmp(line, key_names[k], n) != 0)
            continue;
        char *v = line + n;
        v = (char *)skip_space(v);
        if (k != K_VERSION) {
            if (*v != '=')
                return -1;
            v = (char *)skip_space(v + 1);
        }
        *value = v;
        return k;
    }
    return -1;
}

static int
parse_header_value(struct reader *r, struct abr_grid *g, int key, const char *v, const int *seen)
{
    const char *p = v;
    int x;
    switch (key) {
    case K_VERSION:
        return strcmp(v, "0.1") ? bad(r, "unsupported ABR file format version ", v) : IOK_OK;
    case K_LEVELS:
        if (read_int(&p, &x) || *skip_space(p) || x < 1 || x > AMR_MAX_LEVELS)
            return bad(r, "Number of Levels must be an integer from 1 to 8, got ", v);
        g->nlevels = x;
        return IOK_OK;
    case K_RATIO:
        if (!seen[K_LEVELS])
            return bad(r, "Refinement Ratio before Number of Levels", NULL);
        for (int l = 0; l < g->nlevels - 1; l++) {
            if (read_int(&p, &x) || x < 2)
                return bad(r,
                           "Refinement Ratio needs one integer of at least 2 per level above "
                           "the coarsest, got ",
                           v);
            g->ratio[l] = x;
        }
        if (*skip_space(p))
            return bad(r, "Refinement Ratio has more values than levels above the coarsest: ", v);
        return IOK_OK;
    case K_CENTERING:
        return strcmp(v, "0") ? bad(r, "only Cell Centering = 0 is supported, got ", v) : IOK_OK;
    case K_STEPS:
        return strcmp(v, "1") ? bad(r, "only Number of Time Steps = 1 is supported, got ", v)
                              : IOK_OK;
    case K_PROCS:
        if (read_int(&p, &x) || *skip_space(p) || x < 1)
            return bad(r, "Number of Processors must be a positive integer, got ", v);
        g->nprocs = x;
        return IOK_OK;
    case K_DOMAIN:
        if (read_box(&p, &g->domain0, NULL) || *skip_space(p))
            return bad(r, "expected Level 0 Domain = (i,j,k)(i,j,k), got ", v);
        for (int d = 0; d < 3; d++)
            if (g->domain0.lo[d] < 0 || g->domain0.lo[d] > g->domain0.hi[d])
                return bad(r, "Level 0 Domain must have 0 <= lo <= hi, got ", v);
        return IOK_OK;
    }
    return IOK_OK;
}

static int
parse_header(struct reader *r, struct abr_grid *g)
{
    int seen[NKEYS] = {0};
    char *line;
    while ((line = next_line(r))) {
        if (!strncmp(line, "TimeStep:", 9)) {
            for (int k = 0; k < NKEYS; k++)
                if (!seen[k] && !(k == K_RATIO && g->nlevels == 1))
                    return bad(r, "TimeStep before the header key ", key_names[k]);
            const char *p = line + 9;
            int t;
            if (read_int(&p, &t) || *skip_space(p) || t != 0)
                return bad(r, "only TimeStep: 0 is supported, got ", line);
            return IOK_OK;
        }
        char *value;
        int key = header_key(line, &value);
        if (key < 0)
            return bad(r, "unexpected header line: ", line);
        if (seen[key])
            return bad(r, "header key given twice: ", key_names[key]);
        seen[key] = r->lineno;
        IOK_TRY(parse_header_value(r, g, key, value, seen));
    }
    return iok_error(IOK_EUSAGE, "%s line %d: end of file before TimeStep: 0 and the boxes",
                     r->path, r->lineno);
}

/* Boxes of level l must not overlap: sorted by lo_i, each checked against
 * the ones starting before it ends. */
static int
check_overlaps(const struct reader *r, const struct amr_boxlist *bl, const int *lines, int l)
{
    int n = bl->n, *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    if (!order)
        return iok_error(IOK_EIO, "out of memory reading %s", r->path);
    amr_sort(bl->b, n, amr_lex_less, order);
    int rc = IOK_OK;
    for (int i = 0; i < n && rc == IOK_OK; i++)
        for (int j = i + 1; j < n && bl->b[order[j]].lo[0] <= bl->b[order[i]].hi[0]; j++) {
            const struct amr_box *a = &bl->b[order[i]], *b = &bl->b[order[j]];
            if (!amr_box_intersects(a, b))
                continue;
            int la = lines[order[i]], lb = lines[order[j]];
            if (la > lb || (la == lb && order[i] > order[j])) {
                const struct amr_box *t = a;
                a = b;
                b = t;
                int tl = la;
                la = lb;
                lb = tl;
            }
            rc = iok_error(IOK_EUSAGE,
                           "%s line %d: box (%d,%d,%d)(%d,%d,%d) of level %d overlaps box "
                           "(%d,%d,%d)(%d,%d,%d) of line %d",
                           r->path, lb, b->lo[0], b->lo[1], b->lo[2], b->hi[0], b->hi[1], b->hi[2],
                           l, a->lo[0], a->lo[1], a->lo[2], a->hi[0], a->hi[1], a->hi[2], la);
            break;
        }
    free(order);
    return rc;
}

/* Cells of a within b. */
static int64_t
common_cells(const struct amr_box *a, const struct amr_box *b)
{
    int64_t n = 1;
    for (int k = 0; k < 3; k++) {
        int lo = a->lo[k] > b->lo[k] ? a->lo[k] : b->lo[k];
        int hi = a->hi[k] < b->hi[k] ? a->hi[k] : b->hi[k];
        if (hi < lo)
            return 0;
        n *= hi - lo + 1;
    }
    return n;
}

/* Levels nest (Chombo's AMR hierarchy): every box of level l, coarsened by
 * the ratio below it, lies over boxes of level l - 1 (which do not
 * overlap, so the cells they hold of it add up to its own). */
static int
check_nesting(const struct reader *r, const struct abr_grid *g, const int *lines, int l)
{
    const struct amr_boxlist *fine = &g->boxes[l], *coarse = &g->boxes[l - 1];
    int ratio = g->ratio[l - 1];
    for (int i = 0; i < fine->n; i++) {
        const struct amr_box *b = &fine->b[i];
        struct amr_box c = *b;
        for (int k = 0; k < 3; k++) { /* boxes lie in the domain: indices are not negative */
            c.lo[k] = b->lo[k] / ratio;
            c.hi[k] = b->hi[k] / ratio;
        }
        int64_t held = 0, want = amr_box_cells(&c);
        for (int j = 0; j < coarse->n && held < want; j++)
            held += common_cells(&c, &coarse->b[j]);
        if (held < want)
            return iok_error(IOK_EUSAGE,
                             "%s line %d: box (%d,%d,%d)(%d,%d,%d) of level %d does not nest in "
                             "level %d: coarsened by %d it is (%d,%d,%d)(%d,%d,%d), of whose %lld "
                             "cells level %d's boxes hold %lld (a finer level lies over the "
                             "coarser one's boxes)",
                             r->path, lines[i], b->lo[0], b->lo[1], b->lo[2], b->hi[0], b->hi[1],
                             b->hi[2], l, l - 1, ratio, c.lo[0], c.lo[1], c.lo[2], c.hi[0], c.hi[1],
                             c.hi[2], (long long)want, l - 1, (long long)held);
    }
    return IOK_OK;
}

static int
parse_level(struct reader *r, struct abr_grid *g, int l)
{
    char *line = next_line(r), want[64];
    snprintf(want, sizeof want, "Number of Boxes on Level %d:", l);
    if (!line)
        return iok_error(IOK_EUSAGE, "%s line %d: end of file before '%s'", r->path, r->lineno,
                         want);
    if (strncmp(line, want, strlen(want)))
        return bad(r, "expected 'Number of Boxes on Level N: COUNT' for the next level, got ",
                   line);
    const char *p = line + strlen(want);
    int n;
    if (read_int(&p, &n) || *skip_space(p) || n < 1)
        return bad(r, "a level needs a positive box count, got ", line);
    struct amr_boxlist *bl = &g->boxes[l];
    struct amr_box dom = abr_level_domain(g, l);
    int *lines = malloc((size_t)n * sizeof *lines), count = 0, header = r->lineno, rc = IOK_OK;
    if (!lines)
        return iok_error(IOK_EIO, "out of memory reading %s", r->path);
    while (count < n && rc == IOK_OK) {
        line = next_line(r);
        if (!line || !strncmp(line, "Number of Boxes", 15)) {
            rc = iok_error(IOK_EUSAGE,
                           "%s line %d: level %d declares %d boxes (line %d) but lists %d", r->path,
                           r->lineno, l, n, header, count);
            break;
        }
        for (p = skip_space(line); *p && rc == IOK_OK; p = skip_space(p)) {
            struct amr_box b;
            int rank;
            if (count == n) {
                rc = bad(r, "more boxes than the level declares: ", p);
            } else if (read_box(&p, &b, &rank)) {
                rc = bad(r, "expected boxes written (i,j,k)(i,j,k)[rank], got ", line);
            } else if (!amr_box_contains(&dom, &b) || b.lo[0] > b.hi[0] || b.lo[1] > b.hi[1] ||
                       b.lo[2] > b.hi[2]) {
                rc = iok_error(IOK_EUSAGE,
                               "%s line %d: box (%d,%d,%d)(%d,%d,%d) is empty or outside level "
                               "%d's domain (%d,%d,%d)(%d,%d,%d)",
                               r->path, r->lineno, b.lo[0], b.lo[1], b.lo[2], b.hi[0], b.hi[1],
                               b.hi[2], l, dom.lo[0], dom.lo[1], dom.lo[2], dom.hi[0], dom.hi[1],
                               dom.hi[2]);
            } else if (amr_boxlist_push(bl, &b)) {
                rc = iok_error(IOK_EIO, "out of memory reading %s", r->path);
            } else {
                lines[count++] = r->lineno;
            }
        }
    }
    if (rc == IOK_OK)
        rc = check_overlaps(r, bl, lines, l);
    if (rc == IOK_OK && l > 0)
        rc = check_nesting(r, g, lines, l);
    free(lines);
    return rc;
}

int
abr_parse(const char *text, const char *path, struct abr_grid *g)
{
    abr_init(g);
    char *copy = strdup(text);
    if (!copy)
        return iok_error(IOK_EIO, "out of memory reading %s", path);
    struct reader r = {path, copy, 0};
    int rc = parse_header(&r, g);
    for (int l = 0; rc == IOK_OK && l < g->nlevels; l++)
        rc = parse_level(&r, g, l);
    char *extra = rc == IOK_OK ? next_line(&r) : NULL;
    if (extra)
        rc = bad(&r, "unexpected text after the last level's boxes: ", extra);
    free(copy);
    if (rc != IOK_OK)
        abr_free(g);
    return rc;
}

/* ---- writing ---- */

int
abr_write(FILE *f, const struct abr_grid *g, const char *comment)
{
    for (const char *c = comment; c && *c;) {
        const char *nl = strchr(c, '\n');
        int len = nl ? (int)(nl - c) : (int)strlen(c);
        fprintf(f, "! %.*s\n", len, c);
        c += len + (nl != NULL);
    }
    const struct amr_box *d = &g->domain0;
    fprintf(f,
            "ABR file format version 0.1\nNumber of Levels = %d\nRefinement Ratio =", g->nlevels);
    for (int l = 0; l < g->nlevels - 1; l++)
        fprintf(f, " %d", g->ratio[l]);
    fprintf(f,
            "\nCell Centering = 0\nNumber of Time Steps = 1\nNumber of Processors = %d\n"
            "Level 0 Domain = (%d,%d,%d)(%d,%d,%d)\nTimeStep: 0\n",
            g->nprocs > 0 ? g->nprocs : 1, d->lo[0], d->lo[1], d->lo[2], d->hi[0], d->hi[1],
            d->hi[2]);
    for (int l = 0; l < g->nlevels; l++) {
        const struct amr_boxlist *bl = &g->boxes[l];
        fprintf(f, "Number of Boxes on Level %d: %d\n", l, bl->n);
        for (int i = 0; i < bl->n; i++) {
            const struct amr_box *b = &bl->b[i];
            fprintf(f, "(%d,%d,%d)(%d,%d,%d)[0]%s", b->lo[0], b->lo[1], b->lo[2], b->hi[0],
                    b->hi[1], b->hi[2], i % 4 == 3 || i == bl->n - 1 ? "\n" : " ");
        }
    }
    return ferror(f) ? -1 : 0;
}
