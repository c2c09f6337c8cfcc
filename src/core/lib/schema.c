/* SPDX-License-Identifier: BSD-3-Clause */
/* Building and querying schemas. */
#include "iokernels/schema.h"

#include <stdlib.h>
#include <string.h>

static const size_t type_sizes[] = {1, 1, 2, 4, 8, 4, 8};
static const char *const type_names[] = {"char",  "byte",  "short", "int",
                                         "int64", "float", "double"};

size_t
iok_type_size(enum iok_type t)
{
    return type_sizes[t];
}

const char *
iok_type_name(enum iok_type t)
{
    return type_names[t];
}

void
iok_schema_init(struct iok_schema *s)
{
    memset(s, 0, sizeof *s);
}

void
iok_schema_free(struct iok_schema *s)
{
    for (int i = 0; i < s->ndims; i++)
        free(s->dims[i].name);
    for (int i = 0; i < s->nvars; i++)
        free(s->vars[i].name);
    for (int i = 0; i < s->nattrs; i++) {
        free(s->attrs[i].name);
        free(s->attrs[i].value);
    }
    for (int i = 0; i < s->ngroups; i++)
        free(s->groups[i].path);
    for (int i = 0; i < s->ncompounds; i++) {
        for (int k = 0; k < s->compounds[i].nfields; k++)
            free(s->compounds[i].fields[k]);
        free(s->compounds[i].fields);
    }
    free(s->dims);
    free(s->vars);
    free(s->attrs);
    free(s->groups);
    free(s->compounds);
    iok_schema_init(s);
}

/* Grows an array of n elements of `size` bytes to hold one more. */
static int
grow(void **arr, int n, int *cap, size_t size)
{
    if (n < *cap)
        return 0;
    int ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)ncap * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* FNV-1a: a stable identity for a variable name. */
static uint64_t
name_hash(const char *name)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

int
iok_schema_add_dim(struct iok_schema *s, const char *name, int64_t len, int unlimited)
{
    if (len < 0 || grow((void **)&s->dims, s->ndims, &s->cap_dims, sizeof *s->dims))
        return -1;
    struct iok_dim *d = &s->dims[s->ndims];
    d->name = strdup(name);
    d->len = len;
    d->unlimited = unlimited;
    return s->ndims++;
}

/* Index of the group holding `path`'s last component (its parent path), -1
 * for the root, -2 when that parent is not a listed group. */
static int
parent_group(const struct iok_schema *s, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return -1;
    size_t n = (size_t)(slash - path);
    for (int g = 0; g < s->ngroups; g++)
        if (strlen(s->groups[g].path) == n && !strncmp(s->groups[g].path, path, n))
            return g;
    return -2;
}

int
iok_schema_add_var(struct iok_schema *s, const char *name, enum iok_type type, int ndims,
                   const int *dimids)
{
    if (ndims < 0 || ndims > IOK_MAX_DIMS || parent_group(s, name) < -1)
        return -1;
    for (int k = 0; k < ndims; k++)
        if (dimids[k] < 0 || dimids[k] >= s->ndims || (k > 0 && s->dims[dimids[k]].unlimited))
            return -1;
    if (grow((void **)&s->vars, s->nvars, &s->cap_vars, sizeof *s->vars))
        return -1;
    struct iok_var *v = &s->vars[s->nvars];
    memset(v, 0, sizeof *v);
    v->name = strdup(name);
    v->type = type;
    v->ndims = ndims;
    if (ndims > 0) /* a scalar may come with no list at all */
        memcpy(v->dimids, dimids, (size_t)ndims * sizeof *dimids);
    v->name_hash = name_hash(name);
    v->compound = -1;
    return s->nvars++;
}

int
iok_schema_add_attr(struct iok_schema *s, int owner, const char *name, enum iok_type type,
                    size_t len, const void *value)
{
    if (owner < IOK_GROUP(s->ngroups - 1) || owner >= s->nvars ||
        grow((void **)&s->attrs, s->nattrs, &s->cap_attrs, sizeof *s->attrs))
        return -1;
    struct iok_attr *a = &s->attrs[s->nattrs];
    a->owner = owner;
    a->name = strdup(name);
    a->type = type;
    a->len = len;
    size_t bytes = len * iok_type_size(type);
    a->value = malloc(bytes ? bytes : 1);
    if (bytes)
        memcpy(a->value, value, bytes);
    a->compound = -1;
    return s->nattrs++;
}

