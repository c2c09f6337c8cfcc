/* SPDX-License-Identifier: BSD-3-Clause */
/* The replay file's parser: one line at a time, fields split at spaces,
 * every number checked (decimal, in range, no overflow); the first error
 * ends the parse with "PATH line N: what". Lines have no length limit: an
 * op line of a collective call may list 100,000 segments. */
#include "replay_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"
#include "iokernels/grow.h"

struct cursor {
    const char *path;
    int line;
    char *p; /* the rest of the line */
};

static int
bad(const struct cursor *c, const char *what, const char *got)
{
    if (got)
        return iok_error(IOK_EUSAGE, "%s line %d: %s, got '%s'", c->path, c->line, what,
                         iok_quote(got));
    return iok_error(IOK_EUSAGE, "%s line %d: %s", c->path, c->line, what);
}

/* The next field, or NULL at the end of the line. */
static char *
field(struct cursor *c)
{
    while (*c->p == ' ' || *c->p == '\t')
        c->p++;
    if (!*c->p)
        return NULL;
    char *f = c->p;
    while (*c->p && *c->p != ' ' && *c->p != '\t')
        c->p++;
    if (*c->p)
        *c->p++ = '\0';
    return f;
}

/* A decimal integer in [0, max]. */
static int
number(struct cursor *c, const char *what, int64_t max, int64_t *out)
{
    char *f = field(c);
    char msg[160];
    if (!f) {
        snprintf(msg, sizeof msg, "missing %s", what);
        return bad(c, msg, NULL);
    }
    int64_t v = 0;
    for (const char *q = f; *q; q++) {
        if (*q < '0' || *q > '9' || v > (max - (*q - '0')) / 10) {
            snprintf(msg, sizeof msg, "%s must be a decimal number from 0 to %lld", what,
                     (long long)max);
            return bad(c, msg, f);
        }
        v = v * 10 + (*q - '0');
    }
    *out = v;
    return IOK_OK;
}

static int
seconds(struct cursor *c, const char *what, double *out)
{
    char *f = field(c), msg[160];
    if (f && !strcmp(f, "-")) {
        *out = -1;
        return IOK_OK;
    }
    char *end = NULL;
    errno = 0;
    double v = f ? strtod(f, &end) : 0;
    if (!f || *end || errno || !isfinite(v) || v < 0 || strspn(f, "0123456789.eE+-") != strlen(f)) {
        snprintf(msg, sizeof msg, "%s must be seconds (a decimal number >= 0) or '-'", what);
        return bad(c, msg, f ? f : "");
    }
    *out = v;
    return IOK_OK;
}

int64_t
rp_data_bytes(const struct rp_data *d)
{
    return (d->nrec ? d->nrec : 1) * d->elems * (int64_t)iok_type_size(d->type);
}

int
rp_type_of(const char *word)
{
    for (int t = IOK_CHAR; t <= IOK_DOUBLE; t++)
        if (!strcmp(word, iok_type_name(t)))
            return t;
    return -1;
}

struct parse {
    struct rp_trace *t;
    int64_t ops_cap, segs_cap;
    int have_ranks;
};

static int
parse_file(struct parse *ps, struct cursor *c)
{
    struct rp_trace *t = ps->t;
    int64_t id, size;
    IOK_TRY(number(c, "file id", INT32_MAX, &id));
    if (id != t->nfiles) {
        char msg[120];
        snprintf(msg, sizeof msg, "file id %lld out of order: expected %d (ids are 0, 1, 2, ...)",
                 (long long)id, t->nfiles);
        return bad(c, msg, NULL);
    }
    IOK_TRY(number(c, "file size", INT64_MAX / 2, &size));
    while (*c->p == ' ')
        c->p++;
    if (!*c->p)
        return bad(c, "missing the file's path after its size", NULL);
    struct rp_file *f = realloc(t->files, (size_t)(t->nfiles + 1) * sizeof *f);
    if (!f)
        return bad(c, "out of memory", NULL);
    t->files = f;
    f = &t->files[t->nfiles++];
    *f = (struct rp_file){.size = size, .path = strdup(c->p)};
    return IOK_OK;
}

