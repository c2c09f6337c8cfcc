/* E3SM decomposition files (map layout, legacy layout; NetCDF classic
 * through PnetCDF, NetCDF-4/HDF5 through HDF5): the bytes go to a temporary
 * file that the reader opens on one rank. */
#include <unistd.h>

#include "fuzz.h"
#include "kernels/e3sm/e3sm_decomp.h"

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
    struct e3sm_decomps d;
    memset(&d, 0, sizeof d);
    if (e3sm_decomp_read(path, MPI_COMM_SELF, &d) != 0)
        fuzz_check_message("e3sm_decomp_read", iok_errmsg());
    else
        e3sm_decomps_free(&d);
    unlink(path);
}
