/* SPDX-License-Identifier: BSD-3-Clause */
/* Boxes: chopping (AMReX maxSize), ordering (Morton, lexicographic) and
 * distribution (AMReX SFC, Chombo LoadBalance). */
#include "amr_box.h"

#include <stdlib.h>
#include <string.h>

int64_t
amr_box_cells(const struct amr_box *b)
{
    int64_t n = 1;
    for (int d = 0; d < 3; d++)
        n *= (int64_t)(b->hi[d] - b->lo[d] + 1);
    return n;
}

int
amr_box_len(const struct amr_box *b, int dir)
{
    return b->hi[dir] - b->lo[dir] + 1;
}

int
amr_box_intersects(const struct amr_box *a, const struct amr_box *b)
{
    for (int d = 0; d < 3; d++)
        if (a->hi[d] < b->lo[d] || b->hi[d] < a->lo[d])
            return 0;
    return 1;
}

int
amr_box_contains(const struct amr_box *b, const struct amr_box *a)
{
    for (int d = 0; d < 3; d++)
        if (a->lo[d] < b->lo[d] || a->hi[d] > b->hi[d])
            return 0;
    return 1;
}

void
amr_boxlist_init(struct amr_boxlist *l)
{
    memset(l, 0, sizeof *l);
}

void
amr_boxlist_free(struct amr_boxlist *l)
{
    free(l->b);
    amr_boxlist_init(l);
}

int
amr_boxlist_push(struct amr_boxlist *l, const struct amr_box *b)
{
    if (l->n == l->cap) {
        int ncap = l->cap ? 2 * l->cap : 64;
        struct amr_box *p = realloc(l->b, (size_t)ncap * sizeof *p);
        if (!p)
            return -1;
        l->b = p;
        l->cap = ncap;
    }
    l->b[l->n++] = *b;
    return 0;
}

int64_t
amr_boxlist_cells(const struct amr_boxlist *l)
{
    int64_t n = 0;
    for (int i = 0; i < l->n; i++)
        n += amr_box_cells(&l->b[i]);
    return n;
}

int
amr_max_size(struct amr_boxlist *l, int chunk)
{
    if (chunk <= 0)
        return -1;
    for (int d = 0; d < 3; d++) {
        struct amr_boxlist cut;
        amr_boxlist_init(&cut);
        for (int i = 0; i < l->n; i++) {
            struct amr_box *bx = &l->b[i];
            int len = amr_box_len(bx, d);
            if (len <= chunk)
                continue;
            int ratio = 1, bs = chunk, nlen = len;
            while (bs % 2 == 0 && nlen % 2 == 0) {
                ratio *= 2;
                bs /= 2;
                nlen /= 2;
            }
            int numblk = nlen / bs + (nlen % bs ? 1 : 0);
            int sz = nlen / numblk, extra = nlen % numblk;
            for (int k = 0; k < numblk - 1; k++) {
                int ksize = (k < extra ? sz + 1 : sz) * ratio;
                struct amr_box piece = *bx;
                piece.lo[d] = bx->hi[d] - ksize + 1;
                bx->hi[d] = piece.lo[d] - 1;
                if (amr_boxlist_push(&cut, &piece)) {
                    amr_boxlist_free(&cut);
                    return -1;
                }
            }
        }
        for (int i = 0; i < cut.n; i++)
            if (amr_boxlist_push(l, &cut.b[i])) {
                amr_boxlist_free(&cut);
                return -1;
            }
        amr_boxlist_free(&cut);
    }
    return 0;
}

/* x's most significant bit is below y's. */
static int
msb_below(unsigned x, unsigned y)
{
    return x < y && x < (x ^ y);
}

int
amr_morton_less(const struct amr_box *a, const struct amr_box *b)
{
    /* the dimension whose first differing bit is the most significant, z
     * winning ties over y and y over x */
    int dim = 2;
    unsigned best = (unsigned)(a->lo[2] ^ b->lo[2]);
    for (int d = 1; d >= 0; d--) {
        unsigned x = (unsigned)(a->lo[d] ^ b->lo[d]);
        if (msb_below(best, x)) {
            best = x;
            dim = d;
        }
    }
    return a->lo[dim] < b->lo[dim];
}

int
amr_lex_less(const struct amr_box *a, const struct amr_box *b)
{
    for (int d = 0; d < 3; d++)
        if (a->lo[d] != b->lo[d])
            return a->lo[d] < b->lo[d];
    return 0;
}