int
iok_schema_add_text_attr(struct iok_schema *s, int owner, const char *name, const char *text)
{
    return iok_schema_add_attr(s, owner, name, IOK_CHAR, strlen(text), text);
}

int
iok_schema_find_var(const struct iok_schema *s, const char *name)
{
    for (int i = 0; i < s->nvars; i++)
        if (strcmp(s->vars[i].name, name) == 0)
            return i;
    return -1;
}

int
iok_attr_group(int owner)
{
    return owner <= IOK_GROUP(0) ? IOK_GROUP(0) - owner : -1;
}

int
iok_schema_add_group(struct iok_schema *s, const char *path)
{
    size_t n = path ? strlen(path) : 0;
    if (n == 0 || path[0] == '/' || path[n - 1] == '/' || strstr(path, "//") ||
        parent_group(s, path) < -1)
        return -1;
    for (int g = 0; g < s->ngroups; g++)
        if (!strcmp(s->groups[g].path, path))
            return -1;
    if (grow((void **)&s->groups, s->ngroups, &s->cap_groups, sizeof *s->groups))
        return -1;
    s->groups[s->ngroups].path = strdup(path);
    return s->ngroups++;
}

int
iok_schema_add_compound(struct iok_schema *s, enum iok_type base, int nfields,
                        const char *const *fields)
{
    if (nfields < 1 || base == IOK_CHAR ||
        grow((void **)&s->compounds, s->ncompounds, &s->cap_compounds, sizeof *s->compounds))
        return -1;
    struct iok_compound *c = &s->compounds[s->ncompounds];
    c->base = base;
    c->nfields = nfields;
    c->fields = calloc((size_t)nfields, sizeof *c->fields);
    if (!c->fields)
        return -1;
    for (int k = 0; k < nfields; k++)
        c->fields[k] = strdup(fields[k]);
    return s->ncompounds++;
}

int
iok_schema_set_var_compound(struct iok_schema *s, int v, int compound)
{
    if (v < 0 || v >= s->nvars || compound < 0 || compound >= s->ncompounds)
        return -1;
    struct iok_var *var = &s->vars[v];
    const struct iok_compound *c = &s->compounds[compound];
    if (var->ndims < 1 || var->type != c->base ||
        iok_var_dim_len(s, v, var->ndims - 1) != c->nfields ||
        (var->ndims == 1 && iok_var_is_record(s, v)))
        return -1;
    var->compound = compound;
    return 0;
}

int
iok_schema_set_attr_compound(struct iok_schema *s, int a, int compound)
{
    if (a < 0 || a >= s->nattrs || compound < 0 || compound >= s->ncompounds)
        return -1;
    struct iok_attr *at = &s->attrs[a];
    const struct iok_compound *c = &s->compounds[compound];
    if (at->type != c->base || at->len == 0 || at->len % (size_t)c->nfields)
        return -1;
    at->compound = compound;
    return 0;
}

int64_t
iok_var_dim_len(const struct iok_schema *s, int v, int k)
{
    return s->dims[s->vars[v].dimids[k]].len;
}

int
iok_var_is_record(const struct iok_schema *s, int v)
{
    return s->vars[v].ndims > 0 && s->dims[s->vars[v].dimids[0]].unlimited;
}

int64_t
iok_var_record_elems(const struct iok_schema *s, int v)
{
    int64_t n = 1;
    for (int k = iok_var_is_record(s, v) ? 1 : 0; k < s->vars[v].ndims; k++)
        n *= iok_var_dim_len(s, v, k);
    return n;
}

int64_t
iok_var_total_elems(const struct iok_schema *s, int v)
{
    int64_t n = 1;
    for (int k = 0; k < s->vars[v].ndims; k++)
        n *= iok_var_dim_len(s, v, k);
    return n;
}
