/* Which MPI-IO implementation the run's MPI library uses, as far as the
 * library tells. OpenMPI picks an "io" component (OMPIO or ROMIO) and, inside
 * OMPIO, a collective algorithm ("fcoll"), a file system driver ("fs") and a
 * byte transfer layer ("fbtl"), none of which a hint changes and none of
 * which MPI_File_get_info shows. It matters: E3SM F canonical at 16 ranks
 * here writes in 13.4 s under OMPIO's default fcoll (80% of it sorting the
 * aggregators' offsets), 0.5 s with fcoll two_phase and 1.0 s under ROMIO.
 * The settings are read through MPI_T, so they cover mpiexec --mca, the
 * OMPI_MCA_* variables and the mca-params.conf files alike. MPICH and its
 * derivatives have ROMIO only and no such variables: the layer is then null. */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "json_parts.h"

static const char *const frameworks[] = {"io", "fcoll", "fbtl", "fs", "sharedfp", NULL};

/* A string control variable's value, or NULL when the library has none by
 * that name. */
static char *
cvar_string(const char *name)
{
    int idx, count;
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS)
        return NULL;
    char vname[256], desc[8];
    int nlen = sizeof vname, dlen = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    if (MPI_T_cvar_get_info(idx, vname, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope) !=
            MPI_SUCCESS ||
        dt != MPI_CHAR || bind != MPI_T_BIND_NO_OBJECT)
        return NULL;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
        return NULL;
    char *v = calloc((size_t)count + 1, 1);
    if (v && MPI_T_cvar_read(h, v) != MPI_SUCCESS) {
        free(v);
        v = NULL;
    }
    MPI_T_cvar_handle_free(&h);
    return v;
}

static int
cvar_int(const char *name, int *out)
{
    int idx, count;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
        return 0;
    int ok = count == 1 && MPI_T_cvar_read(h, out) == MPI_SUCCESS;
    MPI_T_cvar_handle_free(&h);
    return ok;
}

/* Whether component `c` is in the selection list `sel` (OpenMPI's syntax:
 * "a,b" allows only those, "^a,b" excludes them, "" allows all). */
static int
allowed(const char *sel, const char *c)
{
    int negate = sel[0] == '^', listed = 0;
    char *copy = strdup(sel + negate), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        listed |= !strcmp(t, c);
    free(copy);
    return !*sel || (negate ? !listed : listed);
}

/* The io component OpenMPI opens a file with: the allowed one of highest
 * priority (io_<name>_priority). */
static void
io_component(const char *sel, char *out, size_t n)
{
    int num, best = -1;
    out[0] = '\0';
    if (MPI_T_cvar_get_num(&num) != MPI_SUCCESS)
        return;
    for (int i = 0; i < num; i++) {
        char name[256], desc[8], comp[256];
        int nlen = sizeof name, dlen = sizeof desc, verb, bind, scope, prio;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope) !=
            MPI_SUCCESS)
            continue;
        size_t len = strlen(name);
        const char *suffix = "_priority";
        if (strncmp(name, "io_", 3) || len < 3 + strlen(suffix) + 1 ||
            strcmp(name + len - strlen(suffix), suffix) || strstr(name, "_delete_priority"))
            continue;
        snprintf(comp, sizeof comp, "%.*s", (int)(len - 3 - strlen(suffix)), name + 3);
        if (allowed(sel, comp) && cvar_int(name, &prio) && prio > best) {
            best = prio;
            snprintf(out, n, "%s", comp);
        }
    }
}

int
iok_mpiio_layer(struct iok_mpiio_layer *l)
{
    memset(l, 0, sizeof *l);
    int provided;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return 0;
    for (int i = 0; frameworks[i]; i++) {
        char *v = cvar_string(frameworks[i]);
        if (v) {
            snprintf(l->setting[l->n].framework, sizeof l->setting[l->n].framework, "%s",
                     frameworks[i]);
            snprintf(l->setting[l->n].value, sizeof l->setting[l->n].value, "%s", v);
            l->n++;
            if (!strcmp(frameworks[i], "io"))
                io_component(v, l->io, sizeof l->io);
        }
        free(v);
    }
    MPI_T_finalize();
    return l->n > 0;
}

json_t *
iok_mpiio_layer_json(void)
{
    struct iok_mpiio_layer l;
    if (!iok_mpiio_layer(&l))
        return json_null();
    json_t *set = json_object();
    for (int i = 0; i < l.n; i++)
        json_object_set_new(set, l.setting[i].framework, json_string(l.setting[i].value));
    return json_pack("{s:s?, s:o}", "io_component", l.io[0] ? l.io : NULL, "settings", set);
}

void
iok_mpiio_layer_report(FILE *out)
{
    struct iok_mpiio_layer l;
    if (!iok_mpiio_layer(&l))
        return;
    fprintf(out, "MPI-IO layer             : OpenMPI io %s", l.io[0] ? l.io : "(none allowed)");
    int deflt = 0, ompio = !strcmp(l.io, "ompio"); /* the others are OMPIO's parts */
    for (int i = 0; i < l.n && ompio; i++)
        if (strcmp(l.setting[i].framework, "io") && l.setting[i].value[0])
            fprintf(out, ", %s %s", l.setting[i].framework, l.setting[i].value);
    for (int i = 0; i < l.n && ompio; i++)
        if (strcmp(l.setting[i].framework, "io") && !l.setting[i].value[0])
            fprintf(out, "%s%s", deflt++ ? ", " : "; ", l.setting[i].framework);
    if (deflt)
        fprintf(out, ": the library's choice");
    fputc('\n', out);
}