/* Stable merge sort of idx[lo, hi) by less(boxes[.]), tmp as scratch. */
static void
merge_sort(const struct amr_box *boxes, int *idx, int *tmp, int lo, int hi,
           int (*less)(const struct amr_box *, const struct amr_box *))
{
    if (hi - lo < 2)
        return;
    int mid = lo + (hi - lo) / 2;
    merge_sort(boxes, idx, tmp, lo, mid, less);
    merge_sort(boxes, idx, tmp, mid, hi, less);
    int i = lo, j = mid, k = lo;
    while (i < mid && j < hi)
        tmp[k++] = less(&boxes[idx[j]], &boxes[idx[i]]) ? idx[j++] : idx[i++];
    while (i < mid)
        tmp[k++] = idx[i++];
    while (j < hi)
        tmp[k++] = idx[j++];
    memcpy(idx + lo, tmp + lo, (size_t)(hi - lo) * sizeof *idx);
}

void
amr_sort(const struct amr_box *boxes, int n,
         int (*less)(const struct amr_box *, const struct amr_box *), int *order)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    int *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    if (!tmp) { /* insertion sort: slow but correct */
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && less(&boxes[order[j]], &boxes[order[j - 1]]); j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        return;
    }
    merge_sort(boxes, order, tmp, 0, n, less);
    free(tmp);
}

int
amr_sfc_map(const struct amr_box *boxes, int n, int nprocs, int *rank)
{
    if (nprocs < 1 || n < 0)
        return -1;
    int *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    int *end = malloc((size_t)nprocs * sizeof *end), *team = malloc((size_t)nprocs * sizeof *team);
    int64_t *wgt = calloc((size_t)nprocs, sizeof *wgt);
    if (!order || !end || !team || !wgt) {
        free(order);
        free(end);
        free(team);
        free(wgt);
        return -1;
    }
    amr_sort(boxes, n, amr_morton_less, order);
    double total = 0;
    for (int i = 0; i < n; i++)
        total += (double)amr_box_cells(&boxes[i]);
    double volper = total / nprocs, totalvol = 0;
    int K = 0;
    for (int i = 0; i < nprocs; i++) {
        int cnt = 0;
        double vol = 0;
        for (; K < n && (i == nprocs - 1 || vol < volper); K++, cnt++)
            vol += (double)amr_box_cells(&boxes[order[K]]);
        totalvol += vol;
        if (totalvol / (i + 1) > volper && cnt > 1 && i < nprocs - 1) {
            K--;
            totalvol -= (double)amr_box_cells(&boxes[order[K]]);
        }
        end[i] = K;
    }
    for (int i = 0, k = 0; i < nprocs; i++) {
        for (; k < end[i]; k++)
            wgt[i] += amr_box_cells(&boxes[order[k]]);
        team[i] = i;
    }
    /* stable sort of the buckets, heaviest first (insertion: nprocs is small
     * next to the boxes, and this keeps equal weights in bucket order) */
    for (int i = 1; i < nprocs; i++)
        for (int j = i; j > 0 && wgt[team[j]] > wgt[team[j - 1]]; j--) {
            int t = team[j];
            team[j] = team[j - 1];
            team[j - 1] = t;
        }
    for (int r = 0; r < nprocs; r++) {
        int b = team[r];
        for (int k = b ? end[b - 1] : 0; k < end[b]; k++)
            rank[order[k]] = r;
    }
    free(order);
    free(end);
    free(team);
    free(wgt);
    return 0;
}

void
amr_chombo_balance(const struct amr_box *boxes, int n, const int *order, int nprocs, int *rank)
{
    if (nprocs >= n) {
        for (int i = 0; i < n; i++)
            rank[order[i]] = i;
        return;
    }
    int64_t remaining = 0, cur = 0;
    for (int i = 0; i < n; i++)
        remaining += amr_box_cells(&boxes[i]);
    double goal = (double)remaining / nprocs;
    int bin = 0, count = 0;
#define CLOSE_BIN()                                                                                \
    do {                                                                                           \
        remaining -= cur;                                                                          \
        bin++;                                                                                     \
        cur = 0;                                                                                   \
        count = 0;                                                                                 \
        goal = (double)remaining / (nprocs - bin);                                                 \
    } while (0)
    for (int i = 0; i < n; i++) {
        int b = order[i], left = n - i;
        int64_t load = amr_box_cells(&boxes[b]);
        if (count > 0 && left <= nprocs - bin - 1)
            CLOSE_BIN();
        if (count == 0 && left <= nprocs - bin) { /* one bin each from here */
            for (int j = i; j < n; j++)
                rank[order[j]] = bin++;
            return;
        }
        if (bin == nprocs - 1) { /* the last bin takes the rest */
            rank[b] = bin;
            continue;
        }
        if ((double)(cur + load) >= goal) {
            if (count > 0 && (double)(cur + load) - goal > (double)load / 2) {
                CLOSE_BIN(); /* b opens the next bin: walk it again */
                i--;
                continue;
            }
            rank[b] = bin;
            cur += load;
            CLOSE_BIN();
            continue;
        }
        rank[b] = bin;
        cur += load;
        count++;
    }
#undef CLOSE_BIN
}
