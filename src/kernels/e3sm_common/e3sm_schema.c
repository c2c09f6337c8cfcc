/* SPDX-License-Identifier: BSD-3-Clause */
/* E3SM cases and history file schemas (pure, tested end to end by the
 * header comparisons). */
#include "e3sm_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iokernels/error.h"

#include "e3sm_cdl.h"

static const struct e3sm_hist f_hist[] = {
    {"_h0", "f_case_h0.cdl", "F_h0", "h0", 1},
    {"_h1", "f_case_h1.cdl", "F_h1", "h1", 0},
};
static const struct e3sm_hist g_hist[] = {{"", "g_case.cdl", "G", "hist", 0}};
static const struct e3sm_hist i_hist[] = {
    {"_h0", "i_case_h0.cdl", "I_h0", "h0", 0},
    {"_h1", "i_case_h1.cdl", "I_h1", "h1", 1},
};

const char *
e3sm_case_name(enum e3sm_case_id id)
{
    return id == E3SM_CASE_F ? "F" : id == E3SM_CASE_G ? "G" : "I";
}

int
e3sm_case_detect(const struct e3sm_decomps *d, enum e3sm_case_id *id, const struct e3sm_hist **hist,
                 int *nhist, char *err, size_t errlen)
{
    /* decomposition ranks (number of dimensions) of each case */
    static const int shapes[3][E3SM_MAX_DECOMP] = {{1, 1, 2}, {1, 1, 2, 2, 2, 2}, {2, 3, 3, 3, 3}};
    static const int counts[3] = {3, 6, 5};
    for (int c = 0; c < 3; c++) {
        if (d->ndecomp != counts[c])
            continue;
        for (int i = 0; i < d->ndecomp; i++)
            if (d->d[i].ndims != shapes[c][i]) {
                snprintf(err, errlen,
                         "%d decompositions make the %s case, whose D%d has %d dimensions, not "
                         "%d",
                         d->ndecomp, e3sm_case_name((enum e3sm_case_id)c), i + 1, shapes[c][i],
                         d->d[i].ndims);
                return -1;
            }
        *id = (enum e3sm_case_id)c;
        *hist = c == 0 ? f_hist : c == 1 ? g_hist : i_hist;
        *nhist = c == 1 ? 1 : 2;
        return 0;
    }
    snprintf(err, errlen,
             "%d decompositions: the F case has 3, the G case 6, the I case 5 (the case is "
             "recognised from the decomposition file)",
             d->ndecomp);
    return -1;
}

/* The decomposition of each variable of one file, from variables.tsv:
 * "case index name type dims decomp record", '#' comments. */
static int
tsv_decomps(const char *tsv, const char *key, const struct iok_schema *s, int *out, char *err,
            size_t errlen)
{
    for (int v = 0; v < s->nvars; v++)
        out[v] = -1;
    char *copy = strdup(tsv), *save = NULL;
    int line = 0, rc = 0;
    for (char *l = strtok_r(copy, "\n", &save); l && !rc; l = strtok_r(NULL, "\n", &save)) {
        line++;
        if (l[0] == '#' || !l[0])
            continue;
        char *f[7], *fs = NULL;
        int n = 0;
        for (char *t = strtok_r(l, "\t", &fs); t && n < 7; t = strtok_r(NULL, "\t", &fs))
            f[n++] = t;
        if (n < 7) {
            snprintf(err, errlen, "variables.tsv line %d: expected 7 tab-separated columns", line);
            rc = -1;
            break;
        }
        if (strcmp(f[0], key))
            continue;
        int v = iok_schema_find_var(s, f[2]);
        if (v < 0)
            continue; /* a variable of the table the header does not have: checked below */
        int dn = 0;
        if (strcmp(f[5], "-") &&
            (sscanf(f[5], "D%d", &dn) != 1 || dn < 1 || dn > E3SM_MAX_DECOMP)) {
            snprintf(err, errlen, "variables.tsv line %d: decomposition '%s' is not - or D1..D6",
                     line, iok_quote(f[5]));
            rc = -1;
            break;
        }
        int rec = f[6][0] == 'Y';
        if (rec != iok_var_is_record(s, v)) {
            snprintf(err, errlen, "variables.tsv line %d: %s is %sa record variable in the header",
                     line, f[2], rec ? "not " : "");
            rc = -1;
            break;
        }
        out[v] = dn;
    }
    free(copy);
    for (int v = 0; v < s->nvars && !rc; v++)
        if (out[v] < 0) {
            snprintf(err, errlen, "variable %s of the %s header is missing from variables.tsv",
                     s->vars[v].name, key);
            rc = -1;
        }
    return rc;
}

