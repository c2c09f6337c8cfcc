/* SPDX-License-Identifier: BSD-3-Clause */
/* Hints as data: the run's one MPI_Info, built from --hints-file, --hints
 * and --mpiio-hints (in that order, later keys winning) before any pass, and
 * the hints in effect that the backend reads back from an open file. The
 * environment variables the libraries read themselves (ROMIO_HINTS,
 * PNETCDF_HINTS) are never touched, only recorded. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/lib.h"
#include "core/run/run.h"
#include "iokernels/error.h"
#include "iokernels/input.h"

const char *const iok_hint_env_names[] = {"ROMIO_HINTS", "PNETCDF_HINTS", "MPICH_MPIIO_HINTS",
                                          "OMPI_MCA_io", NULL};

/* The collective buffer (cb_buffer_size; OMPIO's bytes_per_agg) below this
 * is refused. MPI libraries read the value with atoi ("1k" is 1, "junk" 0),
 * and Open MPI 4.1's OMPIO splits the buffer in two halves per cycle: at 0
 * or 1 byte its collective writes write nothing and report success (the
 * file is left all NUL bytes, seen with HDF5 and NetCDF-4 on 4 ranks). No
 * collective buffer smaller than a page measures anything but the cycles. */
#define CB_BUFFER_MIN 4096

/* A byte count for the collective buffer; `suffixed`: k, m or g allowed
 * (how Open MPI reads an MCA variable). */
static int
check_buffer_bytes(const char *where, const char *key, const char *value, int suffixed)
{
    char *end = NULL;
    errno = 0;
    long long v = isdigit((unsigned char)value[0]) ? strtoll(value, &end, 10) : -1;
    if (v >= 0 && end && suffixed && *end && strchr("kKmMgG", *end) && !end[1]) {
        int shift = tolower((unsigned char)*end) == 'k' ? 10 : tolower(*end) == 'm' ? 20 : 30;
        v = v > (LLONG_MAX >> shift) ? LLONG_MAX : v << shift;
        end++;
    }
    if (v < 0 || !end || *end || errno)
        return iok_error(IOK_EUSAGE,
                         "%s: %s=%s is not a whole number of bytes (the MPI library would read "
                         "it as %d): give e.g. %s=16777216",
                         where, key, iok_quote(value), atoi(value), key);
    if (v < CB_BUFFER_MIN)
        return iok_error(IOK_EUSAGE,
                         "%s: %s=%s is below %d bytes: Open MPI's OMPIO writes nothing with a "
                         "collective buffer of 0 or 1 byte and reports success; give at least %d",
                         where, key, iok_quote(value), CB_BUFFER_MIN, CB_BUFFER_MIN);
    return IOK_OK;
}

static int
set_hint(MPI_Info *info, const char *key, const char *value, const char *where)
{
    if (!strcmp(key, "cb_buffer_size"))
        IOK_TRY(check_buffer_bytes(where, key, value, 0));
    if (strlen(key) > MPI_MAX_INFO_KEY || strlen(value) > MPI_MAX_INFO_VAL)
        return iok_error(IOK_EUSAGE, "%s: hint '%s' is longer than MPI allows (%d key, %d value)",
                         where, key, MPI_MAX_INFO_KEY, MPI_MAX_INFO_VAL);
    if (*info == MPI_INFO_NULL)
        MPI_Info_create(info);
    MPI_Info_set(*info, key, value);
    return IOK_OK;
}

/* "a=b,c=d" from option `name`. */
static int
parse_pairs(const char *text, const char *name, MPI_Info *info)
{
    char *copy = strdup(text), *save = NULL;
    int rc = IOK_OK;
    for (char *kv = strtok_r(copy, ",", &save); kv && rc == IOK_OK;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv || !eq[1]) {
            rc = iok_error(IOK_EUSAGE, "%s: '%s' is not key=value (e.g. cb_nodes=2)", name, kv);
            break;
        }
        *eq = '\0';
        rc = set_hint(info, kv, eq + 1, name);
    }
    free(copy);
    return rc;
}

/* ROMIO_HINTS' format: one "key value" a line; '#' starts a comment. */
int
iok_hints_parse_file(const char *text, const char *path, MPI_Info *info)
{
    int lineno = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[MPI_MAX_INFO_KEY + MPI_MAX_INFO_VAL + 64], extra[8], key[MPI_MAX_INFO_KEY + 2],
            value[MPI_MAX_INFO_VAL + 2];
        lineno++;
        if (len >= sizeof buf)
            return iok_error(IOK_EUSAGE, "%s:%d: line too long for a 'key value' hint", path,
                             lineno);
        memcpy(buf, line, len);
        buf[len] = '\0';
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        line = end ? end + 1 : line + len;
        char fmt[64];
        snprintf(fmt, sizeof fmt, "%%%ds %%%ds %%7s", MPI_MAX_INFO_KEY + 1, MPI_MAX_INFO_VAL + 1);
        int n = sscanf(buf, fmt, key, value, extra);
        if (n <= 0)
            continue; /* blank or comment */
        if (n != 2)
            return iok_error(IOK_EUSAGE,
                             "%s:%d: expected 'key value' (one hint a line, '#' comments), "
                             "got '%s'",
                             path, lineno, buf + strspn(buf, " \t"));
        char where[IOK_OPT_STRLEN + 16];
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        IOK_TRY(set_hint(info, key, value, where));
    }
    return IOK_OK;
}

