/* SPDX-License-Identifier: BSD-3-Clause */
/* A path's format by its signature (as E3SM-IO's driver picks its reader):
 * a NetCDF classic signature at byte 0 first, then an HDF5 superblock at 0
 * or after a user block, then a BP3 minifooter at the end; a folder is a BP
 * dataset when its md.idx says so. */
#include "format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bp.h"
#include "cdf.h"
#include "hdf5_sb.h"

static const char *const names[] = {
    [IOK_FMT_NONE] = "a path that cannot be read",
    [IOK_FMT_FOLDER] = "a folder",
    [IOK_FMT_BP] = "an ADIOS2 BP dataset",
    [IOK_FMT_BP3] = "an ADIOS BP3 file",
    [IOK_FMT_CDF1] = "a NetCDF classic file (CDF-1)",
    [IOK_FMT_CDF2] = "a NetCDF 64-bit offset file (CDF-2)",
    [IOK_FMT_CDF5] = "a NetCDF 64-bit data file (CDF-5)",
    [IOK_FMT_HDF5] = "an HDF5 file",
    [IOK_FMT_EMPTY] = "an empty file",
    [IOK_FMT_OTHER] = "a file of no format this suite reads",
};

const char *
iok_format_name(enum iok_format f)
{
    return names[f];
}

int
iok_format_is_cdf(enum iok_format f)
{
    return f == IOK_FMT_CDF1 || f == IOK_FMT_CDF2 || f == IOK_FMT_CDF5;
}

enum iok_format
iok_format_of_file(int fd, int64_t size, int64_t *hdf5_at)
{
    unsigned char b[4];
    if (size == 0)
        return IOK_FMT_EMPTY;
    int v = pread(fd, b, 4, 0) == 4 ? iok_cdf_version(b, 4) : 0;
    if (v)
        return v == 1 ? IOK_FMT_CDF1 : v == 2 ? IOK_FMT_CDF2 : IOK_FMT_CDF5;
    if (iok_hdf5_find(fd, size, hdf5_at))
        return IOK_FMT_HDF5;
    if (iok_bp3_file(fd, size))
        return IOK_FMT_BP3;
    return IOK_FMT_OTHER;
}

enum iok_format
iok_format_of_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return IOK_FMT_NONE;
    if (S_ISDIR(st.st_mode))
        return iok_bp_dataset(path) ? IOK_FMT_BP : IOK_FMT_FOLDER;
    if (!S_ISREG(st.st_mode)) /* a device or a pipe: not opened (a pipe would block) */
        return IOK_FMT_OTHER;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return IOK_FMT_NONE;
    int64_t at = 0;
    enum iok_format f = iok_format_of_file(fd, (int64_t)st.st_size, &at);
    close(fd);
    return f;
}
