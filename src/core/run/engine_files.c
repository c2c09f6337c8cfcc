/* SPDX-License-Identifier: BSD-3-Clause */
/* The files of a pass (run.h): each one's path, parameters and schema;
 * before the open, rank 0 (or a per-rank file's own rank) checks it and
 * claims an output; after a failure, the files the run created removed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/measure/measure.h"
#include "core/run/run.h"
#include "iokernels/error.h"

/* Refuses to clobber a file the run did not create, and to write where it
 * cannot. Rank 0 looks; the caller agrees. Without --overwrite the path is
 * claimed at once (O_CREAT | O_EXCL, or mkdir for ADIOS2's folder): of two
 * runs started together one claims it and the other is told it exists
 * (a test of existence, then a create, let both through). *claimed: this
 * call made the path (empty), to remove if the pass fails before writing. */
int
iok_check_output_path(const char *path, int overwrite, int folder, int *claimed)
{
    char dir[PATH_MAX];
    iok_dirname(path, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0)
        return iok_error(IOK_EUSAGE,
                         "output directory %s does not exist: create it or choose another", dir);
    if (!S_ISDIR(st.st_mode))
        return iok_error(IOK_EUSAGE, "output directory %s is not a directory: choose another", dir);
    if (access(dir, W_OK) != 0)
        return iok_error(IOK_EUSAGE, "output directory %s is not writable (%s): choose another",
                         dir, strerror(errno));
    if (overwrite)
        return IOK_OK;
    int fd = -1;
    if (folder ? mkdir(path, 0755) == 0
               : (fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644)) >= 0) {
        if (fd >= 0)
            close(fd);
        *claimed = 1;
        return IOK_OK;
    }
    if (errno == EEXIST)
        return iok_error(IOK_EUSAGE,
                         "output file %s exists: pass --overwrite to replace it, or remove it",
                         path);
    return iok_error(IOK_EUSAGE, "cannot create output file %s (%s): choose another", path,
                     strerror(errno));
}

/* The plan's schema with its record dimension cut to `records`. */
static int
trim(struct iok_pass_file *f, int records)
{
    const struct iok_schema *s = f->s;
    if (s->ndims == 0 || !(f->tdims = malloc((size_t)s->ndims * sizeof *f->tdims)))
        return s->ndims == 0 ? IOK_OK : iok_error(IOK_EIO, "out of memory for %s", f->path);
    f->trimmed = *s;
    memcpy(f->tdims, s->dims, (size_t)s->ndims * sizeof *f->tdims);
    for (int d = 0; d < s->ndims; d++)
        if (f->tdims[d].unlimited && f->tdims[d].len > records)
            f->tdims[d].len = records;
    f->trimmed.dims = f->tdims;
    f->s = &f->trimmed;
    return IOK_OK;
}

int
iok_pass_file_init(struct iok_pass *p, struct iok_pass_file *f, int records)
{
    const struct iok_run *run = p->run;
    const struct iok_backend *be = run->backend;
    const struct iok_file_plan *fp = &p->plan->files[f->file];
    const int writing = f->mode & IOK_PF_WRITE, noio = (be->caps & IOK_CAP_NOIO) != 0;
    f->s = &fp->schema;
    f->per_rank = fp->per_rank;
    f->mine = run->rank == 0 || fp->per_rank;
    f->params = (struct iok_backend_params){run->comm,  run->collective,
                                            run->api,   run->backend_opts,
                                            run->hints, f->mode == (IOK_PF_WRITE | IOK_PF_READ)};
    /* the file this rank opens: the shared one, or its own (file per process) */
    snprintf(f->path, sizeof f->path, "%s", fp->path);
    if (fp->per_rank) {
        int shift = writing ? 0 : fp->read_shift % run->nprocs;
        snprintf(f->path, sizeof f->path, "%s.%d", fp->path,
                 (run->rank + shift + run->nprocs) % run->nprocs);
        f->params.comm = MPI_COMM_SELF;
    }
    if (records >= 0)
        IOK_TRY(trim(f, records));
    /* what this rank wrote, read back after the pass (write_sample.c) */
    if (writing && !noio && !(p->k->flags & IOK_KERNEL_NO_READBACK) &&
        !(f->sample = iok_wsample_new(f->s, p->seed, run->rank)))
        return iok_error(IOK_EIO, "out of memory for the write sample of %s", f->path);
    /* the output a signal or a failure removes: one this run creates
     * (without --overwrite a later iteration's file is the first one's) */
    f->partial = writing && !noio && f->mine &&
                 (access(f->path, F_OK) != 0 || (p->iteration > 0 && !run->core->overwrite));
    return IOK_OK;
}

