/* SPDX-License-Identifier: BSD-3-Clause */
/* PIO .dat decomposition files (pure parser, unit-tested). */
#include "e3sm_dat.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
    const char *p;
    int line;
};

/* Moves to the start of the next non-empty line; returns it or NULL. */
static const char *
next_line(struct cursor *c)
{
    while (*c->p) {
        const char *s = c->p;
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (*s == '\n') {
            c->p = s + 1;
            c->line++;
            continue;
        }
        return *s ? s : NULL;
    }
    return NULL;
}

static void
skip_line(struct cursor *c)
{
    const char *nl = strchr(c->p, '\n');
    c->p = nl ? nl + 1 : c->p + strlen(c->p);
    c->line++;
}

/* Reads up to max integers from the current line; returns how many. */
static int64_t
read_ints(struct cursor *c, int64_t *out, int64_t max, int *bad)
{
    int64_t n = 0;
    const char *s = c->p;
    *bad = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (*s == '\n' || *s == '\0')
            break;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || (*end && !isspace((unsigned char)*end))) {
            *bad = 1;
            break;
        }
        if (n < max && out)
            out[n] = v;
        n++;
        s = end;
    }
    c->p = s;
    skip_line(c);
    return n;
}

static int
grow(int64_t **a, int64_t *cap, int64_t need)
{
    if (need <= *cap)
        return 0;
    int64_t ncap = *cap ? *cap : 1024;
    while (ncap < need)
        ncap *= 2;
    int64_t *p = realloc(*a, (size_t)ncap * sizeof *p);
    if (!p)
        return -1;
    *a = p;
    *cap = ncap;
    return 0;
}

