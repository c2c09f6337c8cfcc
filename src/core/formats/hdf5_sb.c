/* SPDX-License-Identifier: BSD-3-Clause */
/* The HDF5 superblock (HDF5 file format specification, section II.A): the
 * 8-byte signature at 0 or at a power of two from 512 on (a user block
 * before it); versions 0 and 1 keep the size of offsets at byte 13 and the
 * base address at 24 (28), versions 2 and 3 at 9 and 12; then the
 * free-space (extension) address and the end-of-file address. */
#include "hdf5_sb.h"

#include <string.h>
#include <unistd.h>

static const unsigned char hdf5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

static uint64_t
le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int
iok_hdf5_find(int fd, int64_t size, int64_t *at)
{
    unsigned char b[8];
    for (int64_t o = 0; o + 8 <= size; o = o ? 2 * o : 512)
        if (pread(fd, b, 8, o) == 8 && !memcmp(b, hdf5_sig, 8)) {
            *at = o;
            return 1;
        }
    return 0;
}

int64_t
iok_hdf5_eof(int fd, int64_t at)
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
