/* SPDX-License-Identifier: BSD-3-Clause */
/* A generalized Hilbert curve over a w x h rectangle of any size: the
 * rectangle is split in two along its long side when it is much longer than
 * wide, else into three parts (bottom, right, top) as the Hilbert curve
 * does, the halves made even where that keeps the path unbroken; a strip of
 * width 1 is walked straight. Every step moves to a neighbouring cell (at
 * most one diagonal step for odd sizes), so a contiguous piece of the curve
 * is a compact region, which is what HOMME's and MPAS's partitions are. */
#include "e3sm_gen_sfc.h"

#include <stdlib.h>

struct walk {
    int64_t w, n, *out;
};

static int64_t
sgn(int64_t v)
{
    return (v > 0) - (v < 0);
}

static int64_t
half(int64_t v) /* floor(v / 2) */
{
    return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

static void
emit(struct walk *k, int64_t x, int64_t y)
{
    k->out[k->n++] = y * k->w + x;
}

/* the rectangle at (x, y) spanned by the vectors a (the way along) and b */
static void
gen(struct walk *k, int64_t x, int64_t y, int64_t ax, int64_t ay, int64_t bx, int64_t by)
{
    int64_t w = llabs(ax + ay), h = llabs(bx + by);
    int64_t dax = sgn(ax), day = sgn(ay), dbx = sgn(bx), dby = sgn(by);
    if (h == 1) {
        for (int64_t i = 0; i < w; i++, x += dax, y += day)
            emit(k, x, y);
        return;
    }
    if (w == 1) {
        for (int64_t i = 0; i < h; i++, x += dbx, y += dby)
            emit(k, x, y);
        return;
    }
    int64_t ax2 = half(ax), ay2 = half(ay), bx2 = half(bx), by2 = half(by);
    int64_t w2 = llabs(ax2 + ay2), h2 = llabs(bx2 + by2);
    if (2 * w > 3 * h) { /* long: two halves along a */
        if ((w2 & 1) && w > 2) {
            ax2 += dax;
            ay2 += day;
        }
        gen(k, x, y, ax2, ay2, bx, by);
        gen(k, x + ax2, y + ay2, ax - ax2, ay - ay2, bx, by);
        return;
    }
    if ((h2 & 1) && h > 2) {
        bx2 += dbx;
        by2 += dby;
    }
    gen(k, x, y, bx2, by2, ax2, ay2);
    gen(k, x + bx2, y + by2, ax, ay, bx - bx2, by - by2);
    gen(k, x + (ax - dax) + (bx2 - dbx), y + (ay - day) + (by2 - dby), -bx2, -by2, -(ax - ax2),
        -(ay - ay2));
}

int64_t *
e3sm_sfc_rect(int64_t w, int64_t h)
{
    struct walk k = {w, 0, malloc((size_t)(w * h + 1) * sizeof(int64_t))};
    if (!k.out || w < 1 || h < 1)
        return k.out;
    if (w >= h)
        gen(&k, 0, 0, w, 0, 0, h);
    else
        gen(&k, 0, 0, 0, h, w, 0);
    return k.out;
}

uint64_t
e3sm_sfc_key(uint64_t x, uint64_t y, int order)
{
    uint64_t d = 0;
    for (uint64_t s = (uint64_t)1 << (order - 1); s > 0; s >>= 1) {
        uint64_t rx = (x & s) != 0, ry = (y & s) != 0;
        d += s * s * ((3 * rx) ^ ry);
        if (!ry) { /* rotate the quadrant */
            if (rx)
                x = s - 1 - (x & (s - 1)), y = s - 1 - (y & (s - 1));
            uint64_t t = x;
            x = y, y = t;
        }
    }
    return d;
}