int
e3sm_dat_parse(const char *text, struct e3sm_dat *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    const size_t textlen = strlen(text);
    struct cursor c = {text, 1};
    long long npes, ndims;
    int bad;
    const char *s = next_line(&c);
    if (!s || sscanf(s, "version %*d npes %lld ndims %lld", &npes, &ndims) != 2) {
        snprintf(err, errlen, "line %d: expected 'version V npes N ndims K'", c.line);
        return -1;
    }
    /* more than ten million ranks is no run PIO has written: a damaged file */
    if (npes < 1 || npes > 10000000 || ndims < 1 || ndims > E3SM_MAX_DDIMS) {
        snprintf(err, errlen,
                 "line %d: npes %lld, ndims %lld: need 1 <= npes <= 10000000, 1 <= ndims <= %d",
                 c.line, npes, ndims, E3SM_MAX_DDIMS);
        return -1;
    }
    skip_line(&c);
    int64_t fdims[E3SM_MAX_DDIMS];
    next_line(&c);
    int dl = c.line;
    if (!*c.p || read_ints(&c, fdims, ndims, &bad) != ndims || bad) {
        snprintf(err, errlen, "line %d: expected %lld dimension sizes", dl, ndims);
        return -1;
    }
    d->nprocs = npes;
    d->ndims = (int)ndims;
    d->total = 1;
    char dimtext[E3SM_MAX_DDIMS * 24 + 16] = "";
    for (int k = 0; k < d->ndims; k++) {
        if (fdims[k] < 1 || fdims[k] > (INT64_C(1) << 40) / d->total) {
            snprintf(err, errlen,
                     "line %d: dimension sizes must be positive, at most 2^40 elements in all", dl);
            return -1;
        }
        d->dims[k] = fdims[d->ndims - 1 - k];
        d->total *= fdims[k];
        size_t used = strlen(dimtext);
        snprintf(dimtext + used, sizeof dimtext - used, "%s%lld", k ? " " : "",
                 (long long)fdims[k]);
    }
    snprintf(dimtext + strlen(dimtext), sizeof dimtext - strlen(dimtext), " on line %d", dl);
    int64_t dimx = fdims[0], ocap = 0, lcap = 0, rcap = 0, tcap = 0, *tmp = NULL, covered = 0;
    d->nreqs = calloc((size_t)npes, sizeof *d->nreqs);
    d->raw_nreqs = calloc((size_t)npes, sizeof *d->raw_nreqs);
    unsigned char *map = calloc((size_t)d->total, 1);
    int rc = 0;
    if (!d->nreqs || !d->raw_nreqs || !map) {
        snprintf(err, errlen, "out of memory for %lld ranks and %lld elements", (long long)npes,
                 (long long)d->total);
        rc = -1;
    }
    for (int64_t rank = 0; rank < npes && rc == 0;) {
        s = next_line(&c);
        if (!s || !strncmp(s, "Obtained", 8))
            break; /* no requests for the remaining ranks */
        int64_t hdr[2];
        int ln = c.line;
        if (read_ints(&c, hdr, 2, &bad) != 2 || bad || hdr[0] < rank || hdr[0] >= npes ||
            hdr[1] < 0) {
            snprintf(err, errlen,
                     "line %d: expected 'rank count' with rank %lld..%lld in ascending order", ln,
                     (long long)rank, (long long)npes - 1);
            rc = -1;
            break;
        }
        rank = hdr[0];
        if (hdr[1] == 0) {
            rank++;
            continue;
        }
        ln = c.line;
        /* each offset takes at least two bytes of the text: a count beyond
         * that is a broken file, not a reason to allocate */
        if ((uint64_t)hdr[1] > (textlen - (size_t)(c.p - text)) / 2 + 1) {
            snprintf(err, errlen, "line %d: rank %lld says %lld offsets, the file is shorter", ln,
                     (long long)rank, (long long)hdr[1]);
            rc = -1;
            break;
        }
        if (!next_line(&c) || grow(&tmp, &tcap, hdr[1]) ||
            read_ints(&c, tmp, hdr[1], &bad) != hdr[1] || bad) {
            snprintf(err, errlen, "line %d: rank %lld should list %lld offsets", ln,
                     (long long)rank, (long long)hdr[1]);
            rc = -1;
            break;
        }
        if (grow(&d->off, &ocap, d->npairs + hdr[1]) || grow(&d->len, &lcap, d->npairs + hdr[1]) ||
            grow(&d->raw, &rcap, d->nraw + hdr[1])) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
            break;
        }
        int64_t first = d->npairs;
        for (int64_t j = 0; j < hdr[1]; j++) {
            int64_t o = tmp[j];
            if (o < 0) {
                snprintf(err, errlen, "line %d: negative offset %lld", ln, (long long)o);
                rc = -1;
                break;
            }
            if (o > d->total) { /* dat2decomp drops it silently: a broken map */
                snprintf(err, errlen,
                         "line %d: offset %lld is beyond the global array of %lld elements "
                         "(dimensions %s): not a decomposition of this array",
                         ln, (long long)o, (long long)d->total, dimtext);
                rc = -1;
                break;
            }
            if (o == 0)
                continue;
            o--;
            covered += !map[o];
            map[o] = 1;
            d->raw[d->nraw++] = o + 1; /* PIO numbering, as Dn.raw_offsets */
            d->raw_nreqs[rank]++;
            int64_t k = d->npairs - 1;
            if (k >= first && o == d->off[k] + d->len[k] && o % dimx != 0) {
                d->len[k]++;
            } else {
                d->off[d->npairs] = o;
                d->len[d->npairs++] = 1;
            }
        }
        d->nreqs[rank] = d->npairs - first;
        rank++;
    }
    free(tmp);
    if (rc == 0) {
        /* counted as they come: a scan of the whole array would cost its size */
        d->fully_covered = covered == d->total;
        d->max_nreqs = d->min_nreqs = d->nreqs[0];
        for (int64_t r = 1; r < npes; r++) {
            d->max_nreqs = d->nreqs[r] > d->max_nreqs ? d->nreqs[r] : d->max_nreqs;
            d->min_nreqs = d->nreqs[r] < d->min_nreqs ? d->nreqs[r] : d->min_nreqs;
        }
        d->max_len = d->min_len = d->npairs ? d->len[0] : 0;
        for (int64_t j = 1; j < d->npairs; j++) {
            d->max_len = d->len[j] > d->max_len ? d->len[j] : d->max_len;
            d->min_len = d->len[j] < d->min_len ? d->len[j] : d->min_len;
        }
    }
    free(map);
    if (rc)
        e3sm_dat_free(d);
    return rc;
}

void
e3sm_dat_free(struct e3sm_dat *d)
{
    free(d->nreqs);
    free(d->raw_nreqs);
    free(d->off);
    free(d->len);
    free(d->raw);
    memset(d, 0, sizeof *d);
}
