/* SPDX-License-Identifier: BSD-3-Clause */
/* What a path holds, told by its signature before any library opens it (as
 * E3SM-IO's driver picks its reader): a folder, an ADIOS2 BP dataset (a
 * folder with md.idx), a NetCDF classic file (CDF-1, -2 or -5), an HDF5 file
 * (signature at 0, 512, 1024, ...), or something else. A read checks that
 * the file is what its backend reads and that it is not shorter than its
 * header says it holds; a write checks the path and that the data can fit
 * before any file is created. Rank 0 looks; the caller agrees. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core.h"
#include "iokernels/error.h"

enum kind { K_FOLDER, K_BP, K_CDF1, K_CDF2, K_CDF5, K_HDF5, K_EMPTY, K_OTHER };

static const char *const kind_names[] = {"a folder",
                                         "an ADIOS2 BP dataset",
                                         "a NetCDF classic file (CDF-1)",
                                         "a NetCDF 64-bit offset file (CDF-2)",
                                         "a NetCDF 64-bit data file (CDF-5)",
                                         "an HDF5 file",
                                         "an empty file",
                                         "a file of no format this suite reads"};

static const unsigned char hdf5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

static uint64_t
le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The kind of an open file of `size` bytes; *hdf5_at: where its signature is. */
static enum kind
kind_of_file(int fd, int64_t size, int64_t *hdf5_at)
{
    unsigned char b[8];
    if (size == 0)
        return K_EMPTY;
    if (pread(fd, b, 4, 0) == 4 && !memcmp(b, "CDF", 3) && (b[3] == 1 || b[3] == 2 || b[3] == 5))
        return b[3] == 1 ? K_CDF1 : b[3] == 2 ? K_CDF2 : K_CDF5;
    for (int64_t at = 0; at + 8 <= size; at = at ? 2 * at : 512)
        if (pread(fd, b, 8, at) == 8 && !memcmp(b, hdf5_sig, 8)) {
            *hdf5_at = at;
            return K_HDF5;
        }
    return K_OTHER;
}

/* The bytes an HDF5 file's superblock says it holds (base address + end
 * of file address), or -1 when unknown. */
static int64_t
hdf5_eof(int fd, int64_t at)
{
    unsigned char b[64];
    if (pread(fd, b, sizeof b, at) != (ssize_t)sizeof b)
        return -1;
    int ver = b[8], so, base_at;
    if (ver == 0 || ver == 1) {
        so = b[13];
        base_at = ver == 0 ? 24 : 28;
    } else if (ver == 2 || ver == 3) {
        so = b[9];
        base_at = 12;
    } else {
        return -1;
    }
    if (so != 4 && so != 8)
        return -1;
    /* v0/v1: base, free-space, end of file; v2/v3: base, extension, end of file */
    uint64_t base = le(b + base_at, so), eof = le(b + base_at + 2 * so, so);
    uint64_t undef = so == 8 ? UINT64_MAX : UINT32_MAX;
    if (eof == undef || base == undef || base + eof > (uint64_t)INT64_MAX)
        return -1;
    return (int64_t)(base + eof);
}

/* The CDF header's walk (with E3SM's map reader, its first user). */
int e3sm_cdf_header_walk(const char *path, int64_t *data_end);

/* What to do about a path of kind `got` where another kind was wanted. */
static const char *
advice(enum kind got)
{
    switch (got) {
    case K_BP:
        return "read it with --backend adios2";
    case K_CDF1:
    case K_CDF2:
    case K_CDF5:
        return "read it with --backend pnetcdf";
    case K_HDF5:
        return "read it with --backend hdf5 (netcdf4 if NetCDF-4 wrote it)";
    default:
        return "write it first (--mode write) or fix the path";
    }
}

/* A BP dataset: md.idx beginning with its header ("ADIOS-BP v2.<...>
 * Index Table", BP4 and BP5 alike) */
static int
is_bp(const char *path)
{
    char idx[PATH_MAX], head[8];
    snprintf(idx, sizeof idx, "%s/md.idx", path);
    int fd = open(idx, O_RDONLY);
    int bp = fd >= 0 && pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
             !memcmp(head, "ADIOS-BP", sizeof head);
    if (fd >= 0)
        close(fd);
    return bp;
}

/* The kinds a backend reads, by name; -1: any (mpiio, null). */
static int
wanted(const char *backend, enum kind *want)
{
    if (!strcmp(backend, "pnetcdf"))
        *want = K_CDF5; /* any CDF */
    else if (!strcmp(backend, "hdf5") || !strcmp(backend, "netcdf4"))
        *want = K_HDF5;
    else if (!strcmp(backend, "adios2"))
        *want = K_BP;
    else
        return 0;
    return 1;
}

static const char *
wanted_name(enum kind want, const char *backend)
{
    return want == K_CDF5                ? "a NetCDF classic file (CDF-1, -2 or -5)"
           : want == K_BP                ? "an ADIOS2 BP dataset (a folder with md.idx)"
           : !strcmp(backend, "netcdf4") ? "a NetCDF-4 file (HDF5)"
                                         : "an HDF5 file";
}

/* Bytes at the start of a file that are all NUL, up to 1 MiB. */
static int64_t
nul_prefix(int fd, int64_t size)
{
    static const int64_t most = 1 << 20;
    char b[4096];
    int64_t at = 0;
    while (at < size && at < most) {
        ssize_t n = pread(fd, b, sizeof b, at);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            if (b[i])
                return at + i;
        at += n;
    }
    return at;
}

/* A read's file (written = 0: bad input, with what to do) or a file just
 * written (written = 1: the library reported success, so a file that is
 * not what it wrote is a runtime failure, exit 1). */
