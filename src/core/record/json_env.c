/* SPDX-License-Identifier: BSD-3-Clause */
/* Parts of the JSON record that say where and how the run ran: the
 * environment (hosts of all ranks, nodes, ranks per node, Slurm ids, the MPI
 * library), the hints asked for and where they came from, the options as
 * typed values. See schema/record.schema.json. */
#include <ctype.h>
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/record/record.h"
#include "core/run/run.h"
#include "iokernels/error.h"

#define HOSTLEN 256

int
iok_env_gather(MPI_Comm comm, char **hosts_out)
{
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    char me[HOSTLEN] = "";
    gethostname(me, sizeof me - 1);
    char *all = rank == 0 ? calloc((size_t)nprocs, HOSTLEN) : NULL;
    int ok = rank != 0 || all != NULL, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (!all_ok) {
        free(all);
        return iok_error(IOK_EIO, "out of memory gathering host names");
    }
    MPI_Gather(me, HOSTLEN, MPI_CHAR, all, HOSTLEN, MPI_CHAR, 0, comm);
    *hosts_out = all;
    return IOK_OK;
}

/* A Slurm id as a number, or null when unset or not a number. */
static json_t *
slurm_id(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return json_null();
    for (const char *c = v; *c; c++)
        if (!isdigit((unsigned char)*c))
            return json_null();
    return json_integer(strtoll(v, NULL, 10));
}

json_t *
iok_json_reals(const double *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            json_array_append_new(a, json_real(v[i]));
    return a;
}

json_t *
iok_json_text(const char *s)
{
    json_t *j = json_string(s);
    if (j || !s)
        return j ? j : json_null();
    /* not UTF-8 (a path's bytes): every byte outside ASCII as \xNN */
    size_t n = strlen(s);
    char *t = malloc(4 * n + 1), *o = t;
    if (!t)
        return json_null();
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x80)
            *o++ = (char)c;
        else
            o += sprintf(o, "\\x%02X", c);
    }
    *o = '\0';
    j = json_string(t);
    free(t);
    return j ? j : json_null();
}

/* node_cores, usable_cores_min, oversubscribed (cores.c) */
static void
cores_json(json_t *e, const struct iok_cores *c)
{
    json_t *nodes = json_array();
    for (int i = 0; c && i < c->nnodes; i++) {
        const struct iok_node_cores *n = &c->node[i];
        json_t *o = json_object();
        json_object_set_new(o, "host", iok_json_text(n->host));
        json_object_set_new(o, "ranks", json_integer(n->ranks));
        json_object_set_new(o, "usable_cores", json_integer(n->usable_cores));
        json_object_set_new(o, "online_cpus", json_integer(n->online_cpus));
        json_object_set_new(o, "affinity_cpus", json_integer(n->affinity_cpus));
        json_object_set_new(o, "cgroup_cpus",
                            n->cgroup_cpus > 0 ? json_real(n->cgroup_cpus) : json_null());
        json_object_set_new(o, "hw_threads_per_core", json_integer(n->hw_threads_per_core));
        json_array_append_new(nodes, o);
    }
    json_object_set_new(e, "node_cores", nodes);
    json_object_set_new(e, "usable_cores_min",
                        c && c->nnodes ? json_integer(c->usable_min) : json_null());
    json_object_set_new(e, "oversubscribed", json_boolean(c && c->oversubscribed));
}

