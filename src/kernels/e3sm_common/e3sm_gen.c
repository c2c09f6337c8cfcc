/* SPDX-License-Identifier: BSD-3-Clause */
/* Generated E3SM decompositions: the parameters, read through the case's
 * entry (e3sm_gen_case.h), and the common part (pairs to runs, this rank's
 * share). */
#include "e3sm_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

/* ---- parameters ---- */

/* The cases, one entry each (e3sm_gen_case.h). */
static const struct e3sm_gen_case *const cases[] = {&e3sm_gen_case_f, &e3sm_gen_case_g,
                                                    &e3sm_gen_case_i};

/* every case's key, after its own */
static const struct e3sm_gen_key procs_key = E3SM_GEN_KEY("procs", procs, 1, 100000000);

static void
key_names(const struct e3sm_gen_key *k, const char *extra, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (; k->name && n < len; k++)
        n += (size_t)snprintf(out + n, len - n, "%s, ", k->name);
    if (n < len)
        snprintf(out + n, len - n, "%s%s%s", procs_key.name, extra ? ", " : "", extra ? extra : "");
}

static int64_t *
key_value(struct e3sm_gen *g, const struct e3sm_gen_key *k)
{
    return (int64_t *)((char *)g + k->at);
}

/* g->spec: "f:" and every parameter, the case's own, its extra, procs */
static void
spell(struct e3sm_gen *g)
{
    const struct e3sm_gen_case *c = g->kase;
    size_t n = (size_t)snprintf(g->spec, sizeof g->spec, "%c:", c->name), len = sizeof g->spec;
    for (const struct e3sm_gen_key *k = c->keys; k->name && n < len; k++)
        n += (size_t)snprintf(g->spec + n, len - n, "%s=%lld,", k->name,
                              (long long)*key_value(g, k));
    if (c->extra && n < len) {
        n += (size_t)snprintf(g->spec + n, len - n, "%s=", c->extra);
        if (n < len)
            c->spell_extra(g, g->spec + n, len - n);
        n = strlen(g->spec);
        if (n < len)
            n += (size_t)snprintf(g->spec + n, len - n, ",");
    }
    if (n < len)
        snprintf(g->spec + n, len - n, "%s=%lld", procs_key.name, (long long)g->procs);
}

int
e3sm_gen_parse(const char *spec, struct e3sm_gen *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->procs = 16;
    for (size_t i = 0; i < sizeof cases / sizeof *cases && !g->kase; i++)
        if (spec[0] == cases[i]->name && (spec[1] == ':' || !spec[1]))
            g->kase = cases[i];
    if (!g->kase) {
        snprintf(err, errlen,
                 "--generate %s: give the case first, f, g or i, then its parameters, e.g. "
                 "f:ne=30,procs=512",
                 spec);
        return -1;
    }
    const struct e3sm_gen_case *c = g->kase;
    c->defaults(g);
    char *copy = strdup(spec[1] ? spec + 2 : ""), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        char names[160];
        key_names(c->keys, c->extra, names, sizeof names);
        if (!eq) {
            snprintf(err, errlen, "--generate %s: '%s' is not KEY=VALUE (keys: %s)", spec, t,
                     names);
            rc = -1;
            break;
        }
        *eq = '\0';
        if (c->extra && !strcmp(t, c->extra)) {
            rc = c->parse_extra(eq + 1, g, err, errlen);
            continue;
        }
        const struct e3sm_gen_key *k = c->keys;
        while (k->name && strcmp(k->name, t))
            k++;
        if (!k->name && !strcmp(t, procs_key.name))
            k = &procs_key;
        if (!k->name) {
            snprintf(err, errlen, "--generate %s: unknown parameter '%s' (keys: %s)", spec, t,
                     names);
            rc = -1;
            break;
        }
        char *end;
        long long v = strtoll(eq + 1, &end, 10);
        if (end == eq + 1 || *end || v < k->min || v > k->max) {
            snprintf(err, errlen, "--generate %s: %s=%s must be an integer in %lld..%lld", spec, t,
                     eq + 1, (long long)k->min, (long long)k->max);
            rc = -1;
            break;
        }
        *key_value(g, k) = v;
    }
    free(copy);
    if (rc)
        return rc;
    char why[400];
    if (c->setup(g, why, sizeof why)) {
        snprintf(err, errlen, "--generate %s: %s", spec, why);
        return -1;
    }
    memset(g->ndims, 0, sizeof g->ndims);
    c->dims(g);
    spell(g);
    return 0;
}

void
e3sm_gen_free(struct e3sm_gen *g)
{
    if (g->tab) {
        void **t = g->tab; /* every case's table: an array of malloc'ed pointers, NULL-ended */
        for (int i = 0; t[i]; i++)
            free(t[i]);
        free(t);
    }
    g->tab = NULL;
}

int
e3sm_gen_pairs(const struct e3sm_gen *g, int d, int64_t r, struct e3sm_runs *out)
{
    if (r < 0 || r >= g->procs)
        return 0;
    return g->kase->pairs(g, d, r, out);
}

int
e3sm_gen_runs(const struct e3sm_gen *g, int d, int64_t first, int64_t count, struct e3sm_runs *out,
              int64_t *pairs, char *err, size_t errlen)
{
    struct e3sm_runs p = {0};
    int64_t total = 1;
    for (int k = 0; k < g->ndims[d]; k++)
        total *= g->dims[d][k];
    for (int64_t r = first; r < first + count; r++)
        if (e3sm_gen_pairs(g, d, r, &p)) {
            e3sm_runs_free(&p);
            snprintf(err, errlen, "out of memory generating D%d", d + 1);
            return -1;
        }
    if (pairs)
        *pairs = p.n;
    int rc =
        e3sm_runs_build(p.off, p.len, p.n, g->dims[d][g->ndims[d] - 1], total, out, err, errlen);
    e3sm_runs_free(&p);
    return rc;
}

int
e3sm_gen_decomps(const struct e3sm_gen *g, MPI_Comm comm, struct e3sm_decomps *out)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    memset(out, 0, sizeof *out);
    out->ndecomp = g->ndecomp;
    out->decomp_nprocs = g->procs;
    out->layout = E3SM_LAYOUT_MAP;
    snprintf(out->format, sizeof out->format, "generated");
    int64_t first, count;
    e3sm_assign(g->procs, nprocs, rank, &first, &count);
    for (int d = 0; d < g->ndecomp; d++) {
        struct e3sm_decomp *x = &out->d[d];
        x->ndims = g->ndims[d];
        x->total = 1;
        for (int k = 0; k < x->ndims; k++) {
            x->dims[k] = g->dims[d][k];
            x->total *= x->dims[k];
        }
        char why[256];
        if (e3sm_gen_runs(g, d, first, count, &x->runs, &x->file_pairs, why, sizeof why)) {
            e3sm_decomps_free(out);
            return iok_error(IOK_EIO, "--generate %s: D%d: %s", g->spec, d + 1, why);
        }
    }
    return IOK_OK;
}

int
e3sm_gen_load(const char *spec, MPI_Comm comm, struct e3sm_decomps *out, char *label, size_t len)
{
    struct e3sm_gen g;
    char why[512];
    memset(out, 0, sizeof *out);
    if (e3sm_gen_parse(spec, &g, why, sizeof why)) {
        e3sm_gen_free(&g);
        return iok_error(IOK_EUSAGE, "%s", why);
    }
    snprintf(label, len, "generated %s", g.spec);
    int rc = e3sm_gen_decomps(&g, comm, out);
    e3sm_gen_free(&g);
    return rc;
}
