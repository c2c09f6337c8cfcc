/* SPDX-License-Identifier: BSD-3-Clause */
/* What the job's rank 0 keeps of a mix (mix.c): each round's runs gathered
 * from the members' rank 0, their reports printed in sections, the
 * slowdowns and overlaps, and the mix's JSON record with its members'
 * records inside (schema/record.schema.json, mix_record). */
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/mix/mix.h"
#include "iokernels/backend.h"
#include "iokernels/error.h"

static const double MiB = 1048576.0;
enum { TAG_RUN = 4301 };

int
iok_mix_alloc(struct iok_mix *mx)
{
    mx->record_at = -1;
    for (int i = 0; i < mx->n; i++) {
        struct iok_mix_member *mb = &mx->m[i];
        mb->alone = malloc((size_t)mx->iterations * sizeof *mb->alone);
        mb->together = malloc((size_t)mx->iterations * sizeof *mb->together);
        mb->overlap = calloc((size_t)mx->n, sizeof *mb->overlap);
        mb->runs = json_array();
        if (!mb->alone || !mb->together || !mb->overlap || !mb->runs)
            return IOK_EIO;
        for (int it = 0; it < mx->iterations; it++)
            mb->alone[it] = mb->together[it] = NAN;
    }
    return IOK_OK;
}

void
iok_mix_free(struct iok_mix *mx)
{
    for (int i = 0; i < mx->n; i++) {
        free(mx->m[i].alone);
        free(mx->m[i].together);
        free(mx->m[i].overlap);
        json_decref(mx->m[i].runs);
        mx->m[i].runs = NULL;
    }
}

void
iok_mix_round_free(struct iok_mix *mx, struct iok_mix_round *r)
{
    for (int i = 0; i < mx->n; i++) {
        free(r->w[i]);
        free(r->report[i]);
        r->w[i] = NULL;
        r->report[i] = NULL;
    }
}

/* The member's run as one message: rc, seconds, windows, report, record. */
static char *
pack(const struct iok_mix *mx, int mrc, const struct iok_member_run *mr, const char *text,
     int *size)
{
    int np = mrc ? 0 : mr->npass;
    int tlen = text ? (int)strlen(text) : 0, rlen = mr->record ? (int)strlen(mr->record) : 0;
    size_t n = 3 * sizeof(int) + sizeof(double) * (1 + 3 * (size_t)np) + sizeof(int) +
               (size_t)tlen + (size_t)rlen;
    char *buf = malloc(n), *p = buf;
    if (!buf)
        return NULL;
    int head[3] = {mrc, np, tlen};
    memcpy(p, head, sizeof head), p += sizeof head;
    double io = mr->io_seconds;
    memcpy(p, &io, sizeof io), p += sizeof io;
    for (int i = 0; i < np; i++) { /* on the job's clock (rank 0's) */
        double w[3] = {mr->win_start[i] - mx->world_offset, mr->win_end[i] - mx->world_offset,
                       mr->win_bytes[i]};
        memcpy(p, w, sizeof w), p += sizeof w;
    }
    memcpy(p, &rlen, sizeof rlen), p += sizeof rlen;
    memcpy(p, text ? text : "", (size_t)tlen), p += tlen;
    memcpy(p, mr->record ? mr->record : "", (size_t)rlen);
    *size = (int)n;
    return buf;
}

/* Bytes of member a moved inside member b's pass windows, each pass's
 * bytes spread evenly over its window. */
static double
moved_inside(const struct iok_mix_round *r, int a, int b)
{
    double bytes = 0;
    for (int p = 0; p < r->nw[a]; p++) {
        const double *w = r->w[a] + 3 * p;
        double len = w[1] - w[0], in = 0;
        for (int q = 0; q < r->nw[b]; q++) {
            const double *v = r->w[b] + 3 * q;
            double lo = w[0] > v[0] ? w[0] : v[0], hi = w[1] < v[1] ? w[1] : v[1];
            in += hi > lo ? hi - lo : 0;
        }
        bytes += len > 0 ? w[2] * (in > len ? 1 : in / len) : 0;
    }
    return bytes;
}

