/* SPDX-License-Identifier: BSD-3-Clause */
/* The process's resource limits met at run time (ulimit -f, -n, -v): the
 * failing rank's line names the limit, exit 1, like any other runtime
 * failure. The libraries turn EMFILE and EFBIG into text of their own
 * ("Permission denied", "known error not in list", "file write failed", a
 * decomposition file that "cannot be opened"), so the limit is told from
 * the process's state when a call has failed: its descriptor table full,
 * the file it was writing grown to the file size limit, or little address
 * space left under ulimit -v. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "iokernels/error.h"

/* Descriptors a failed open may have given back before its caller saw the
 * failure (the file itself, a library's second handle, a lock file). */
#define FD_SLACK 4

void
iok_limits_init(void)
{
    /* A write past the file size limit (ulimit -f) raises SIGXFSZ, whose
     * default action kills the process without a word (exit 153, a partial
     * file left); ignored, the write fails with EFBIG and the run reports it. */
    signal(SIGXFSZ, SIG_IGN);
}

/* The process's open descriptors; -1 when even reading them needs one
 * more than the limit allows. */
static long
open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return errno == EMFILE || errno == ENFILE ? -1 : 0;
    long n = -1; /* the directory's own descriptor */
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The size of a file, or of the largest file in a folder (ADIOS2's BP). */
static long long
largest(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return (long long)st.st_size;
    DIR *d = opendir(path);
    long long most = -1;
    for (struct dirent *e; d && (e = readdir(d));) {
        char sub[PATH_MAX];
        if (e->d_name[0] == '.' ||
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub)
            continue;
        if (stat(sub, &st) == 0 && S_ISREG(st.st_mode) && (long long)st.st_size > most)
            most = (long long)st.st_size;
    }
    if (d)
        closedir(d);
    return most;
}

/* Under ulimit -v a library's allocation that fails shows as its own text
 * (ADIOS2's open: "Resource temporarily unavailable", a thread's stack),
 * so a failed call is told from the room the limit leaves: less than
 * AS_PROBE, as much as ADIOS2's write buffer takes in one piece, is named. */
#define AS_PROBE ((size_t)IOK_AS_PROBE_MIB << 20)

/* `bytes` of address space can be had now (mapped and unmapped, untouched). */
static int
can_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return 0;
    munmap(p, bytes);
    return 1;
}

int
iok_limits_as_short(unsigned long long *limit_kib)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY || can_map(AS_PROBE))
        return 0;
    *limit_kib = (unsigned long long)(r.rlim_cur / 1024);
    return 1;
}

int
iok_limits_note(int status)
{
    if (status == IOK_OK || status == IOK_EVERIFY)
        return status;
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
        long n = open_fds();
        if (n < 0 || n + FD_SLACK >= (long)r.rlim_cur) {
            iok_error_append(" (too many open files (ulimit -n %ld): the process has %s open; "
                             "raise ulimit -n)",
                             (long)r.rlim_cur, n < 0 ? "all of them" : "nearly all of them");
            /* the table is full, whatever the call made of it: a runtime
             * failure, not a bad input file */
            return status == IOK_EUSAGE ? IOK_EIO : status;
        }
    }
    unsigned long long kib;
    if (status != IOK_EUSAGE && !strstr(iok_errmsg(), "out of memory") && iok_limits_as_short(&kib))
        iok_error_append(" (out of memory: the process's address-space limit, ulimit -v %llu "
                         "KiB, leaves less than %d MiB; raise it)",
                         kib, IOK_AS_PROBE_MIB);
    const char *file = iok_signals_writing();
    if (file && getrlimit(RLIMIT_FSIZE, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
        long long size = largest(file);
        if (size >= (long long)r.rlim_cur)
            iok_error_append(" (File too large, EFBIG: %s reached the process's file size limit "
                             "of %llu bytes, ulimit -f; raise it)",
                             file, (unsigned long long)r.rlim_cur);
    }
    return status;
}

int
iok_limits_check_size(const char *path, int64_t bytes)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_FSIZE, &r) != 0 || r.rlim_cur == RLIM_INFINITY ||
        (unsigned long long)bytes <= (unsigned long long)r.rlim_cur)
        return IOK_OK;
    return iok_error(IOK_EUSAGE,
                     "%s needs %lld bytes of data, more than the process's file size limit of "
                     "%llu bytes (ulimit -f): raise it or choose smaller sizes",
                     path, (long long)bytes, (unsigned long long)r.rlim_cur);
}

/* Bytes of a schema's data, or -1 past 64 bits. */
static int64_t
data_bytes(const struct iok_schema *s)
{
    int64_t total = 0, b;
    for (int v = 0; v < s->nvars; v++) {
        int64_t e = iok_var_total_elems(s, v);
        if (e < 0 || __builtin_mul_overflow(e, (int64_t)iok_type_size(s->vars[v].type), &b) ||
            __builtin_add_overflow(total, b, &total))
            return -1;
    }
    return total;
}

int
iok_limits_check_memory(const struct iok_run *run, const struct iok_plan *plan)
{
    /* Only an address-space limit makes an allocation fail when memory is
     * short (without one the kernel overcommits, and the OOM killer ends
     * the process whatever it checked): then one step's buffers, a rank's
     * share of a file's data per step, must fit in what the limit leaves,
     * or the run would create (or, with --overwrite, truncate) its output
     * and fail at its first step. Reserved, not touched: no memory used. */
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
        return IOK_OK;
    for (int f = 0; f < plan->nfiles; f++) {
        const struct iok_file_plan *fp = &plan->files[f];
        int64_t all = data_bytes(&fp->schema);
        int steps = fp->nsteps > 0 ? fp->nsteps : 1, share = fp->per_rank ? 1 : run->nprocs;
        if (all <= 0)
            continue;
        /* ADIOS2's BP5 copies a step's data into its own buffer before it
         * writes (1306 MiB peak for a 640 MiB step), and when that
         * allocation fails it crashes (a segfault in its buffer code under
         * ulimit -v): the copy is reserved too */
        int copies = !strcmp(run->backend->name, "adios2") ? 2 : 1;
        int64_t step = all / steps / share * copies;
        void *p =
            mmap(NULL, (size_t)step, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return iok_error(IOK_EIO,
                             "out of memory: a step of %s needs about %lld MiB of buffers on "
                             "rank %d, more than its address-space limit (ulimit -v %llu KiB) "
                             "leaves; nothing was created: raise the limit, use more ranks or "
                             "smaller sizes",
                             fp->path, (long long)(step >> 20), run->rank,
                             (unsigned long long)(r.rlim_cur / 1024));
        munmap(p, (size_t)step);
    }
    return IOK_OK;
}
