/* SPDX-License-Identifier: BSD-3-Clause */
/* Growing an array by doubling: for lists whose length is not known in
 * advance (a parser's records, a log). */
#ifndef IOKERNELS_GROW_H
#define IOKERNELS_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* Makes room for `need` elements of `size` bytes in *p (capacity *cap,
 * doubled from 64). Returns 0, or -1 when out of memory (*p unchanged). */
static inline int
iok_grow(void **p, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    int64_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

#endif
