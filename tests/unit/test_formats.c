/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's formats room (src/core/formats/): each signature found where
 * it is and refused where it is not: an HDF5 superblock at 0 and after a
 * user block (not at another offset), a NetCDF classic signature and its
 * versions, a BP3 file's minifooter (the shipped map, and the same map cut
 * short), a BP4/BP5 dataset's md.idx. */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/formats/bp.h"
#include "core/formats/cdf.h"
#include "core/formats/format.h"
#include "core/formats/hdf5_sb.h"
#include "iokernels/error.h"

#include <mpi.h>

static char dir[] = "/tmp/iok-test-formats-XXXXXX";

/* A file of n bytes in dir: zeros, with sig (len bytes) at `at`. */
static const char *
make(const char *name, int64_t n, const void *sig, int64_t len, int64_t at)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (n > 0 && ftruncate(fd, n) != 0)
        n = 0;
    if (sig && pwrite(fd, sig, (size_t)len, at) != len)
        n = 0;
    close(fd);
    return path;
}

static const unsigned char h5sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

static void
test_hdf5(void)
{
    int64_t at[] = {0, 512, 1024, 4096};
    for (int i = 0; i < 4; i++) {
        enum iok_format f = iok_format_of_path(make("h.h5", 8192, h5sig, 8, at[i]));
        CHECK(f == IOK_FMT_HDF5, "HDF5 signature at %lld: found %s", (long long)at[i],
              iok_format_name(f));
        int fd = open(make("h.h5", 8192, h5sig, 8, at[i]), O_RDONLY);
        int64_t where = -1;
        CHECK(iok_hdf5_find(fd, 8192, &where) && where == at[i], "at %lld: found at %lld",
              (long long)at[i], (long long)where);
        close(fd);
    }
    /* not where a user block can end, nor past the file's end */
    enum iok_format f = iok_format_of_path(make("h.h5", 8192, h5sig, 8, 300));
    CHECK(f == IOK_FMT_OTHER, "HDF5 signature at 300 (no user block ends there): %s",
          iok_format_name(f));
    f = iok_format_of_path(make("h.h5", 8192, h5sig, 7, 1024));
    CHECK(f == IOK_FMT_OTHER, "7 of the 8 signature bytes: %s", iok_format_name(f));
}

static void
test_cdf(void)
{
    for (int v = 0; v < 7; v++) {
        unsigned char b[4] = {'C', 'D', 'F', (unsigned char)v};
        int want = v == 1 || v == 2 || v == 5 ? v : 0;
        CHECK(iok_cdf_version(b, 4) == want, "CDF version byte %d", v);
        CHECK(iok_cdf_version(b, 3) == 0, "3 bytes are no signature");
        enum iok_format f = iok_format_of_path(make("c.nc", 64, b, 4, 0));
        CHECK(iok_format_is_cdf(f) == (want != 0), "CDF version byte %d: %s", v,
              iok_format_name(f));
    }
    /* the walk refuses a header that claims more than the file holds */
    unsigned char hdr[] = {'C', 'D', 'F', 1, 0, 0, 0, 0, 0, 0, 0, 10, 0x7f, 0, 0, 0};
    CHECK(iok_cdf_header_check(make("c.nc", sizeof hdr, hdr, sizeof hdr, 0)) == IOK_EUSAGE,
          "a dimension count of 2^31 in a 16-byte file passed the walk");
    CHECK(strstr(iok_errmsg(), "damaged NetCDF header") != NULL, "message: %s", iok_errmsg());
    CHECK(iok_format_of_path(make("e.nc", 0, NULL, 0, 0)) == IOK_FMT_EMPTY, "an empty file");
}

static void
test_bp(void)
{
    const char *map = IOK_TEST_DATA "/e3sm/map_f_case_16p.bp";
    CHECK(iok_format_of_path(map) == IOK_FMT_BP3, "the shipped BP3 map: %s",
          iok_format_name(iok_format_of_path(map)));
    /* the same map cut short: its minifooter is gone */
    struct stat st;
    CHECK(stat(map, &st) == 0, "no %s", map);
    char *all = check_slurp(map);
    CHECK(all != NULL, "cannot read %s", map);
    if (all) {
        const char *p = make("cut.bp", 0, all, 5000, 0);
        CHECK(iok_format_of_path(p) == IOK_FMT_OTHER, "the first 5000 bytes of the map: %s",
              iok_format_name(iok_format_of_path(p)));
        /* its footer with the index offsets out of order */
        p = make("swapped.bp", 0, all, st.st_size, 0);
        int fd = open(p, O_WRONLY);
        unsigned char zero[8] = {0};
        CHECK(pwrite(fd, zero, 8, st.st_size - 20) == 8, "write");
        close(fd);
        CHECK(iok_format_of_path(p) == IOK_FMT_OTHER, "a footer whose indices are out of order: %s",
              iok_format_name(iok_format_of_path(p)));
        free(all);
    }
    /* a BP4/BP5 dataset: a folder whose md.idx starts with the header */
    char ds[PATH_MAX];
    snprintf(ds, sizeof ds, "%s/d.bp", dir);
    mkdir(ds, 0755);
    CHECK(iok_format_of_path(ds) == IOK_FMT_FOLDER, "a folder without md.idx");
    make("d.bp/md.idx", 64, "ADIOS-BX v2", 11, 0);
    CHECK(iok_format_of_path(ds) == IOK_FMT_FOLDER, "an md.idx with another header");
    make("d.bp/md.idx", 64, "ADIOS-BP v2.12 Index Table", 26, 0);
    CHECK(iok_format_of_path(ds) == IOK_FMT_BP, "a BP dataset: %s",
          iok_format_name(iok_format_of_path(ds)));
    CHECK(iok_format_of_path("/nonexistent/x.bp") == IOK_FMT_NONE, "a missing path");
}

int
main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (!mkdtemp(dir))
        return 1;
    test_hdf5();
    test_cdf();
    test_bp();
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    int rc = check_summary("test_formats");
    MPI_Finalize();
    return rc;
}
