/* SPDX-License-Identifier: BSD-3-Clause */
/* --export-replay FILE: the run's request log written as a replay file
 * (docs/kernels/replay.md), on rank 0. Besides the ops, a `data` line per
 * variable says where the suite's deterministic values of that variable lie
 * in the file (type, records, identity), so that `iokernels replay` writes
 * the same bytes as the kernel did: the values are a function of (seed,
 * variable, record, element), not of the byte offset. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/record/record.h"
#include "iokernels/data.h"
#include "iokernels/error.h"
#include "iokernels/reqlog.h"

/* Checked before the passes: what an export can describe. */
int
iok_reqlog_export_check(const struct iok_run *run, const struct iok_plan *plan)
{
    if (strcmp(run->backend->name, "mpiio"))
        return iok_error(IOK_EUSAGE,
                         "--export-replay writes the byte requests of the mpiio backend, not %s: "
                         "add --backend mpiio",
                         run->backend->name);
    char dir[PATH_MAX];
    iok_dirname(run->core->export_replay, dir, sizeof dir);
    if (run->rank == 0 && access(dir, W_OK) != 0) /* before the passes, not after them */
        return iok_error(IOK_EUSAGE,
                         "--export-replay: cannot write %s: its directory %s is missing or not "
                         "writable",
                         run->core->export_replay, dir);
    if (run->rank == 0 && !run->core->overwrite && access(run->core->export_replay, F_OK) == 0)
        return iok_error(IOK_EUSAGE,
                         "--export-replay: %s exists: pass --overwrite to replace it, or remove it",
                         run->core->export_replay);
    if (run->core->values == IOK_VALUES_ONCE)
        return iok_error(IOK_EUSAGE, "--export-replay describes each record's own values: drop "
                                     "--values once");
    for (int f = 0; f < plan->nfiles; f++)
        if (plan->files[f].per_rank)
            return iok_error(IOK_EUSAGE,
                             "--export-replay: %s is a file per process, which a replay file "
                             "does not describe: run with one shared file",
                             plan->files[f].path);
    return IOK_OK;
}

/* A name on one line: line breaks become '_'. */
static void
put_line_text(FILE *out, const char *text)
{
    for (const char *p = text; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? '_' : *p, out);
    fputc('\n', out);
}

static void
write_files(FILE *out, const struct iok_plan *plan)
{
    for (int f = 0; f < plan->nfiles; f++) {
        const struct iok_schema *s = &plan->files[f].schema;
        int64_t size = iok_raw_var_offset(s, s->nvars);
        fprintf(out, "file %d %lld ", f, (long long)size);
        put_line_text(out, plan->files[f].path);
    }
    for (int f = 0; f < plan->nfiles; f++) {
        const struct iok_schema *s = &plan->files[f].schema;
        for (int v = 0; v < s->nvars; v++) {
            int64_t total = iok_var_total_elems(s, v);
            if (total == 0)
                continue;
            int rec = iok_var_is_record(s, v);
            fprintf(out, "data %d %lld %s %lld %lld %016llx ", f,
                    (long long)iok_raw_var_offset(s, v), iok_type_name(s->vars[v].type),
                    (long long)(rec ? iok_var_dim_len(s, v, 0) : 0),
                    (long long)(rec ? iok_var_record_elems(s, v) : total),
                    (unsigned long long)s->vars[v].name_hash);
            put_line_text(out, s->vars[v].name);
        }
    }
}

/* A `check` line per (rank, file) with operations: the digest of its
 * ordered operations (iokernels/reqlog.h), which the replay's fidelity
 * compares with the file's own ops, so that an edited export is seen.
 * Returns how many, or -1. */
static int64_t
write_checks(FILE *out, const struct iok_reqlog *log, int nprocs, int nfiles)
{
    int64_t ng = (int64_t)nprocs * nfiles;
    struct iok_seqdigest *d = malloc((size_t)(ng ? ng : 1) * sizeof *d);
    if (!d || iok_seqdigests(log->ops, log->nops, log->segs, nprocs, nfiles, d) != IOK_OK) {
        free(d);
        iok_error(IOK_EIO, "out of memory for --export-replay's digests");
        return -1;
    }
    int64_t n = 0;
    for (int64_t g = 0; g < ng; g++) {
        if (!d[g].ops)
            continue;
        fprintf(out, "check %d %d %lld %lld %016llx\n", (int)(g / nfiles), (int)(g % nfiles),
                (long long)d[g].ops, (long long)d[g].bytes, (unsigned long long)d[g].hash);
        n++;
    }
    free(d);
    return n;
}

int
iok_reqlog_export(const char *path, const struct iok_reqlog *log, const struct iok_run *run,
                  const struct iok_plan *plan, const char *kernel)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return iok_error(IOK_EUSAGE, "--export-replay: cannot create %s: check the path", path);
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    fprintf(out, "iokernels-replay 2\n");
    fprintf(out, "source iokernels %s --export-replay (mpiio, seed %lld, %s)\n", kernel,
            (long long)run->core->seed, date);
    fprintf(out, "ranks %d\n", run->nprocs);
    write_files(out, plan);
    for (int64_t i = 0; i < log->nops; i++) {
        const struct iok_logop *o = &log->ops[i];
        fprintf(out, "op %d %d %s %s %.6f %.6f %lld", o->rank, o->file, o->write ? "write" : "read",
                o->level == IOK_LEVEL_INDEP ? "indep" : "coll", o->start, o->end,
                (long long)o->nseg);
        for (int64_t j = 0; j < o->nseg; j++)
            fprintf(out, " %lld %lld", (long long)log->segs[o->seg0 + j].off,
                    (long long)log->segs[o->seg0 + j].len);
        fputc('\n', out);
    }
    int64_t checks = write_checks(out, log, run->nprocs, plan->nfiles);
    if (checks < 0) {
        fclose(out);
        return IOK_EIO;
    }
    /* the last line: a file cut short lacks it (docs/kernels/replay.md) */
    fprintf(out, "end %lld %lld\n", (long long)log->nops, (long long)checks);
    if (ferror(out) | fclose(out))
        return iok_error(IOK_EIO, "--export-replay: writing %s failed (disk full?)", path);
    return IOK_OK;
}