/* Rank 0 (or a per-rank file's rank) checks one file: an output it may
 * create (claimed now), an input of the backend's kind. */
static int
check_file(struct iok_pass *p, struct iok_pass_file *f)
{
    const struct iok_run *run = p->run;
    const struct iok_backend *be = run->backend;
    if (!f->mine || (be->caps & IOK_CAP_NOIO))
        return IOK_OK;
    /* a later iteration's file is the run's (removed before it: iteration_reset.c) */
    int over = run->core->overwrite || p->iteration > 0;
    if (!(f->mode & IOK_PF_WRITE))
        return iok_check_input_kind(f->path, be->name, f->s);
    IOK_TRY(iok_check_output_path(f->path, over, !strcmp(be->name, "adios2"), &f->claimed));
    return iok_check_output_room(f->path, be->name, f->s, f->per_rank ? run->nprocs : 1, over);
}

static const char *
doing(const struct iok_pass *p)
{
    if (p->group)
        return "the interleaved pass";
    return p->op == IOK_OP_WRITE  ? "the write"
           : p->op == IOK_OP_READ ? "the read"
                                  : "the verify read-back";
}

int
iok_pass_files(struct iok_pass *p, struct iok_pass_result *out, int rc)
{
    const struct iok_run *run = p->run;
    const int noio = (run->backend->caps & IOK_CAP_NOIO) != 0;
    if (p->f && p->nfiles)
        iok_signals_doing(doing(p), p->group ? out->path : p->f[0].path);
    for (int i = 0; rc == IOK_OK && i < p->nfiles; i++)
        rc = check_file(p, &p->f[i]);
    if ((rc = iok_agree(run->comm, rc))) {
        for (int i = 0; p->f && i < p->nfiles; i++) {
            if (p->f[i].claimed) /* the empty file this pass made, nothing written */
                iok_remove_output(p->f[i].path);
            p->f[i].partial = 0; /* an output another process made in the meantime is not ours */
        }
        return rc;
    }
    /* Only rank 0 knows whether a shared file was there: all learn it */
    int *created = calloc((size_t)p->nfiles, sizeof *created);
    for (int i = 0; created && i < p->nfiles; i++)
        created[i] = p->f[i].partial;
    int ok = created != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, run->comm);
    if (!all) {
        free(created);
        return iok_agree(run->comm, iok_error(IOK_EIO, "out of memory for the files of a pass"));
    }
    MPI_Bcast(created, p->nfiles, MPI_INT, 0, run->comm);
    for (int i = 0; i < p->nfiles; i++) {
        struct iok_pass_file *f = &p->f[i];
        if (!f->per_rank)
            f->partial = created[i];
        out->created |= (f->mode & IOK_PF_WRITE) && f->partial;
    }
    free(created);
    if (p->writes || (!p->group && (p->f[0].mode & IOK_PF_WRITE)))
        if (!noio)
            snprintf(out->start_state, sizeof out->start_state, "%s",
                     out->created ? "new file"
                                  : "existing file: not the run's, truncated by the create "
                                    "(--overwrite)");
    /* no pass pays for the writeback of the one before it (iteration_reset.c) */
    for (int i = 0; i < p->nfiles && !noio; i++)
        iok_sync_node(run->comm, p->f[i].path);
    out->synced_before = !noio;
    for (int i = 0; i < p->nfiles && !noio && run->core->drop_caches; i++)
        if (p->f[i].mode == IOK_PF_READ) /* files the pass creates are in no cache yet */
            iok_drop_caches(run->comm, p->f[i].path, p->f[i].per_rank, out->cache,
                            sizeof out->cache);
    return IOK_OK;
}

void
iok_pass_arm_signals(struct iok_pass *p)
{
    int n = 0, which = 0;
    for (int i = 0; i < p->nfiles; i++)
        if (p->f[i].partial) {
            n++;
            which = i;
        }
    if (n == 1)
        iok_signals_partial(p->f[which].path);
}

void
iok_pass_remove_failed(struct iok_pass *p, int rc)
{
    /* A failed write leaves no partial file of the run's behind (a file
     * short of its data, or holding zeros where a write was lost), unless
     * --keep-partial asks for it; partial: the ranks agreed that the file
     * is the run's own (new, or a later iteration's). Its line is printed
     * already. */
    if (rc == IOK_OK || p->run->core->keep_partial)
        return;
    for (int i = 0; p->f && i < p->nfiles; i++)
        if (p->f[i].partial && p->f[i].mine)
            iok_remove_output(p->f[i].path);
}