static void
keep(struct iok_mix *mx, struct iok_mix_round *r, int i, const char *buf)
{
    struct iok_mix_member *mb = &mx->m[i];
    int head[3], rlen;
    double io;
    memcpy(head, buf, sizeof head), buf += sizeof head;
    memcpy(&io, buf, sizeof io), buf += sizeof io;
    int mrc = head[0], np = head[1], tlen = head[2];
    if (mrc && !mx->failed_member) {
        mx->failed_member = i + 1;
        mx->failed_iteration = r->iteration + 1;
        mx->failed_together = r->together;
    }
    r->w[i] = malloc((size_t)(3 * np + 1) * sizeof(double));
    if (r->w[i]) {
        memcpy(r->w[i], buf, (size_t)np * 3 * sizeof(double));
        r->nw[i] = np;
    }
    buf += (size_t)np * 3 * sizeof(double);
    memcpy(&rlen, buf, sizeof rlen), buf += sizeof rlen;
    r->report[i] = strndup(buf, (size_t)tlen);
    buf += tlen;
    if (mrc)
        return;
    (r->together ? mb->together : mb->alone)[r->iteration] = io;
    json_t *rec = rlen ? json_loadb(buf, (size_t)rlen, 0, NULL) : NULL;
    json_t *run = json_pack("{s:i, s:s, s:f}", "iteration", r->iteration + 1, "mode",
                            r->together ? "together" : "alone", "seconds", io);
    if (rec)
        json_object_set_new(run, "record", rec);
    json_array_append_new(mb->runs, run);
}

