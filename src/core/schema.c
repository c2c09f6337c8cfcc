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
    free(s->dims);
    free(s->vars);
    free(s->attrs);
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

int
iok_schema_add_var(struct iok_schema *s, const char *name, enum iok_type type, int ndims,
                   const int *dimids)
{
    if (ndims < 0 || ndims > IOK_MAX_DIMS)
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
    memcpy(v->dimids, dimids, (size_t)ndims * sizeof *dimids);
    v->name_hash = name_hash(name);
    return s->nvars++;
}

int
iok_schema_add_attr(struct iok_schema *s, int owner, const char *name, enum iok_type type,
                    size_t len, const void *value)
{
    if (owner < IOK_GLOBAL || owner >= s->nvars ||
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
