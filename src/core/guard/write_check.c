/* SPDX-License-Identifier: BSD-3-Clause */
/* A write the file system could not hold must not pass for a result.
 * Under OMPIO a write on a full disk can return success (the short count
 * only in the status), and libraries above MPI-IO do not all check it: the
 * core names the full file system when a write fails (a call failed: the
 * disk is full now), and after every write pass checks that the files hold
 * at least the bytes written. Never a verdict from free space alone: a
 * short file on a file system with room is named as data that did not
 * reach the file (Open MPI 4.1's OMPIO with a 0 or 1 byte collective
 * buffer writes nothing and reports success), not as ENOSPC. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "iokernels/error.h"

/* Below this the file system is full for a writer: the last write of a
 * rank (a record, a block) most likely did not fit. */
#define FULL_BYTES (1024 * 1024)

static int64_t
free_bytes(const char *dir)
{
    struct statvfs v;
    if (statvfs(dir, &v) != 0)
        return -1;
    return (int64_t)v.f_bavail * (int64_t)v.f_frsize;
}

/* Bytes of a file, or of every file under a directory (ADIOS2's BP);
 * `allocated`: the bytes the file system holds for it (a write that failed
 * midway leaves a hole below the file's size). */
static int64_t
size_of(const char *path, int depth, int allocated)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode) || depth > 4) {
        int64_t held = (int64_t)st.st_blocks * 512;
        return allocated && held < (int64_t)st.st_size ? held : (int64_t)st.st_size;
    }
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int64_t total = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char sub[PATH_MAX];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        int64_t n = size_of(sub, depth + 1, allocated);
        if (n > 0)
            total += n;
    }
    closedir(d);
    return total;
}

/* The system errors a write can end with, by name: what a storage
 * administrator searches for. */
static const char *
errno_name(int e)
{
    switch (e) {
    case ENOSPC:
        return "ENOSPC";
    case EDQUOT:
        return "EDQUOT";
    case EIO:
        return "EIO";
    case EFBIG:
        return "EFBIG";
    case EROFS:
        return "EROFS";
    default:
        return NULL;
    }
}

void
iok_note_full(const char *path, int err)
{
    char dir[PATH_MAX];
    iok_dirname(path, dir, sizeof dir);
    int64_t f = free_bytes(dir);
    if (f >= 0 && f < FULL_BYTES)
        iok_error_append(" (No space left on device, ENOSPC: the file system of %s has %lld KiB "
                         "free)",
                         dir, (long long)(f / 1024));
    else if (errno_name(err))
        iok_error_append(" (the last system error on this rank: %s, %s)", errno_name(err),
                         strerror(err));
}

int
iok_check_written(MPI_Comm comm, const char *path, int mine, const struct iok_schema *s,
                  int64_t bytes)
{
    if (!mine)
        return IOK_OK;
    char dir[PATH_MAX];
    iok_dirname(path, dir, sizeof dir);
    /* No verdict from free space alone: a disk another process filled
     * after this write finished says nothing about the write. */
    int64_t f = free_bytes(dir);
    int deflated = 0; /* compressed variables may take less room than their bytes */
    for (int v = 0; v < s->nvars; v++)
        deflated |= s->vars[v].deflate > 0;
    /* the data the schema holds (the offset past its last variable): a trace
     * that rewrites its bytes (replay) writes more than the file holds */
    int64_t room = iok_raw_var_offset(s, s->nvars);
    if (bytes > room)
        bytes = room;
    /* the blocks held count only where the file system is short of room (a
     * compressing file system holds fewer blocks than a file's bytes) */
    int64_t have = size_of(path, 0, f >= 0 && f < bytes);
    /* Every call reported success: no errno to name. Only a file system
     * that really lacks the room missing is named as the cause. */
    if (!deflated && have >= 0 && have < bytes && f >= 0 && f < bytes - have)
        return iok_error(IOK_EIO,
                         "%s holds %lld bytes, fewer than the %lld bytes written: a short write "
                         "(the file system of %s has %lld KiB free, less than the %lld bytes "
                         "missing: full, or a quota)",
                         path, (long long)have, (long long)bytes, dir, (long long)(f / 1024),
                         (long long)(bytes - have));
    if (!deflated && have >= 0 && have < bytes)
        return iok_error(IOK_EIO,
                         "%s holds %lld bytes, fewer than the %lld bytes written, though every "
                         "library call reported success: the data did not reach the file (its "
                         "file system has room; see the hints and MCA settings in effect)",
                         path, (long long)have, (long long)bytes);
    (void)comm;
    return IOK_OK;
}