int
iok_mix_gather(struct iok_mix *mx, struct iok_mix_round *r, int active, int mrc,
               const struct iok_member_run *mr, const char *text)
{
    int wrank, rc = IOK_OK;
    MPI_Comm_rank(mx->xcomm, &wrank);
    MPI_Request req = MPI_REQUEST_NULL;
    char *buf = NULL;
    if (active && mx->mrank == 0) {
        int size = 0;
        buf = pack(mx, mrc, mr, text, &size);
        if (!buf) /* the receiver still waits for a message: an empty one */
            rc = iok_error(IOK_EIO, "out of memory for the mix's results");
        MPI_Isend(buf, buf ? size : 0, MPI_BYTE, 0, TAG_RUN, mx->xcomm, &req);
    }
    for (int i = 0; wrank == 0 && i < mx->n; i++) {
        if (!r->together && r->solo != i + 1)
            continue;
        MPI_Status st;
        int count;
        MPI_Probe(mx->m[i].first, TAG_RUN, mx->xcomm, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        char *in = malloc((size_t)count + 1);
        MPI_Recv(in, count, MPI_BYTE, mx->m[i].first, TAG_RUN, mx->xcomm, MPI_STATUS_IGNORE);
        if (in && count > 0)
            keep(mx, r, i, in);
        else
            rc = iok_error(IOK_EIO, "mix: member %d's results did not arrive", i + 1);
        free(in);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    free(buf);
    for (int a = 0; wrank == 0 && r->together && !mx->failed_member && a < mx->n; a++)
        for (int b = 0; b < mx->n; b++) {
            if (b != a)
                mx->m[a].overlap[b] += moved_inside(r, a, b);
            else
                for (int p = 0; p < r->nw[a]; p++)
                    mx->m[a].together_bytes += r->w[a][3 * p + 2];
        }
    return rc;
}

void
iok_mix_print_members(const struct iok_mix *mx, FILE *out)
{
    for (int i = 0; i < mx->n; i++) {
        const struct iok_mix_member *mb = &mx->m[i];
        fprintf(out,
                "mix member %d %s: ranks %d-%d of the job (%d), starts %g s after the others "
                "together\n",
                mb->index, mb->kernel->name, mb->first, mb->first + mb->nranks - 1, mb->nranks,
                mb->start);
    }
    fprintf(out,
            "mix order: %d iterations, each member alone (the others idle) and all together, "
            "ABBA\n",
            mx->iterations);
    fflush(out);
}

void
iok_mix_print_round(const struct iok_mix *mx, const struct iok_mix_round *r, FILE *out)
{
    for (int i = 0; i < mx->n; i++)
        if (r->report[i] && r->report[i][0])
            fprintf(out, "\n=== mix member %d %s, iteration %d, %s ===\n%s", i + 1,
                    mx->m[i].kernel->name, r->iteration + 1, r->together ? "together" : "alone",
                    r->report[i]);
    fflush(out);
}

static int
finite_of(const double *v, int n, double *out)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            out[k++] = v[i];
    return k;
}

/* The backend of a member that moves no bytes (null), or NULL. Such a
 * member is a control aggressor: its own times are the suite's overhead
 * (micro-seconds), whose ratio says nothing of interference, so it gets no
 * slowdown call of its own ("not judged"), only its effect on the others. */
static const char *
no_data_backend(const struct iok_mix_member *mb)
{
    json_t *first = mb->runs ? json_array_get((json_t *)mb->runs, 0) : NULL;
    json_t *record = json_object_get(first, "record");
    const char *name = json_string_value(json_object_get(record, "backend"));
    const struct iok_backend *b = name ? iok_backend_find(name) : NULL;
    return b && (b->caps & IOK_CAP_NOIO) ? name : NULL;
}

/* Under a member's slowdown: the nodes whose cores its ranks share with
 * other members' (together, they compete for the CPUs as well as the I/O). */
static void
shared_cores(const struct iok_mix *mx, const struct iok_mix_member *mb, FILE *out)
{
    unsigned bit = 1u << (mb->index - 1);
    for (int k = 0; k < mx->cores.nnodes; k++) {
        const struct iok_node_cores *n = &mx->cores.node[k];
        if (!(n->tags & bit) || !(n->tags & ~bit))
            continue;
        fprintf(out, "member %d %s: members share the node's %d core%s (%s: members", mb->index,
                mb->kernel->name, n->usable_cores, n->usable_cores == 1 ? "" : "s", n->host);
        for (int j = 0, first = 1; j < mx->n; j++)
            if (n->tags & (1u << j)) {
                fprintf(out, "%s%d", first ? " " : ", ", j + 1);
                first = 0;
            }
        if (n->ranks > n->usable_cores)
            fprintf(out,
                    ", %d ranks): oversubscribed (%d ranks on %d core%s): together, the "
                    "slowdown includes CPU contention\n",
                    n->ranks, n->ranks, n->usable_cores, n->usable_cores == 1 ? "" : "s");
        else
            fprintf(out, ", %d ranks)\n", n->ranks);
    }
}

void
iok_mix_print_summary(const struct iok_mix *mx, FILE *out)
{
    fprintf(out, "\nMix summary (a member's time: the sum of its passes' open->close spans; "
                 "slowdown = together / alone, Hodges-Lehmann ratio with its exact 95%% "
                 "interval; tied when the interval holds 1):\n");
    for (int i = 0; i < mx->n; i++) {
        const struct iok_mix_member *mb = &mx->m[i];
        double a[mx->iterations], t[mx->iterations];
        int na = finite_of(mb->alone, mx->iterations, a);
        int nt = finite_of(mb->together, mx->iterations, t);
        struct iok_slowdown s;
        iok_slowdown_of(t, nt, a, na, &s);
        fprintf(out, "member %d %s: alone %.4f s, together %.4f s (medians of %d and %d runs)\n",
                mb->index, mb->kernel->name, iok_median(a, na), iok_median(t, nt), na, nt);
        const char *noio = no_data_backend(mb);
        if (noio)
            fprintf(out,
                    "member %d %s: slowdown not judged: its backend (%s) moves no data (a "
                    "control aggressor; its times are the suite's own overhead)\n",
                    mb->index, mb->kernel->name, noio);
        else if (s.has_interval)
            fprintf(out, "member %d %s: slowdown %.3f (95%% interval %.3f-%.3f): %s\n", mb->index,
                    mb->kernel->name, s.hl, s.low, s.high, s.call);
        else
            fprintf(out,
                    "member %d %s: slowdown %.3f: untested (%d and %d runs: too few for a 95%% "
                    "interval; --iterations 4 gives one)\n",
                    mb->index, mb->kernel->name, s.ratio, na, nt);
        shared_cores(mx, mb, out);
        for (int j = 0; j < mx->n; j++)
            if (j != i)
                fprintf(out,
                        "member %d %s: overlap: %.2f MiB of its %.2f MiB together moved inside "
                        "the I/O windows of member %d %s\n",
                        mb->index, mb->kernel->name, mb->overlap[j] / MiB, mb->together_bytes / MiB,
                        j + 1, mx->m[j].kernel->name);
    }
    fflush(out);
}

static json_t *
member_json(const struct iok_mix *mx, const struct iok_mix_member *mb)
{
    double a[mx->iterations], t[mx->iterations];
    int na = finite_of(mb->alone, mx->iterations, a);
    int nt = finite_of(mb->together, mx->iterations, t);
    struct iok_slowdown s;
    iok_slowdown_of(t, nt, a, na, &s);
    json_t *argv = json_array();
    for (int i = 0; i < mb->argc; i++)
        json_array_append_new(argv, json_string(mb->argv[i]));
    json_t *sd = json_pack("{s:s, s:i, s:i}", "call", no_data_backend(mb) ? "not judged" : s.call,
                           "alone_runs", na, "together_runs", nt);
    if (na && nt) {
        json_object_set_new(sd, "ratio_of_medians", json_real(s.ratio));
        json_object_set_new(sd, "hodges_lehmann", json_real(s.hl));
    }
    if (s.has_interval) {
        json_object_set_new(sd, "low", json_real(s.low));
        json_object_set_new(sd, "high", json_real(s.high));
    }
    json_t *ov = json_array();
    for (int j = 0; j < mx->n; j++)
        if (mx->m + j != mb)
            json_array_append_new(ov, json_pack("{s:i, s:s, s:f}", "aggressor", j + 1,
                                                "aggressor_kernel", mx->m[j].kernel->name,
                                                "bytes_inside_its_windows", mb->overlap[j]));
    return json_pack("{s:i, s:s, s:i, s:i, s:f, s:o, s:o, s:o, s:o, s:f, s:o, s:O}", "index",
                     mb->index, "kernel", mb->kernel->name, "nprocs", mb->nranks, "first_rank",
                     mb->first, "start_seconds", mb->start, "argv", argv, "alone_seconds",
                     iok_json_reals(mb->alone, mx->iterations), "together_seconds",
                     iok_json_reals(mb->together, mx->iterations), "slowdown", sd, "together_bytes",
                     mb->together_bytes, "overlap", ov, "runs", mb->runs);
}

int
iok_mix_write_record(struct iok_mix *mx, const char *status, int exit_code)
{
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    int nprocs = 0;
    for (int i = 0; i < mx->n; i++)
        nprocs += mx->m[i].nranks;
    json_t *members = json_array();
    for (int i = 0; i < mx->n; i++)
        json_array_append_new(members, member_json(mx, &mx->m[i]));
    json_t *j =
        json_pack("{s:i, s:s, s:s, s:i, s:s, s:s, s:i, s:s, s:s, s:o}", "schema_version", 2,
                  "kernel", "mix", "status", status, "iterations", mx->iterations, "order", "ABBA",
                  "time_definition", "the sum of the member's passes' open->close spans", "nprocs",
                  nprocs, "date", date, "iokernels_version", IOK_VERSION, "members", members);
    json_object_set_new(j, "exit_code", json_integer(exit_code));
    if (mx->failed_member)
        json_object_set_new(j, "failed",
                            json_pack("{s:i, s:s, s:i, s:s}", "member", mx->failed_member, "kernel",
                                      mx->m[mx->failed_member - 1].kernel->name, "iteration",
                                      mx->failed_iteration, "mode",
                                      mx->failed_together ? "together" : "alone"));
    char *line = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(j);
    if (!line)
        return iok_error(IOK_EIO, "cannot encode the mix's JSON record");
    /* one line, rewritten in place: the record of a mix a kill ends keeps
     * the runs done before it ("incomplete") */
    int fd = open(mx->json, O_WRONLY | O_CREAT, 0644), rc = IOK_OK;
    if (fd >= 0 && mx->record_at < 0)
        mx->record_at = (long)lseek(fd, 0, SEEK_END);
    size_t len = strlen(line);
    line[len] = '\n';
    if (fd < 0 || ftruncate(fd, mx->record_at) != 0 ||
        pwrite(fd, line, len + 1, mx->record_at) != (ssize_t)(len + 1))
        rc = iok_error(IOK_EIO, "cannot write the mix's record to --json %s: check the path",
                       mx->json);
    if (fd >= 0)
        close(fd);
    free(line);
    return rc;
}
