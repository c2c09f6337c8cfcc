/* SPDX-License-Identifier: BSD-3-Clause */
/* Decomposition maps in ADIOS BP form (.bp), as E3SM-IO's datasets ship
 * them: the BP3 file of ADIOS 1.x, or a BP4/BP5 directory. Read with the
 * ADIOS2 library, each rank on its own (a serial ADIOS2 object per rank,
 * random access), as the other readers read in independent mode. The map's
 * arrays are 1-D global variables (Dn.nreqs, Dn.offsets, ...) of 32- or
 * 64-bit integers, Dn.dims a global attribute. A module of its own
 * (e3sm_read_bp), linked with ADIOS2. */
#include "e3sm_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <adios2_c.h>

#include "iokernels/error.h"

struct bp {
    adios2_adios *ad;
    adios2_io *io;
    adios2_engine *e;
};

static int
bp_var(struct e3sm_src *s, const char *name, adios2_variable **var, adios2_type *t, size_t *len)
{
    struct bp *b = s->h;
    *var = adios2_inquire_variable(b->io, name);
    if (!*var)
        return 0;
    size_t nd = 0;
    adios2_variable_ndims(&nd, *var);
    adios2_variable_type(t, *var);
    if (nd != 1)
        return -iok_error(IOK_EUSAGE, "%s: variable %s has %zu dimensions, expected 1", s->path,
                          name, nd);
    if (*t != adios2_type_int32_t && *t != adios2_type_int64_t)
        return -iok_error(IOK_EUSAGE, "%s: variable %s is not of 32- or 64-bit integers", s->path,
                          name);
    adios2_variable_shape(len, *var);
    return 1;
}

static int
bp_var_len(struct e3sm_src *s, const char *name, int64_t *len)
{
    adios2_variable *var;
    adios2_type t;
    size_t n = 0;
    int r = bp_var(s, name, &var, &t, &n);
    if (r == 1)
        *len = (int64_t)n;
    return r;
}

static int
bp_read(struct e3sm_src *s, const char *name, int64_t start, int64_t count, int64_t *buf)
{
    struct bp *b = s->h;
    adios2_variable *var;
    adios2_type t;
    size_t n = 0;
    int r = bp_var(s, name, &var, &t, &n);
    if (r <= 0)
        return r ? -r : iok_error(IOK_EUSAGE, "%s: no variable %s", s->path, name);
    if (start < 0 || count < 0 || (size_t)(start + count) > n)
        return iok_error(IOK_EUSAGE, "%s: %s holds %zu values, not [%lld, %lld)", s->path, name, n,
                         (long long)start, (long long)(start + count));
    if (count == 0)
        return IOK_OK;
    size_t st = (size_t)start, ct = (size_t)count;
    int32_t *narrow = t == adios2_type_int32_t ? malloc(ct * sizeof *narrow) : NULL;
    if (t == adios2_type_int32_t && !narrow)
        return iok_error(IOK_EIO, "out of memory reading %s of %s", name, s->path);
    adios2_error err = adios2_set_selection(var, 1, &st, &ct);
    if (err == adios2_error_none)
        err = adios2_get(b->e, var, narrow ? (void *)narrow : (void *)buf, adios2_mode_sync);
    for (size_t i = 0; narrow && err == adios2_error_none; i++) { /* widened in place */
        if (i == ct)
            break;
        buf[i] = narrow[i];
    }
    free(narrow);
    return err == adios2_error_none
               ? IOK_OK
               : iok_error(IOK_EUSAGE, "%s: reading %s failed (ADIOS2 error %d)", s->path, name,
                           (int)err);
}

static int
bp_att(struct e3sm_src *s, const char *name, int64_t *vals, int max)
{
    struct bp *b = s->h;
    adios2_attribute *a = adios2_inquire_attribute(b->io, name);
    if (!a)
        return 0;
    adios2_type t;
    size_t n = 0;
    adios2_attribute_type(&t, a);
    adios2_attribute_size(&n, a);
    if ((t != adios2_type_int32_t && t != adios2_type_int64_t) || n < 1 || n > (size_t)max)
        return -iok_error(IOK_EUSAGE, "%s: attribute %s must hold 1 to %d integers", s->path, name,
                          max);
    int64_t wide[16];
    int32_t narrow[16];
    size_t got = 0;
    if (adios2_attribute_data(t == adios2_type_int32_t ? (void *)narrow : (void *)wide, &got, a) !=
            adios2_error_none ||
        got != n)
        return -iok_error(IOK_EUSAGE, "%s: cannot read attribute %s", s->path, name);
    for (size_t i = 0; i < n; i++)
        vals[i] = t == adios2_type_int32_t ? narrow[i] : wide[i];
    return (int)n;
}

static int
bp_read_data(struct e3sm_src *s, const char *name, int nd, const int64_t *start,
             const int64_t *count, enum iok_type t, void *buf)
{
    return iok_error(IOK_EUSAGE,
                     "%s: a .bp file holds a decomposition map here, not history data to replay",
                     s->path);
}

static int
bp_close(struct e3sm_src *s)
{
    struct bp *b = s->h;
    adios2_close(b->e);
    adios2_finalize(b->ad);
    free(b);
    s->h = NULL;
    return IOK_OK;
}

int
e3sm_src_open_bp(struct e3sm_src *s, const char *path, MPI_Comm comm)
{
    snprintf(s->path, sizeof s->path, "%s", path);
    struct stat st; /* a BP3 file: values stored uncompressed, 4 bytes at least */
    s->max_values = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (int64_t)st.st_size / 4 : 0;
    struct bp *b = calloc(1, sizeof *b);
    int ok = b && (b->ad = adios2_init_serial()) && (b->io = adios2_declare_io(b->ad, "map")) &&
             (b->e = adios2_open(b->io, path, adios2_mode_readRandomAccess));
    /* every rank opened it, or the job refuses it */
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        if (b && b->e)
            adios2_close(b->e);
        if (b && b->ad)
            adios2_finalize(b->ad);
        free(b);
        return iok_error(IOK_EUSAGE,
                         "cannot open decomposition file %s through ADIOS2: not a readable BP "
                         "file or directory",
                         path);
    }
    s->h = b;
    s->var_len = bp_var_len;
    s->read = bp_read;
    s->att = bp_att;
    s->read_data = bp_read_data;
    s->close = bp_close;
    return IOK_OK;
}