static int
check_kind(const char *path, const char *backend, const struct iok_schema *s, int written)
{
    const int code = written ? IOK_EIO : IOK_EUSAGE;
    const char *after = written ? " after the write" : "";
    char lost[160] = "";
    struct stat st;
    if (stat(path, &st) != 0)
        return written
                   ? iok_error(IOK_EIO, "%s is gone after the write (%s)", path, strerror(errno))
                   : iok_error(IOK_EUSAGE,
                               "cannot read %s (%s): write it first (--mode write) or fix "
                               "the path",
                               path, strerror(errno));
    enum kind want = K_OTHER, got;
    int typed = wanted(backend, &want);
    if (S_ISDIR(st.st_mode)) {
        got = is_bp(path) ? K_BP : K_FOLDER;
        if (typed && got == want)
            return IOK_OK;
        return iok_error(code, "%s is %s%s, not %s: %s", path, kind_names[got], after,
                         typed ? wanted_name(want, backend) : "a file",
                         written ? "the data did not reach it" : advice(got));
    }
    if (!S_ISREG(st.st_mode))
        return IOK_OK; /* a device or a pipe: the library judges */
    if (!typed)        /* mpiio and null read any bytes: no read before the pass's own */
        return IOK_OK;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return iok_error(code, "cannot read %s%s (%s): fix its permissions or the path", path,
                         after, strerror(errno));
    int64_t at = 0, size = (int64_t)st.st_size;
    got = kind_of_file(fd, size, &at);
    int rc = IOK_OK;
    int cdf = got == K_CDF1 || got == K_CDF2 || got == K_CDF5;
    if (written && size > 0) {
        int64_t nul = nul_prefix(fd, size);
        if (nul == size)
            snprintf(lost, sizeof lost, " (all its %lld bytes are NUL)", (long long)size);
        else if (nul > 0)
            snprintf(lost, sizeof lost, " (its first %lld bytes are NUL)", (long long)nul);
    }
    if (typed && !(got == want || (want == K_CDF5 && cdf))) {
        rc = iok_error(code, "%s is %s%s%s, not %s: %s", path, kind_names[got], after, lost,
                       wanted_name(want, backend),
                       written ? "the data did not reach the file, though every library call "
                                 "reported success"
                               : advice(got));
    } else if (typed && got == K_HDF5) {
        int64_t eof = hdf5_eof(fd, at);
        if (eof > size)
            rc = iok_error(code,
                           "%s is truncated%s: %lld bytes, shorter than the %lld its HDF5 "
                           "superblock says it holds%s",
                           path, after, (long long)size, (long long)eof,
                           written ? "" : "; write it again");
    } else if (typed && cdf) {
        int64_t need = -1;
        rc = e3sm_cdf_header_walk(path, &need);
        if (rc == IOK_OK && need > size)
            rc = iok_error(code,
                           "%s is truncated%s: %lld bytes, shorter than the %lld at which its "
                           "NetCDF header's last record or variable begins%s",
                           path, after, (long long)size, (long long)need,
                           written ? "" : "; write it again");
        else if (rc != IOK_OK && written)
            rc = IOK_EIO; /* its header, named by the walk, is not what was written */
    }
    close(fd);
    return rc;
}

int
iok_check_input_kind(const char *path, const char *backend, const struct iok_schema *s)
{
    return check_kind(path, backend, s, 0);
}

int
iok_check_written_kind(const char *path, const char *backend, const struct iok_schema *s)
{
    return check_kind(path, backend, s, 1);
}

/* Bytes of the plan's data in one file, or -1 when they overflow. */
static int64_t
schema_bytes(const struct iok_schema *s)
{
    int64_t total = 0;
    for (int v = 0; v < s->nvars; v++) {
        int64_t e = iok_var_total_elems(s, v), b;
        if (e < 0 || __builtin_mul_overflow(e, (int64_t)iok_type_size(s->vars[v].type), &b) ||
            __builtin_add_overflow(total, b, &total))
            return -1;
    }
    return total;
}

int
iok_check_output_room(const char *path, const char *backend, const struct iok_schema *s, int nfiles,
                      int overwrite)
{
    struct stat st;
    int adios = !strcmp(backend, "adios2");
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && !adios)
        return iok_error(IOK_EUSAGE,
                         "output file %s is a folder: remove it or choose another --dir", path);
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && adios)
        return iok_error(IOK_EUSAGE,
                         "output %s is a file, where ADIOS2 writes a folder: remove it or "
                         "choose another --dir",
                         path);
    for (int v = 0; v < s->nvars; v++)
        if (s->vars[v].deflate > 0)
            return IOK_OK; /* compressed: its size is unknown */
    int64_t one = schema_bytes(s), need;
    if (one < 0 || __builtin_mul_overflow(one, (int64_t)nfiles, &need))
        return iok_error(IOK_EUSAGE,
                         "%s cannot be written: its data exceed %lld bytes (a 64-bit size): "
                         "choose smaller sizes",
                         path, (long long)INT64_MAX);
    if (!adios) /* ADIOS2 spreads them over subfiles of sizes unknown here */
        IOK_TRY(iok_limits_check_size(path, one));
    char dir[PATH_MAX];
    iok_dirname(path, dir, sizeof dir);
    struct statvfs v;
    if (statvfs(dir, &v) != 0)
        return IOK_OK;
    int64_t avail = (int64_t)v.f_bavail * (int64_t)v.f_frsize;
    if (overwrite && stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
        avail += (int64_t)st.st_size; /* what it replaces */
    if (need > avail)
        return iok_error(IOK_EUSAGE,
                         "%s needs %lld bytes of data, more than the %lld bytes free in %s: "
                         "choose smaller sizes or another --dir",
                         path, (long long)need, (long long)avail, dir);
    return IOK_OK;
}
