/* SPDX-License-Identifier: BSD-3-Clause */
/* iokernels mix: the members' outputs, checked together before any run.
 * Each member's rank 0, in its own folder (--member-dirs), describes the
 * files its plan writes as the file system sees them: the folder's real
 * path and the name, the file's device and inode where it exists, the
 * folder's file system (st_dev) with its free bytes, and the bytes the file
 * needs. The job's rank 0 refuses two members writing one file (D/x, D/./x,
 * D//x, an absolute spelling, a symlinked folder, a hard link: one file),
 * and members whose files do not fit their file system together, though
 * each fits alone: both ended the mix midway before, one member's output
 * left (or overwritten by the other's, with --overwrite).
 *
 * st_dev tells file systems apart on one node; members on several nodes
 * writing to a shared file system may see it under different numbers, and
 * each member's own check at its create still holds there. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/mix/mix.h"
#include "iokernels/error.h"

enum { TAG_OUTPUTS = 4302 };

/* A line of a member's list: NEED FS FREE CREDIT DEV INO LEN:REAL LEN:SPELLED
 * (the paths counted, so that any byte may be in them). */
struct output {
    int member;                      /* 0-based */
    long long need, free, credit;    /* bytes; credit: the existing file --overwrite replaces */
    unsigned long long fs, dev, ino; /* the folder's device; the file's (0 0: absent) */
    char *real, *spelled;
};

/* The folder's real path and the name; a missing folder leaves the path as
 * given (the member's create fails there anyway). */
static void
real_path(const char *path, char *out, size_t len)
{
    char dir[PATH_MAX], rdir[PATH_MAX];
    iok_dirname(path, dir, sizeof dir);
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    if (!realpath(dir, rdir) ||
        snprintf(out, len, "%s/%s", strcmp(rdir, "/") ? rdir : "", name) >= (int)len)
        snprintf(out, len, "%s", path);
}

static void
describe(FILE *f, const char *path, long long need, int overwrite)
{
    char dir[PATH_MAX], real[PATH_MAX];
    iok_dirname(path, dir, sizeof dir);
    real_path(path, real, sizeof real);
    struct stat d, st;
    struct statvfs v;
    unsigned long long fs = stat(dir, &d) == 0 ? (unsigned long long)d.st_dev : 0;
    long long avail = statvfs(dir, &v) == 0 ? (long long)v.f_bavail * (long long)v.f_frsize : -1;
    int exists = stat(path, &st) == 0;
    long long credit = exists && overwrite && S_ISREG(st.st_mode) ? (long long)st.st_size : 0;
    fprintf(f, "%lld %llu %lld %lld %llu %llu %zu:%s %zu:%s\n", need, fs, avail, credit,
            exists ? (unsigned long long)st.st_dev : 0ULL,
            exists ? (unsigned long long)st.st_ino : 0ULL, strlen(real), real, strlen(path), path);
}

int
iok_member_planned(struct iok_member_run *m, const struct iok_run *run, const struct iok_plan *plan)
{
    free(m->planned);
    m->planned = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&m->planned, &size);
    if (!f)
        return iok_error(IOK_EIO, "out of memory for the mix's file list");
    for (int i = 0; run->do_write && i < plan->nfiles; i++) {
        const struct iok_file_plan *fp = &plan->files[i];
        int64_t one = iok_schema_data_bytes(&fp->schema), need;
        /* too large for 64 bits: the member's own check at its create says so */
        if (one < 0 ||
            __builtin_mul_overflow(one, (int64_t)(fp->per_rank ? run->nprocs : 1), &need))
            need = 0;
        describe(f, fp->path, need, run->core->overwrite);
    }
    if (fclose(f) != 0 || !m->planned)
        return iok_error(IOK_EIO, "out of memory for the mix's file list");
    return IOK_OK;
}

/* The next output of a list, or -1 at its end (or a garbled one). */
static int
take(const char **p, struct output *o)
{
    int at = 0;
    size_t lr = 0, ls = 0;
    if (sscanf(*p, "%lld %llu %lld %lld %llu %llu %zu:%n", &o->need, &o->fs, &o->free, &o->credit,
               &o->dev, &o->ino, &lr, &at) != 7 ||
        !at || strnlen(*p + at, lr) < lr)
        return -1;
    o->real = strndup(*p + at, lr);
    const char *q = *p + at + lr;
    at = 0;
    if (sscanf(q, " %zu:%n", &ls, &at) != 1 || !at || strnlen(q + at, ls) < ls)
        return -1;
    o->spelled = strndup(q + at, ls);
    q += at + ls;
    *p = q + (*q == '\n');
    return o->real && o->spelled ? 0 : -1;
}

