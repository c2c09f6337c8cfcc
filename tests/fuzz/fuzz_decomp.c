/* SPDX-License-Identifier: BSD-3-Clause */
/* E3SM decomposition files (map layout, legacy layout; NetCDF classic
 * through PnetCDF, NetCDF-4/HDF5 through HDF5): the bytes go to a temporary
 * file that the reader opens on one rank. HDF5 inputs are replayed only. */
#include <unistd.h>

#include "core/formats/format.h"
#include "fuzz.h"
#include "kernels/e3sm_common/e3sm_decomp.h"

void
fuzz_one(const char *text, size_t size)
{
    char path[] = "/tmp/iok-fuzz-decomp-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, text + done, size - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    close(fd);
#ifndef IOK_FUZZ_REPLAY
    /* HDF5's own object-header parsing is not hardened against crafted files
     * (heap overflows in H5O__msg_iterate_real and its decoders, e.g.
     * HDFGroup/hdf5#1368, #6401): mutated HDF5 maps (a superblock at 0 or
     * after a user block, as the reader finds it) are not fuzzed, only
     * replayed from the corpus (the seed map). NetCDF classic maps are, their
     * header checked by the suite before PnetCDF parses it. */
    if (iok_format_of_path(path) == IOK_FMT_HDF5) {
        unlink(path);
        return;
    }
#endif
    struct e3sm_decomps d;
    memset(&d, 0, sizeof d);
    if (e3sm_decomp_read(path, MPI_COMM_SELF, &d) != 0)
        fuzz_check_message("e3sm_decomp_read", iok_errmsg());
    else
        e3sm_decomps_free(&d);
    unlink(path);
}
