/* SPDX-License-Identifier: BSD-3-Clause */
/* `iokernels ceiling`: the ceiling probe on its own, to learn what this file
 * system gives plain contiguous I/O, with and without the page cache:
 *
 *   mpiexec -n 4 iokernels ceiling --size 1g --dir /scratch --json c.jsonl
 *
 * --size is the total over all ranks. The kernels' --ceiling runs the same
 * probe with their own bytes in their own job. */
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/cmd/cmd.h"
#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/record/record.h"
#include "iokernels/error.h"

#define CEILING_SUMMARY "Plain contiguous I/O of one shared file: what the file system gives."

struct ceiling_opts {
    int64_t size;
    int samples;
    char dir[IOK_OPT_STRLEN];
    char json[IOK_OPT_STRLEN];
    int help;
};

static const struct iok_option ceiling_options[] = {
    {"size", 0, IOK_OPT_INT64, offsetof(struct ceiling_opts, size), "1g",
     "bytes in all, over all ranks (k, m, g suffixes)"},
    {"samples", 0, IOK_OPT_INT, offsetof(struct ceiling_opts, samples), "3",
     "samples of each measurement; the best is printed", .min = "1",
     .max = IOK_STR(IOK_CEILING_SAMPLES_MAX), .unit = "samples"},
    {"dir", 0, IOK_OPT_STRING, offsetof(struct ceiling_opts, dir), ".",
     "directory of the probe file (iokernels.ceiling, removed afterwards)", .metavar = "DIR"},
    {"json", 0, IOK_OPT_STRING, offsetof(struct ceiling_opts, json), NULL,
     "append the JSON record to this file", .metavar = "FILE"},
    {"help", 'h', IOK_OPT_BOOL, offsetof(struct ceiling_opts, help), NULL, "this help"},
    {NULL}};

static int
append_json(const char *path, const struct ceiling_opts *o, int nprocs, const struct iok_ceiling *a,
            const struct iok_ceiling *b, const char *hosts, const struct iok_cores *cores)
{
    char date[64], fstype[64];
    int64_t free_bytes;
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    char dirpath[IOK_OPT_STRLEN + 2];
    snprintf(dirpath, sizeof dirpath, "%s/", o->dir);
    iok_fs_describe(dirpath, fstype, sizeof fstype, &free_bytes);
    const double MiB = 1048576.0;
    /* schema/record.schema.json, ceiling_record */
    json_t *j = json_pack(
        "{s:i, s:s, s:i, s:I, s:s, s:{s:f, s:f, s:f, s:f, s:f}, s:b, s:o, s:s, s:{s:s, s:I}, "
        "s:s}",
        "schema_version", 2, "kernel", "ceiling", "nprocs", nprocs, "bytes", (json_int_t)a->bytes,
        "dir", o->dir, "bandwidth_mib_s", "write", a->bandwidth / MiB, "write_fsync",
        b->bandwidth / MiB, "write_direct", a->direct_write_bandwidth / MiB, "read_direct",
        (a->direct ? a->read_bandwidth : 0) / MiB, "read_cached", a->cached_read_bandwidth / MiB,
        "direct_supported", a->direct, "environment", iok_env_json(hosts, nprocs, cores), "date",
        date, "filesystem", "type", fstype, "free_bytes", (json_int_t)free_bytes,
        "iokernels_version", IOK_VERSION);
    char *line = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(j);
    FILE *f = fopen(path, "a");
    int rc = IOK_OK;
    if (!f || fprintf(f, "%s\n", line) < 0)
        rc = iok_error(IOK_EIO, "cannot append the JSON record to %s: check the path", path);
    if (f)
        fclose(f);
    free(line);
    return rc;
}