static int
parse_data(struct parse *ps, struct cursor *c)
{
    struct rp_trace *t = ps->t;
    int64_t id, nrec, elems;
    struct rp_data d = {0};
    IOK_TRY(number(c, "file id", INT32_MAX, &id));
    if (id >= t->nfiles)
        return bad(c, "data names a file not listed before it", NULL);
    IOK_TRY(number(c, "offset", INT64_MAX / 2, &d.off));
    char *w = field(c);
    int type = w ? rp_type_of(w) : -1;
    if (type < 0)
        return bad(c, "expected a type (char, byte, short, int, int64, float, double)", w ? w : "");
    d.type = (enum iok_type)type;
    IOK_TRY(number(c, "record count", INT32_MAX, &nrec));
    IOK_TRY(number(c, "element count", INT64_MAX / 16, &elems));
    d.nrec = nrec;
    d.elems = elems;
    char *h = field(c), *end = NULL;
    errno = 0;
    d.hash = h ? strtoull(h, &end, 16) : 0;
    if (!h || *end || errno || strlen(h) != 16)
        return bad(c, "expected the variable's hash (16 hex digits)", h ? h : "");
    while (*c->p == ' ')
        c->p++;
    if (!*c->p)
        return bad(c, "missing the variable's name", NULL);
    if (nrec > 0 && elems > (INT64_MAX / 16) / nrec)
        return bad(c, "the variable's size overflows", NULL);
    struct rp_file *f = &t->files[id];
    const struct rp_data *last = f->ndata ? &f->data[f->ndata - 1] : NULL;
    if (last && d.off < last->off + rp_data_bytes(last))
        return bad(c,
                   "data lines of a file must come in increasing offset order, "
                   "without overlap",
                   NULL);
    for (int i = 0; i < f->ndata; i++)
        if (nrec && f->data[i].nrec && f->data[i].nrec != nrec)
            return bad(c, "record variables of one file must have the same record count", NULL);
    struct rp_data *nd = realloc(f->data, (size_t)(f->ndata + 1) * sizeof *nd);
    if (!nd)
        return bad(c, "out of memory", NULL);
    f->data = nd;
    d.name = strdup(c->p);
    f->data[f->ndata++] = d;
    return IOK_OK;
}

struct numbered {
    int64_t off, end, num; /* a segment and its place in the op line (0-based) */
};

static int
cmp_numbered(const void *a, const void *b)
{
    const struct numbered *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off ? 1 : (x->num > y->num) - (x->num < y->num);
}

/* One operation's segments share no byte: MPI-IO takes no such file view
 * (MPI_File_set_view fails with MPI_ERR_TYPE at run time, and only on
 * mpiio), so the parse refuses them, naming two. Linear where they come in
 * order, as every writer lists them. */
static int
disjoint(const struct cursor *c, const struct iok_logseg *s, int64_t n)
{
    int64_t i = 1;
    while (i < n && s[i].off >= s[i - 1].off + s[i - 1].len)
        i++;
    if (i >= n)
        return IOK_OK;
    struct numbered *a = malloc((size_t)n * sizeof *a);
    if (!a)
        return bad(c, "out of memory", NULL);
    for (int64_t k = 0; k < n; k++)
        a[k] = (struct numbered){s[k].off, s[k].off + s[k].len, k};
    qsort(a, (size_t)n, sizeof *a, cmp_numbered);
    int64_t x = -1, y = -1;
    for (int64_t k = 1; k < n && x < 0; k++) /* sorted and disjoint up to k - 1 */
        if (a[k].off < a[k - 1].end) {
            x = a[k - 1].num < a[k].num ? a[k - 1].num : a[k].num;
            y = a[k - 1].num < a[k].num ? a[k].num : a[k - 1].num;
        }
    free(a);
    if (x < 0) /* out of order, yet disjoint */
        return IOK_OK;
    char msg[300];
    snprintf(msg, sizeof msg,
             "segments %lld (%lld+%lld) and %lld (%lld+%lld) overlap: one operation's segments "
             "must not share bytes (MPI-IO takes no such file view); merge them, or make two "
             "operations",
             (long long)x + 1, (long long)s[x].off, (long long)s[x].len, (long long)y + 1,
             (long long)s[y].off, (long long)s[y].len);
    return bad(c, msg, NULL);
}

