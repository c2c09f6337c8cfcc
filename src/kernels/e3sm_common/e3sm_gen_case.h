/* SPDX-License-Identifier: BSD-3-Clause */
/* A case of the E3SM generator as one entry of a table (e3sm_gen.c reads
 * it; each case file defines its entry and includes nothing of its
 * caller): its parameters, its defaults, its setup, its decompositions'
 * dimensions and its pairs. */
#ifndef IOKERNELS_E3SM_GEN_CASE_H
#define IOKERNELS_E3SM_GEN_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "e3sm_decomp.h"
#include "e3sm_gen_pairs.h"

struct e3sm_gen_case;

struct e3sm_gen {
    const struct e3sm_gen_case *kase;
    int64_t procs;
    /* F */
    int64_t ne, np, nlev, pcols;
    /* G (edges, vertices < 0: not given) */
    int64_t cells, edges, vertices, vlev;
    /* I (land < 0: not given) */
    int64_t nlat, nlon, land, lev[4];
    char spec[256]; /* the parameters, all spelled out */
    int ndecomp;
    int ndims[E3SM_MAX_DECOMP];
    int64_t dims[E3SM_MAX_DECOMP][E3SM_MAX_DDIMS];
    void *tab; /* the case's tables: an array of malloc'ed pointers, NULL-ended */
};

/* A KEY=VALUE parameter: the int64_t at offset `at` of struct e3sm_gen. */
struct e3sm_gen_key {
    const char *name;
    size_t at;
    int64_t min, max;
};
#define E3SM_GEN_KEY(n, f, lo, hi)                                                                 \
    {                                                                                              \
        n, offsetof(struct e3sm_gen, f), lo, hi                                                    \
    }

struct e3sm_gen_case {
    char name; /* 'f' in "f:ne=30,procs=512" */
    /* NULL-ended; procs is everyone's (e3sm_gen.c), named after them */
    const struct e3sm_gen_key *keys;
    /* A key of a syntax of its own (I: levels=A/B/C/D), or NULL: parsed
     * from its value, spelled into out (the value only). */
    const char *extra;
    int (*parse_extra)(const char *value, struct e3sm_gen *g, char *err, size_t errlen);
    void (*spell_extra)(const struct e3sm_gen *g, char *out, size_t len);
    void (*defaults)(struct e3sm_gen *g);
    /* After the parameters: what follows from them, their checks, the
     * tables (g->tab). err: why not, without the spec (the caller adds it). */
    int (*setup)(struct e3sm_gen *g, char *err, size_t errlen);
    void (*dims)(struct e3sm_gen *g); /* ndecomp, ndims, dims */
    /* Raw pairs of decomposition d (0-based) of decomposition rank r,
     * appended to out. 0 or -1 (out of memory). */
    int (*pairs)(const struct e3sm_gen *g, int d, int64_t r, struct e3sm_runs *out);
};

/* the cases, in e3sm_gen_f.c, e3sm_gen_g.c and e3sm_gen_i.c */
extern const struct e3sm_gen_case e3sm_gen_case_f, e3sm_gen_case_g, e3sm_gen_case_i;

#endif