json_t *
iok_env_json(const char *hosts, int nprocs, const struct iok_cores *cores)
{
    json_t *names = json_array(), *per_node = json_object();
    for (int r = 0; r < nprocs; r++) {
        const char *h = hosts ? hosts + (size_t)r * HOSTLEN : "";
        json_array_append_new(names, iok_json_text(h));
        json_t *n = json_object_get(per_node, h);
        json_object_set_new(per_node, h, json_integer(n ? json_integer_value(n) + 1 : 1));
    }
    int nodes = (int)json_object_size(per_node), lo = nprocs, hi = 0;
    const char *key;
    json_t *val;
    json_object_foreach(per_node, key, val)
    {
        int c = (int)json_integer_value(val);
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
    }
    json_decref(per_node);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major, minor;
    MPI_Get_library_version(lib, &len);
    while (len > 0 && isspace((unsigned char)lib[len - 1]))
        lib[--len] = '\0';
    for (char *c = lib; *c; c++) /* MPICH's string has several lines */
        if (*c == '\n' || *c == '\t')
            *c = ' ';
    MPI_Get_version(&major, &minor);
    char std[16];
    snprintf(std, sizeof std, "%d.%d", major, minor);

    json_t *e = json_object();
    json_object_set_new(e, "hostnames", names);
    json_object_set_new(e, "nodes", json_integer(nodes));
    /* a number when every node runs as many ranks, null when they differ */
    json_object_set_new(e, "ranks_per_node", lo == hi ? json_integer(lo) : json_null());
    json_object_set_new(e, "ranks_per_node_min", json_integer(lo));
    json_object_set_new(e, "ranks_per_node_max", json_integer(hi));
    cores_json(e, cores);
    json_object_set_new(e, "slurm_job_id", slurm_id("SLURM_JOB_ID"));
    json_object_set_new(e, "slurm_step_id", slurm_id("SLURM_STEP_ID"));
    json_object_set_new(e, "mpi_library_version", iok_json_text(lib));
    json_object_set_new(e, "mpi_standard_version", iok_json_text(std));
    json_object_set_new(e, "mpiio_layer", iok_mpiio_layer_json());
    return e;
}

static json_t *
info_json(MPI_Info info)
{
    json_t *o = json_object();
    struct iok_hint *h;
    int n = iok_hints_list(info, &h);
    for (int i = 0; i < n; i++)
        json_object_set_new(o, h[i].key, iok_json_text(h[i].value));
    free(h);
    return o;
}

json_t *
iok_hints_json(const struct iok_run *run)
{
    json_t *env = json_object();
    for (int i = 0; iok_hint_env_names[i]; i++) {
        const char *v = getenv(iok_hint_env_names[i]);
        if (v)
            json_object_set_new(env, iok_hint_env_names[i], iok_json_text(v));
    }
    json_t *orig = json_object();
    for (const struct iok_kernel_hint *h = run->original_hints; h && h->key; h++)
        if (!run->core->no_original_hints &&
            (!h->backend || !strcmp(h->backend, run->backend->name)))
            json_object_set_new(orig, h->key, iok_json_text(h->value));
    return json_pack(
        "{s:o, s:o, s:o, s:b, s:o}", "original", orig, "requested", info_json(run->hints), "file",
        run->core->hints_file[0] ? iok_json_text(run->core->hints_file) : json_null(),
        "passed_to_library", (run->backend->caps & IOK_CAP_HINTS) != 0, "environment", env);
}

json_t *
iok_pass_hints_json(const struct iok_pass_result *p)
{
    if (p->nhints < 0)
        return json_null();
    json_t *o = json_object();
    for (int i = 0; i < p->nhints; i++)
        json_object_set_new(o, p->hints[i].key, iok_json_text(p->hints[i].value));
    return o;
}

/* An option's value as its type: flags as booleans, numbers as numbers. */
json_t *
iok_option_json(const struct iok_optset *set, const struct iok_option *o)
{
    const char *f = (const char *)set->base + o->offset;
    switch (o->type) {
    case IOK_OPT_BOOL:
        return json_boolean(*(const int *)f);
    case IOK_OPT_INT:
        return json_integer(*(const int *)f);
    case IOK_OPT_INT64:
        return json_integer(*(const int64_t *)f);
    case IOK_OPT_DOUBLE:
        return json_real(*(const double *)f);
    case IOK_OPT_INT3: {
        const int *v = (const int *)f;
        return json_pack("[i, i, i]", v[0], v[1], v[2]);
    }
    case IOK_OPT_CHOICE:
        return iok_json_text(iok_choice_name(o->choices, *(const int *)f).s);
    case IOK_OPT_STRING:
        if (o->size == IOK_OPT_HEAP)
            return iok_json_text(*(char *const *)f);
        break;
    }
    return iok_json_text(f);
}