int
iok_ceiling_main(int argc, char **argv)
{
    int rank, nprocs, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    struct ceiling_opts o;
    struct iok_optset set = {"ceiling", ceiling_options, &o};
    struct iok_cmdline cl;
    iok_opts_defaults(&set);
    int json_help = iok_help_as_json(&argc, argv);
    rc = iok_cmdline_split(argc, argv, &set, 1, &cl);
    if (rc == IOK_OK && cl.npos)
        rc = iok_error(IOK_EUSAGE, "ceiling takes no positional argument (got '%s')", cl.pos[0]);
    if (rc == IOK_OK)
        rc = iok_cmdline_apply(&cl, &set, 1);
    iok_cmdline_free(&cl);
    if (rc == IOK_OK && o.size < nprocs)
        rc = iok_error(IOK_EUSAGE, "--size must be at least one byte per rank, not %lld",
                       (long long)o.size);
    if ((rc = iok_agree(MPI_COMM_WORLD, rc)))
        return rc;
    if (o.help && json_help) { /* described as a tool: no input, no backend */
        static const struct iok_kernel tool = {
            .name = "ceiling", .summary = CEILING_SUMMARY, .flags = IOK_KERNEL_TOOL};
        if (rank == 0)
            iok_describe_kernel(&tool, &set, 1, stdout);
        return IOK_OK;
    }
    if (o.help) {
        if (rank == 0) {
            printf("usage: iokernels ceiling [options]\n%s\n\n", CEILING_SUMMARY);
            iok_opts_help(&set, stdout);
        }
        return IOK_OK;
    }
    char path[IOK_OPT_STRLEN + 32];
    snprintf(path, sizeof path, "%s/iokernels", o.dir);
    int64_t mine = o.size / nprocs + (rank < o.size % nprocs);
    struct iok_ceiling a = {.full = 1}, b = {0};
    struct iok_cores cores; /* untimed, before the probes */
    if ((rc = iok_agree(MPI_COMM_WORLD, iok_cores_gather(MPI_COMM_WORLD, 0, 0, &cores))))
        return rc;
    iok_clock_sync(MPI_COMM_WORLD); /* the samples' spans on one clock */
    rc = iok_ceiling_probe(MPI_COMM_WORLD, path, mine, 0, IOK_CEIL_READ_STORAGE, o.samples, &a);
    if (rc == IOK_OK)
        rc = iok_ceiling_probe(MPI_COMM_WORLD, path, mine, 1, IOK_CEIL_READ_NONE, o.samples, &b);
    char *hosts = NULL;
    if (rc == IOK_OK && o.json[0])
        rc = iok_agree(MPI_COMM_WORLD, iok_env_gather(MPI_COMM_WORLD, &hosts));
    if (rc) {
        iok_cores_free(&cores);
        return rc;
    }
    if (rank == 0) {
        const double MiB = 1048576.0;
        printf("-- iokernels ceiling probe --\n");
        char crowd[96];
        iok_cores_words(&cores, crowd, sizeof crowd);
        printf("processes                : %d%s%s\n", nprocs, crowd[0] ? ", " : "", crowd);
        printf("bytes                    : %lld (%.2f MiB), one contiguous block per rank\n",
               (long long)a.bytes, a.bytes / MiB);
        printf("samples                  : %d of each, the best printed\n", a.samples);
        printf("directory                : %s\n", o.dir);
        printf("write (MPI-IO, buffered) : %12.2f MiB/s\n", a.bandwidth / MiB);
        printf("write + fsync            : %12.2f MiB/s\n", b.bandwidth / MiB);
        if (a.direct) {
            printf("write (O_DIRECT)         : %12.2f MiB/s\n", a.direct_write_bandwidth / MiB);
            printf("read (O_DIRECT)          : %12.2f MiB/s\n", a.read_bandwidth / MiB);
        } else {
            printf("O_DIRECT                 : not supported by this file system\n");
            printf("read (pages dropped)     : %12.2f MiB/s\n", a.read_bandwidth / MiB);
        }
        printf("read (page cache)        : %12.2f MiB/s\n", a.cached_read_bandwidth / MiB);
        if (o.json[0])
            rc = append_json(o.json, &o, nprocs, &a, &b, hosts, &cores);
    }
    free(hosts);
    iok_cores_free(&cores);
    return iok_agree(MPI_COMM_WORLD, rc);
}