static int
parse_op(struct parse *ps, struct cursor *c)
{
    struct rp_trace *t = ps->t;
    int64_t rank, file, nseg;
    if (!ps->have_ranks)
        return bad(c, "op before the 'ranks' line", NULL);
    IOK_TRY(number(c, "rank", INT32_MAX, &rank));
    if (rank >= t->ranks) {
        char msg[120];
        snprintf(msg, sizeof msg, "rank %lld, but the trace has %d ranks (0 to %d)",
                 (long long)rank, t->ranks, t->ranks - 1);
        return bad(c, msg, NULL);
    }
    IOK_TRY(number(c, "file id", INT32_MAX, &file));
    if (file >= t->nfiles)
        return bad(c, "op names a file id not listed before it", NULL);
    char *kind = field(c);
    if (!kind || (strcmp(kind, "write") && strcmp(kind, "read")))
        return bad(c, "expected the kind 'write' or 'read'", kind ? kind : "");
    char *level = field(c);
    int posix = level && !strcmp(level, "posix");
    if (!posix && (!level || (strcmp(level, "coll") && strcmp(level, "indep"))))
        return bad(c, "expected the level 'coll', 'indep' or 'posix'", level ? level : "");
    int lv = !posix && !strcmp(level, "coll") ? IOK_LEVEL_COLL : IOK_LEVEL_INDEP;
    struct iok_logop op = {.rank = (int)rank,
                           .file = (int)file,
                           .write = kind[0] == 'w',
                           .level = lv,
                           .posix = posix,
                           .line = c->line,
                           .start = -1,
                           .end = -1,
                           .seg0 = t->nsegs};
    IOK_TRY(seconds(c, "START", &op.start));
    IOK_TRY(seconds(c, "END", &op.end));
    if (op.start >= 0 && op.end >= 0 && op.end < op.start)
        return bad(c, "END is before START", NULL);
    IOK_TRY(number(c, "NSEG", INT32_MAX, &nseg));
    if (nseg == 0 && lv != IOK_LEVEL_COLL)
        return bad(c,
                   "NSEG 0 (no data) is allowed only for 'coll', a rank joining a "
                   "collective call",
                   NULL);
    /* room grows with the segments read, not with NSEG: a wrong NSEG asks for nothing */
    if (iok_grow((void **)&t->ops, &ps->ops_cap, t->nops + 1, sizeof *t->ops))
        return bad(c, "out of memory", NULL);
    for (int64_t i = 0; i < nseg; i++) {
        struct iok_logseg s;
        char what[64];
        if (!*c->p || !c->p[strspn(c->p, " \t")]) {
            char msg[120];
            snprintf(msg, sizeof msg, "NSEG is %lld but only %lld OFFSET LENGTH pairs follow",
                     (long long)nseg, (long long)i);
            return bad(c, msg, NULL);
        }
        snprintf(what, sizeof what, "OFFSET of segment %lld", (long long)i + 1);
        IOK_TRY(number(c, what, INT64_MAX / 2, &s.off));
        snprintf(what, sizeof what, "LENGTH of segment %lld", (long long)i + 1);
        IOK_TRY(number(c, what, INT64_MAX / 2, &s.len));
        if (s.len == 0)
            return bad(c, "a segment's LENGTH must be > 0", NULL);
        if (iok_grow((void **)&t->segs, &ps->segs_cap, t->nsegs + i + 1, sizeof *t->segs))
            return bad(c, "out of memory", NULL);
        t->segs[t->nsegs + i] = s;
    }
    if (field(c)) {
        char msg[120];
        snprintf(msg, sizeof msg, "NSEG is %lld but more fields follow the last segment",
                 (long long)nseg);
        return bad(c, msg, NULL);
    }
    if (nseg > 0) /* no segments: no list yet (t->segs may be NULL) */
        IOK_TRY(disjoint(c, t->segs + t->nsegs, nseg));
    op.nseg = nseg;
    t->nsegs += nseg;
    t->ops[t->nops++] = op;
    return IOK_OK;
}

static int
parse_note(struct parse *ps, struct cursor *c)
{
    struct rp_trace *t = ps->t;
    while (*c->p == ' ' || *c->p == '\t')
        c->p++;
    char **n = realloc(t->notes, (size_t)(t->nnotes + 1) * sizeof *n);
    if (!n)
        return bad(c, "out of memory", NULL);
    t->notes = n;
    if (!(t->notes[t->nnotes] = strdup(c->p)))
        return bad(c, "out of memory", NULL);
    t->nnotes++;
    return IOK_OK;
}

