/* SPDX-License-Identifier: BSD-3-Clause */
/* What a backend found on open against what the schema expects: one line
 * naming the file, the variable or dimension, the size found and the size
 * expected. A mismatch means the file was written with other options (a
 * larger --grid, another case, another type): usage, exit 2. */
#include <stdio.h>

#include "iokernels/error.h"
#include "iokernels/schema.h"

#define HINT "read it with the options it was written with"

int
iok_check_var_rank(const char *path, const struct iok_schema *s, int v, int found)
{
    const struct iok_var *var = &s->vars[v];
    if (found == var->ndims)
        return IOK_OK;
    return iok_error(IOK_EUSAGE, "%s: variable %s has %d dimensions in the file, %d expected: %s",
                     path, var->name, found, var->ndims, HINT);
}

int
iok_check_var_dim(const char *path, const struct iok_schema *s, int v, int k, int64_t found)
{
    const struct iok_var *var = &s->vars[v];
    const struct iok_dim *d = &s->dims[var->dimids[k]];
    /* a record dimension may hold more records than the run reads */
    if (d->unlimited ? found >= d->len : found == d->len)
        return IOK_OK;
    return iok_error(IOK_EUSAGE,
                     "%s: variable %s: dimension %s is %lld long in the file, %s%lld expected: %s",
                     path, var->name, d->name, (long long)found, d->unlimited ? "at least " : "",
                     (long long)d->len, HINT);
}

int
iok_check_var_type(const char *path, const struct iok_schema *s, int v, const char *found)
{
    const struct iok_var *var = &s->vars[v];
    return iok_error(IOK_EUSAGE, "%s: variable %s is %s in the file, %s expected: %s", path,
                     var->name, found, iok_type_name(var->type), HINT);
}

int
iok_check_file_size(const char *path, int64_t found, int64_t needed)
{
    if (found >= needed)
        return IOK_OK;
    return iok_error(IOK_EUSAGE,
                     "%s is shorter than its layout needs (%lld bytes found, %lld needed): "
                     "truncated, or written with other options",
                     path, (long long)found, (long long)needed);
}
