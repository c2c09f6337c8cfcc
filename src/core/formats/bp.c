/* SPDX-License-Identifier: BSD-3-Clause */
/* ADIOS BP by content. BP4/BP5: a folder; its md.idx starts with a 64-byte
 * header whose first bytes read "ADIOS-BP v2.<...> Index Table". BP3 (ADIOS
 * 1.x, and ADIOS2's BP3 engine): one file ending in a 28-byte minifooter,
 * the offsets of its process-group, variable and attribute indices (8 bytes
 * each), then 4 bytes: the endianness of the writer (0 little, 1 big) at
 * the first and the format's version (3) at the last. */
#include "bp.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
iok_bp_dataset(const char *path)
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

int
iok_bp3_file(int fd, int64_t size)
{
    enum { FOOTER = 28 };
    unsigned char b[FOOTER];
    if (size < FOOTER || pread(fd, b, FOOTER, size - FOOTER) != FOOTER)
        return 0;
    if (b[FOOTER - 1] != 3 || b[24] > 1)
        return 0;
    uint64_t off[3];
    for (int i = 0; i < 3; i++) {
        off[i] = 0;
        for (int k = 0; k < 8; k++) /* little-endian unless the flag says big */
            off[i] |= (uint64_t)b[8 * i + (b[24] ? 7 - k : k)] << (8 * k);
    }
    return off[0] < off[1] && off[1] < off[2] && off[2] <= (uint64_t)(size - FOOTER);
}