static int
one_file(const struct iok_mix *mx, const struct output *a, const struct output *b)
{
    char same[PATH_MAX + 64];
    if (strcmp(a->real, b->real))
        snprintf(same, sizeof same, "one file (device %llu, inode %llu)", a->dev, a->ino);
    else
        snprintf(same, sizeof same, "%s", a->real);
    return iok_error(IOK_EUSAGE,
                     "mix: members %d (%s) and %d (%s) both write one file: %s (member %d) and "
                     "%s (member %d) are %s: give them different files (--dir, -o, ...)",
                     a->member + 1, mx->m[a->member].kernel->name, b->member + 1,
                     mx->m[b->member].kernel->name, a->spelled, a->member + 1, b->spelled,
                     b->member + 1, same);
}

static int
aliases(const struct iok_mix *mx, const struct output *o, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (o[i].member != o[j].member &&
                (!strcmp(o[i].real, o[j].real) ||
                 (o[i].ino && o[i].dev == o[j].dev && o[i].ino == o[j].ino)))
                return one_file(mx, &o[i], &o[j]);
    return IOK_OK;
}

/* Per file system (st_dev), the members' files together against its free
 * bytes (and the bytes of the files they replace). */
static int
room(const struct iok_mix *mx, const struct output *o, int n)
{
    for (int i = 0; i < n; i++) {
        int first = o[i].free >= 0 && o[i].need > 0;
        for (int j = 0; first && j < i; j++)
            first = o[j].fs != o[i].fs || o[j].need == 0;
        if (!first) /* unknown, nothing needed, or this file system counted already */
            continue;
        long long per[IOK_MIX_MAX] = {0}, total = 0, credit = 0;
        for (int j = i; j < n; j++)
            if (o[j].fs == o[i].fs && o[j].need > 0) {
                per[o[j].member] += o[j].need;
                total = __builtin_add_overflow(total, o[j].need, &total) ? LLONG_MAX : total;
                credit += o[j].credit;
            }
        if (total <= o[i].free + credit)
            continue;
        char list[IOK_MIX_MAX * 48] = "", dir[PATH_MAX], replaced[96] = "";
        for (int k = 0, at = 0; k < mx->n; k++)
            if (per[k] && at < (int)sizeof list)
                at += snprintf(list + at, sizeof list - (size_t)at, "%smember %d (%s): %lld",
                               at ? ", " : "", k + 1, mx->m[k].kernel->name, per[k]);
        if (credit)
            snprintf(replaced, sizeof replaced, " (with the %lld bytes of the files they replace)",
                     credit);
        iok_dirname(o[i].real, dir, sizeof dir);
        return iok_error(IOK_EUSAGE,
                         "mix: the members' files on the file system of %s need %lld bytes "
                         "together (%s), more than the %lld bytes free there%s: give the members "
                         "smaller sizes, or folders on other file systems",
                         dir, total, list, o[i].free + credit, replaced);
    }
    return IOK_OK;
}

/* Rank 0: the members' lists, checked. */
static int
check_lists(const struct iok_mix *mx, char *const *list)
{
    int n = 0, cap = 0, rc = IOK_OK;
    struct output *o = NULL;
    for (int i = 0; i < mx->n && rc == IOK_OK; i++)
        for (const char *p = list[i] ? list[i] : ""; *p && rc == IOK_OK;) {
            if (n == cap) {
                struct output *more = realloc(o, (size_t)(cap = 2 * cap + 8) * sizeof *o);
                if (!more) {
                    rc = iok_error(IOK_EIO, "out of memory for the mix's file lists");
                    break;
                }
                o = more;
            }
            o[n] = (struct output){.member = i};
            if (take(&p, &o[n++]))
                rc = iok_error(IOK_EIO, "mix: member %d's file list is garbled", i + 1);
        }
    if (rc == IOK_OK)
        rc = aliases(mx, o, n);
    if (rc == IOK_OK)
        rc = room(mx, o, n);
    for (int i = 0; i < n; i++) {
        free(o[i].real);
        free(o[i].spelled);
    }
    free(o);
    return rc;
}

int
iok_mix_check_outputs(struct iok_mix *mx, const char *planned)
{
    int wrank, rc = IOK_OK;
    MPI_Comm_rank(mx->xcomm, &wrank);
    MPI_Request req = MPI_REQUEST_NULL;
    if (mx->mrank == 0)
        MPI_Isend(planned ? planned : "", planned ? (int)strlen(planned) : 0, MPI_CHAR, 0,
                  TAG_OUTPUTS, mx->xcomm, &req);
    char *list[IOK_MIX_MAX] = {0};
    for (int i = 0; wrank == 0 && i < mx->n; i++) {
        MPI_Status st;
        int count;
        MPI_Probe(mx->m[i].first, TAG_OUTPUTS, mx->xcomm, &st);
        MPI_Get_count(&st, MPI_CHAR, &count);
        list[i] = calloc((size_t)count + 1, 1);
        MPI_Recv(list[i], count, MPI_CHAR, mx->m[i].first, TAG_OUTPUTS, mx->xcomm,
                 MPI_STATUS_IGNORE);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (wrank == 0)
        rc = check_lists(mx, list);
    for (int i = 0; i < mx->n; i++)
        free(list[i]);
    return rc;
}