int
iok_hints_build(const struct iok_core_opts *o, const struct iok_kernel_hint *orig,
                const char *backend, MPI_Comm comm, MPI_Info *out)
{
    int rc = IOK_OK;
    *out = MPI_INFO_NULL;
    /* OMPIO's own variable for cb_buffer_size, read by the library itself */
    const char *agg = getenv("OMPI_MCA_io_ompio_bytes_per_agg");
    if (agg)
        rc = check_buffer_bytes("environment", "OMPI_MCA_io_ompio_bytes_per_agg", agg, 1);
    for (; orig && orig->key && !o->no_original_hints && rc == IOK_OK; orig++)
        if (!orig->backend || !strcmp(orig->backend, backend))
            rc = set_hint(out, orig->key, orig->value, "the original's hints");
    if (rc == IOK_OK && o->hints_file[0]) {
        char *text = NULL;
        rc = iok_read_shared_text(o->hints_file, "hints file", comm, 0, &text);
        if (rc == IOK_OK) /* every rank parses the same text: same outcome */
            rc = iok_hints_parse_file(text, o->hints_file, out);
        free(text);
    }
    if (rc == IOK_OK && o->hints[0])
        rc = parse_pairs(o->hints, "--hints", out);
    if (rc == IOK_OK && o->mpiio_hints[0])
        rc = parse_pairs(o->mpiio_hints, "--mpiio-hints", out);
    if (rc && *out != MPI_INFO_NULL)
        MPI_Info_free(out);
    return rc;
}

int
iok_hints_list(MPI_Info info, struct iok_hint **out)
{
    int n = 0;
    *out = NULL;
    if (info == MPI_INFO_NULL)
        return 0;
    MPI_Info_get_nkeys(info, &n);
    if (n <= 0)
        return 0;
    *out = calloc((size_t)n, sizeof **out);
    if (!*out)
        return 0;
    for (int i = 0; i < n; i++) {
        int flag = 0;
        MPI_Info_get_nthkey(info, i, (*out)[i].key);
        MPI_Info_get(info, (*out)[i].key, MPI_MAX_INFO_VAL, (*out)[i].value, &flag);
    }
    return n;
}

void
iok_pass_take_hints(const struct iok_run *run, void *handle, struct iok_pass_result *out)
{
    const struct iok_backend *be = run->backend;
    MPI_Info info = MPI_INFO_NULL;
    out->nhints = -1;
    if (!be->info || be->info(handle, &info) != IOK_OK) {
        iok_error_clear(); /* an unreadable info is not a failed pass */
        return;
    }
    if (run->rank == 0)
        out->nhints = iok_hints_list(info, &out->hints);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

/* The keys an I/O engineer looks for first, in this order; then ROMIO's data
 * sieving ones and PnetCDF's nc_* ones, then whatever was asked for. */
static const char *const first_keys[] = {"striping_factor", "striping_unit",     "cb_nodes",
                                         "cb_buffer_size",  "cb_config_list",    "romio_cb_write",
                                         "romio_cb_read",   "romio_no_indep_rw", NULL};

static int
shown(const char *key, MPI_Info asked)
{
    for (int i = 0; first_keys[i]; i++)
        if (!strcmp(key, first_keys[i]))
            return 1;
    if (!strncmp(key, "romio_ds_", 9) || !strncmp(key, "nc_", 3))
        return 1;
    int flag = 0;
    if (asked != MPI_INFO_NULL) {
        char v[MPI_MAX_INFO_VAL + 1];
        MPI_Info_get(asked, key, MPI_MAX_INFO_VAL, v, &flag);
    }
    return flag;
}

void
iok_hints_report(const struct iok_run *run, const struct iok_pass_result *p, FILE *out)
{
    if (!(run->backend->caps & IOK_CAP_HINTS)) {
        /* a backend whose library takes its own settings (ADIOS2's engine
         * parameters) reports them through the same entry */
        fprintf(out, "       hints: none (backend %s takes no MPI-IO hints)", run->backend->name);
        for (int i = 0; i < p->nhints; i++)
            fprintf(out, "%s %s=%s", i ? "" : "; settings in effect:", p->hints[i].key,
                    p->hints[i].value);
        fputc('\n', out);
        return;
    }
    if (p->nhints < 0) {
        fprintf(out, "       hints in effect: the library does not report them\n");
        return;
    }
    int col = fprintf(out, "       hints in effect:");
    int any = 0;
    /* the first keys in their order, then the others shown in the library's */
    const char *order[64 + sizeof first_keys / sizeof *first_keys];
    int n = 0;
    for (int f = 0; first_keys[f]; f++)
        if (iok_pass_hint(p, first_keys[f]))
            order[n++] = first_keys[f];
    for (int i = 0; i < p->nhints && n < (int)(sizeof order / sizeof *order); i++) {
        int first = 0;
        for (int f = 0; first_keys[f]; f++)
            first |= !strcmp(p->hints[i].key, first_keys[f]);
        if (!first && shown(p->hints[i].key, run->hints))
            order[n++] = p->hints[i].key;
    }
    for (int i = 0; i < n; i++) {
        const char *v = iok_pass_hint(p, order[i]);
        int w = (int)(strlen(order[i]) + strlen(v) + 2);
        if (col + w > 100 && any) {
            fprintf(out, "\n                       ");
            col = 23;
        }
        col += fprintf(out, " %s=%s", order[i], v);
        any = 1;
    }
    if (!any)
        fprintf(out, " none reported (%d other keys in the JSON record)", p->nhints);
    fputc('\n', out);
}