/* end OPS CHECKS: the last line of a version 2 file, counting the op and
 * check lines before it; a file cut short lacks it (its check lines, at
 * the end, gone with it), one with lines lost counts otherwise. */
static int
parse_end(struct parse *ps, struct cursor *c)
{
    struct rp_trace *t = ps->t;
    int64_t ops, checks;
    IOK_TRY(number(c, "the op line count", INT64_MAX / 2, &ops));
    IOK_TRY(number(c, "the check line count", INT32_MAX, &checks));
    if (field(c))
        return bad(c, "'end' takes OPS CHECKS and nothing more", NULL);
    if (ops != t->nops || checks != t->nchecks) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "'end' counts %lld op and %lld check lines, but %lld and %d come before it: "
                 "lines are lost or added; copy or convert the file again",
                 (long long)ops, (long long)checks, (long long)t->nops, t->nchecks);
        return bad(c, msg, NULL);
    }
    t->ended = 1;
    return IOK_OK;
}

/* check RANK FILE NOPS BYTES DIGEST */
static int
parse_check(struct parse *ps, struct cursor *c)
{
    struct rp_trace *t = ps->t;
    int64_t rank, file, ops, bytes;
    if (!ps->have_ranks)
        return bad(c, "check before the 'ranks' line", NULL);
    IOK_TRY(number(c, "rank", INT32_MAX, &rank));
    if (rank >= t->ranks)
        return bad(c, "check names a rank the trace does not have", NULL);
    IOK_TRY(number(c, "file id", INT32_MAX, &file));
    if (file >= t->nfiles)
        return bad(c, "check names a file id not listed before it", NULL);
    IOK_TRY(number(c, "operation count", INT64_MAX / 2, &ops));
    IOK_TRY(number(c, "byte count", INT64_MAX / 2, &bytes));
    char *h = field(c), *end = NULL;
    unsigned long long hash = h && strlen(h) == 16 ? strtoull(h, &end, 16) : 0;
    if (!h || strlen(h) != 16 || !end || *end)
        return bad(c, "expected the sequence's digest (16 hex digits)", h ? h : "");
    if (field(c))
        return bad(c, "'check' takes RANK FILE OPS BYTES DIGEST and nothing more", NULL);
    for (int i = 0; i < t->nchecks; i++)
        if (t->checks[i].rank == rank && t->checks[i].file == file)
            return bad(c, "a second check line for this rank and file", NULL);
    struct rp_check *k = realloc(t->checks, (size_t)(t->nchecks + 1) * sizeof *k);
    if (!k)
        return bad(c, "out of memory", NULL);
    t->checks = k;
    t->checks[t->nchecks++] = (struct rp_check){(int)rank, (int)file, ops, bytes, hash};
    return IOK_OK;
}

static int
parse_line(struct parse *ps, struct cursor *c)
{
    struct rp_trace *t = ps->t;
    char *kw = field(c);
    if (!kw)
        return IOK_OK;
    if (t->ended)
        return bad(c, "a line after the 'end' line, which is the file's last", kw);
    if (!strcmp(kw, "end"))
        return parse_end(ps, c);
    if (!strcmp(kw, "op"))
        return parse_op(ps, c);
    if (!strcmp(kw, "file"))
        return parse_file(ps, c);
    if (!strcmp(kw, "data"))
        return parse_data(ps, c);
    if (!strcmp(kw, "note"))
        return parse_note(ps, c);
    if (!strcmp(kw, "check"))
        return parse_check(ps, c);
    if (!strcmp(kw, "coverage")) {
        int64_t a, b;
        if (t->cov_counted)
            return bad(c, "a second 'coverage' line", NULL);
        IOK_TRY(number(c, "the traced call count", INT64_MAX / 2, &a));
        IOK_TRY(number(c, "the counted call count", INT64_MAX / 2, &b));
        if (b == 0 || a > b || field(c))
            return bad(c,
                       "'coverage TRACED COUNTED' takes two counts, TRACED <= COUNTED, COUNTED > 0",
                       NULL);
        t->cov_traced = a;
        t->cov_counted = b;
        return IOK_OK;
    }
    if (!strcmp(kw, "ranks")) {
        int64_t n;
        if (ps->have_ranks)
            return bad(c, "a second 'ranks' line", NULL);
        IOK_TRY(number(c, "the rank count", INT32_MAX, &n));
        if (n < 1)
            return bad(c, "the rank count must be at least 1", NULL);
        if (field(c))
            return bad(c, "'ranks' takes one number", NULL);
        t->ranks = (int)n;
        ps->have_ranks = 1;
        return IOK_OK;
    }
    if (!strcmp(kw, "source")) {
        if (t->source)
            return bad(c, "a second 'source' line", NULL);
        while (*c->p == ' ')
            c->p++;
        t->source = strdup(c->p);
        return IOK_OK;
    }
    return bad(
        c, "unknown keyword (expected source, note, coverage, ranks, file, data, op, check or end)",
        kw);
}