int
e3sm_schema_build(const char *cdl, const char *tsv, const struct e3sm_hist *h,
                  const struct e3sm_decomps *d, int64_t nrecs, struct iok_schema *s,
                  int **var_decomp, char *err, size_t errlen)
{
    char why[512];
    *var_decomp = NULL;
    if (e3sm_cdl_parse(cdl, nrecs, s, why, sizeof why)) {
        snprintf(err, errlen, "%s %s", h->cdl, why);
        return -1;
    }
    int *vd = calloc((size_t)s->nvars + 1, sizeof *vd);
    if (tsv_decomps(tsv, h->key, s, vd, err, errlen)) {
        free(vd);
        return -1;
    }
    /* the decomposed (fastest) dimensions of each variable take the sizes of
     * its decomposition; two decompositions must agree on a shared one */
    int *from = calloc((size_t)s->ndims + 1, sizeof *from);
    for (int v = 0; v < s->nvars; v++) {
        if (!vd[v])
            continue;
        const struct iok_var *var = &s->vars[v];
        if (vd[v] > d->ndecomp) {
            snprintf(err, errlen, "variable %s uses D%d but the decomposition file has %d",
                     var->name, vd[v], d->ndecomp);
            goto fail;
        }
        const struct e3sm_decomp *dc = &d->d[vd[v] - 1];
        int fixed = var->ndims - iok_var_is_record(s, v);
        if (fixed != dc->ndims) {
            snprintf(err, errlen, "variable %s has %d fixed dimensions but D%d has %d", var->name,
                     fixed, vd[v], dc->ndims);
            goto fail;
        }
        for (int j = 0; j < dc->ndims; j++) {
            int dim = var->dimids[var->ndims - dc->ndims + j];
            if (from[dim] && s->dims[dim].len != dc->dims[j]) {
                snprintf(err, errlen,
                         "dimension %s is %lld long by D%d but %lld by D%d: the decompositions "
                         "do not fit the %s case",
                         s->dims[dim].name, (long long)s->dims[dim].len, from[dim],
                         (long long)dc->dims[j], vd[v], h->key);
                goto fail;
            }
            s->dims[dim].len = dc->dims[j];
            from[dim] = vd[v];
        }
    }
    free(from);
    *var_decomp = vd;
    return 0;
fail:
    free(from);
    free(vd);
    return -1;
}

int
e3sm_schema_float_to_double(struct iok_schema *s)
{
    for (int i = 0; i < s->nattrs; i++) {
        struct iok_attr *a = &s->attrs[i];
        if (a->owner < 0 || s->vars[a->owner].type != IOK_FLOAT || a->type != IOK_FLOAT ||
            strcmp(a->name, "_FillValue"))
            continue;
        double *d = malloc((a->len ? a->len : 1) * sizeof *d);
        if (!d)
            return -1;
        for (size_t k = 0; k < a->len; k++)
            d[k] = ((const float *)a->value)[k];
        free(a->value);
        a->value = d;
        a->type = IOK_DOUBLE;
    }
    for (int v = 0; v < s->nvars; v++)
        if (s->vars[v].type == IOK_FLOAT)
            s->vars[v].type = IOK_DOUBLE;
    return 0;
}
