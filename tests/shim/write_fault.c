/* SPDX-License-Identifier: BSD-3-Clause */
/* LD_PRELOAD'ed by tests/e2e/test_write_faults.py: one write of one file
 * goes wrong the way a shared file system makes it go wrong, beneath every
 * I/O library (MPI-IO's OMPIO and ROMIO, HDF5, PnetCDF, NetCDF, ADIOS2).
 *
 * IOK_TEST_WFAULT_PATH: the file (any path ending so, or a folder's file
 *   whose path holds it: ADIOS2's BP folder);
 * IOK_TEST_WFAULT_AT: a byte offset: the first write whose range covers it
 *   is the one that goes wrong (once per process);
 * IOK_TEST_WFAULT_MODE: enospc or eio (the call fails, nothing written),
 *   short (half of it written, the count says so), drop (nothing written,
 *   the full count returned: a write lost without a word);
 * IOK_TEST_WFAULT_RANK: only this world rank (from the launcher's
 *   OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID); every rank
 *   when unset. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum mode { OFF, ENOSPC_, EIO_, SHORT, DROP };

static int fired;

static const char *
rank_text(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (getenv(names[i]))
            return getenv(names[i]);
    return "0";
}

static enum mode
armed(void)
{
    const char *m = getenv("IOK_TEST_WFAULT_MODE"), *r = getenv("IOK_TEST_WFAULT_RANK");
    if (fired || !m || !getenv("IOK_TEST_WFAULT_PATH") || !getenv("IOK_TEST_WFAULT_AT"))
        return OFF;
    if (r && strcmp(r, rank_text()) != 0)
        return OFF;
    return !strcmp(m, "enospc")  ? ENOSPC_
           : !strcmp(m, "eio")   ? EIO_
           : !strcmp(m, "short") ? SHORT
           : !strcmp(m, "drop")  ? DROP
                                 : OFF;
}

/* Does this write, of fd at off for n bytes, go wrong? */
static enum mode
hit(int fd, off_t off, size_t n)
{
    enum mode m = armed();
    if (m == OFF || n == 0)
        return OFF;
    long long at = atoll(getenv("IOK_TEST_WFAULT_AT"));
    if (at < off || at >= off + (long long)n)
        return OFF;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, path, sizeof path - 1);
    if (len <= 0)
        return OFF;
    path[len] = '\0';
    if (!strstr(path, getenv("IOK_TEST_WFAULT_PATH")))
        return OFF;
    fired = 1;
    fprintf(stderr, "write_fault: %s of %zu bytes at %lld of %s\n", getenv("IOK_TEST_WFAULT_MODE"),
            n, (long long)off, path);
    return m;
}

static size_t
total(const struct iovec *iov, int cnt)
{
    size_t t = 0;
    for (int i = 0; i < cnt; i++)
        t += iov[i].iov_len;
    return t;
}

/* The first `keep` bytes of a vector: a copy of its head. */
static int
head(const struct iovec *iov, int cnt, size_t keep, struct iovec *out)
{
    int k = 0;
    for (int i = 0; i < cnt && keep > 0; i++, k++) {
        out[k] = iov[i];
        if (out[k].iov_len > keep)
            out[k].iov_len = keep;
        keep -= out[k].iov_len;
    }
    return k;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static ssize_t
fail(enum mode m)
{
    errno = m == ENOSPC_ ? ENOSPC : EIO;
    return -1;
}

static ssize_t
single(ssize_t (*real)(int, const void *, size_t, off_t), int fd, const void *buf, size_t n,
       off_t off)
{
    enum mode m = hit(fd, off, n);
    if (m == ENOSPC_ || m == EIO_)
        return fail(m);
    if (m == DROP)
        return (ssize_t)n;
    return real(fd, buf, m == SHORT ? n / 2 : n, off);
}

ssize_t
pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return single(REAL(pwrite), fd, buf, n, off);
}

ssize_t
pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return single(REAL(pwrite64), fd, buf, n, off);
}

static ssize_t
vector(ssize_t (*real)(int, const struct iovec *, int, off_t), int fd, const struct iovec *iov,
       int cnt, off_t off)
{
    size_t n = total(iov, cnt);
    enum mode m = hit(fd, off, n);
    if (m == ENOSPC_ || m == EIO_)
        return fail(m);
    if (m == DROP)
        return (ssize_t)n;
    if (m == SHORT) {
        struct iovec *h = malloc((size_t)cnt * sizeof *h);
        if (!h)
            return fail(EIO_);
        ssize_t r = real(fd, h, head(iov, cnt, n / 2, h), off);
        free(h);
        return r;
    }
    return real(fd, iov, cnt, off);
}

ssize_t
pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return vector(REAL(pwritev), fd, iov, cnt, off);
}

ssize_t
pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return vector(REAL(pwritev64), fd, iov, cnt, off);
}

ssize_t
write(int fd, const void *buf, size_t n)
{
    off_t off = armed() != OFF ? lseek(fd, 0, SEEK_CUR) : -1;
    enum mode m = off >= 0 ? hit(fd, off, n) : OFF;
    if (m == ENOSPC_ || m == EIO_)
        return fail(m);
    if (m == DROP) { /* the file position moves as if written */
        lseek(fd, (off_t)n, SEEK_CUR);
        return (ssize_t)n;
    }
    return REAL(write)(fd, buf, m == SHORT ? n / 2 : n);
}

ssize_t
writev(int fd, const struct iovec *iov, int cnt)
{
    off_t off = armed() != OFF ? lseek(fd, 0, SEEK_CUR) : -1;
    size_t n = total(iov, cnt);
    enum mode m = off >= 0 ? hit(fd, off, n) : OFF;
    if (m == ENOSPC_ || m == EIO_)
        return fail(m);
    if (m == DROP) {
        lseek(fd, (off_t)n, SEEK_CUR);
        return (ssize_t)n;
    }
    if (m == SHORT) {
        struct iovec *h = malloc((size_t)cnt * sizeof *h);
        if (!h)
            return fail(EIO_);
        ssize_t r = REAL(writev)(fd, h, head(iov, cnt, n / 2, h));
        free(h);
        return r;
    }
    return REAL(writev)(fd, iov, cnt);
}