int
rp_parse(const char *text, size_t len, const char *path, struct rp_trace *out)
{
    memset(out, 0, sizeof *out);
    struct parse ps = {.t = out};
    char *copy = malloc(len + 1);
    if (!copy)
        return iok_error(IOK_EIO, "out of memory reading %s", path);
    memcpy(copy, text, len);
    copy[len] = '\0';
    int rc = IOK_OK, header = 0, last = 0; /* the last line with text */
    struct cursor c = {path, 0, NULL};
    if (copy[strspn(copy, " \t\r\n")] == '\0') /* nothing at all, or only blank lines */
        len = 0;
    for (char *line = len ? copy : NULL; line && rc == IOK_OK;) {
        char *nl = memchr(line, '\n', len - (size_t)(line - copy));
        if (nl)
            *nl = '\0';
        c.line++;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r')
            line[n - 1] = '\0';
        if (line[strspn(line, " \t")])
            last = c.line;
        if (n != (size_t)((nl ? nl : copy + len) - line))
            rc = bad(&c, "a NUL byte: this is not a text file", NULL);
        else if (!header) {
            char *kw = (c.p = line, field(&c));
            int64_t v;
            if (!kw || strcmp(kw, "iokernels-replay"))
                rc = bad(&c, "expected 'iokernels-replay 2' (is this a replay file?)",
                         kw ? line : "");
            else if ((rc = number(&c, "the format version", INT32_MAX, &v)) == IOK_OK) {
                if (v < RP_VERSION_OLDEST || v > RP_VERSION)
                    rc = iok_error(IOK_EUSAGE,
                                   "%s line 1: replay format version %lld; this iokernels reads "
                                   "versions %d to %d",
                                   path, (long long)v, RP_VERSION_OLDEST, RP_VERSION);
                else if (field(&c))
                    rc = bad(&c, "the header is 'iokernels-replay VERSION' and nothing more", NULL);
                out->version = (int)v;
            }
            header = 1;
        } else if (line[strspn(line, " \t")] != '#') {
            c.p = line;
            rc = parse_line(&ps, &c);
        }
        line = nl ? nl + 1 : NULL;
    }
    if (rc == IOK_OK && !header)
        rc = iok_error(IOK_EUSAGE, "%s is empty: a replay file starts with 'iokernels-replay 2'",
                       path);
    if (rc == IOK_OK && out->version >= 2 && !out->ended)
        rc = iok_error(IOK_EUSAGE,
                       "%s line %d: the file ends here, without its last line 'end OPS CHECKS': "
                       "it is cut short (a copy or a transfer that stopped?); copy or convert "
                       "it again",
                       path, last);
    if (rc == IOK_OK && !ps.have_ranks)
        rc = iok_error(IOK_EUSAGE, "%s has no 'ranks' line: add 'ranks N' before the ops", path);
    free(copy);
    if (rc)
        rp_free(out);
    return rc;
}

void
rp_free(struct rp_trace *t)
{
    for (int f = 0; f < t->nfiles; f++) {
        for (int d = 0; d < t->files[f].ndata; d++)
            free(t->files[f].data[d].name);
        free(t->files[f].data);
        free(t->files[f].path);
    }
    free(t->files);
    free(t->ops);
    free(t->segs);
    free(t->source);
    for (int i = 0; i < t->nnotes; i++)
        free(t->notes[i]);
    free(t->notes);
    free(t->checks);
    memset(t, 0, sizeof *t);
}
