/* SPDX-License-Identifier: BSD-3-Clause */
/* What a path holds, told by its signature before any library opens it
 * (formats/format.h: a folder, an ADIOS2 BP dataset, a NetCDF classic file,
 * an HDF5 file, ...). A read checks that
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

#include "core/guard/guard.h"
#include "core/lib/lib.h"
#include "core/formats/cdf.h"
#include "core/formats/format.h"
#include "core/formats/hdf5_sb.h"
#include "iokernels/error.h"

/* What to do about a path of kind `got` where another kind was wanted. */
static const char *
advice(enum iok_format got)
{
    switch (got) {
    case IOK_FMT_BP:
        return "read it with --backend adios2";
    case IOK_FMT_CDF1:
    case IOK_FMT_CDF2:
    case IOK_FMT_CDF5:
        return "read it with --backend pnetcdf";
    case IOK_FMT_HDF5:
        return "read it with --backend hdf5 (netcdf4 if NetCDF-4 wrote it)";
    default:
        return "write it first (--mode write) or fix the path";
    }
}

/* The kinds a backend reads, by name; -1: any (mpiio, null). */
static int
wanted(const char *backend, enum iok_format *want)
{
    if (!strcmp(backend, "pnetcdf"))
        *want = IOK_FMT_CDF5; /* any CDF */
    else if (!strcmp(backend, "hdf5") || !strcmp(backend, "netcdf4"))
        *want = IOK_FMT_HDF5;
    else if (!strcmp(backend, "adios2"))
        *want = IOK_FMT_BP;
    else
        return 0;
    return 1;
}

static const char *
wanted_name(enum iok_format want, const char *backend)
{
    return want == IOK_FMT_CDF5          ? "a NetCDF classic file (CDF-1, -2 or -5)"
           : want == IOK_FMT_BP          ? "an ADIOS2 BP dataset (a folder with md.idx)"
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
    enum iok_format want = IOK_FMT_OTHER, got;
    int typed = wanted(backend, &want);
    if (S_ISDIR(st.st_mode)) {
        got = iok_format_of_path(path); /* BP or a folder */
        if (typed && got == want)
            return IOK_OK;
        return iok_error(code, "%s is %s%s, not %s: %s", path, iok_format_name(got), after,
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
    got = iok_format_of_file(fd, size, &at);
    int rc = IOK_OK;
    int cdf = iok_format_is_cdf(got);
    if (written && size > 0) {
        int64_t nul = nul_prefix(fd, size);
        if (nul == size)
            snprintf(lost, sizeof lost, " (all its %lld bytes are NUL)", (long long)size);
        else if (nul > 0)
            snprintf(lost, sizeof lost, " (its first %lld bytes are NUL)", (long long)nul);
    }
    if (typed && !(got == want || (want == IOK_FMT_CDF5 && cdf))) {
        rc = iok_error(code, "%s is %s%s%s, not %s: %s", path, iok_format_name(got), after, lost,
                       wanted_name(want, backend),
                       written ? "the data did not reach the file, though every library call "
                                 "reported success"
                               : advice(got));
    } else if (typed && got == IOK_FMT_HDF5) {
        int64_t eof = iok_hdf5_eof(fd, at);
        if (eof > size)
            rc = iok_error(code,
                           "%s is truncated%s: %lld bytes, shorter than the %lld its HDF5 "
                           "superblock says it holds%s",
                           path, after, (long long)size, (long long)eof,
                           written ? "" : "; write it again");
    } else if (typed && cdf) {
        int64_t need = -1;
        rc = iok_cdf_header_walk(path, &need);
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

int64_t
iok_schema_data_bytes(const struct iok_schema *s)
{
    int64_t total = 0;
    for (int v = 0; v < s->nvars; v++)
        if (s->vars[v].deflate > 0)
            return 0; /* compressed: its size is unknown */
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
    int64_t one = iok_schema_data_bytes(s), need;
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
