/* SPDX-License-Identifier: BSD-3-Clause */
/* Boxes of a block-structured AMR hierarchy and the ways the AMReX and
 * Chombo kernels cut, order and distribute them. Pure functions, no MPI,
 * no I/O: unit-tested in tests/unit/test_amr_box.c. */
#ifndef IOK_AMR_BOX_H
#define IOK_AMR_BOX_H

#include <stdint.h>

/* Cell-centred box, inclusive corners, 3-D. */
struct amr_box {
    int lo[3], hi[3];
};

struct amr_boxlist {
    int n, cap;
    struct amr_box *b;
};

int64_t amr_box_cells(const struct amr_box *b);
int amr_box_len(const struct amr_box *b, int dir);
/* 1 if the boxes share a cell. */
int amr_box_intersects(const struct amr_box *a, const struct amr_box *b);
/* 1 if a lies inside b. */
int amr_box_contains(const struct amr_box *b, const struct amr_box *a);

void amr_boxlist_init(struct amr_boxlist *l);
void amr_boxlist_free(struct amr_boxlist *l);
/* Appends b; -1 on allocation failure. */
int amr_boxlist_push(struct amr_boxlist *l, const struct amr_box *b);
int64_t amr_boxlist_cells(const struct amr_boxlist *l);

/* AMReX's BoxList::maxSize (the 2019 version): one direction at a time
 * (x, then y, then z), every box of the list longer than `chunk` is cut. With
 * ratio the largest power of two dividing both chunk and the length, numblk =
 * ceil(len / chunk) blocks of len / numblk (the first len % numblk one
 * longer) in units of ratio; the box keeps its low block and the blocks cut
 * off its high end are appended to the list, high to low, after every box
 * of the pass. -1 on allocation failure or a non-positive chunk. */
int amr_max_size(struct amr_boxlist *l, int chunk);

/* 1 if a's small end comes before b's on the Morton curve: bits from the
 * most to the least significant, within a bit z before y before x (AMReX's
 * SFCToken::Compare and the Chombo kernel's morton ordering). Small ends
 * must be non-negative. */
int amr_morton_less(const struct amr_box *a, const struct amr_box *b);
/* 1 if a's small end comes first comparing i, then j, then k. */
int amr_lex_less(const struct amr_box *a, const struct amr_box *b);

/* Fills order[0..n) with the box indices sorted by `less` (ties by index). */
void amr_sort(const struct amr_box *boxes, int n,
              int (*less)(const struct amr_box *, const struct amr_box *), int *order);

/* AMReX's DistributionMapping, SFC strategy, on nprocs ranks: boxes in
 * Morton order of their small ends, weight = cell count, target = total /
 * nprocs; bucket i takes boxes while its weight is below the target (the
 * last takes the rest); when the running average total / (i + 1) exceeds
 * the target and the bucket holds more than one box, its last box goes back;
 * buckets are stable-sorted heaviest first and given to ranks 0, 1, ...
 * Writes the rank of every box to rank[]. -1 on allocation failure. */
int amr_sfc_map(const struct amr_box *boxes, int n, int nprocs, int *rank);

/* Chombo's LoadBalance over boxes already in the order to walk (order[]):
 * load = cell count, goal = total / nprocs; a bin closes when its load
 * reaches the goal, the box that reaches it going to the next bin instead
 * when it overshoots the goal by more than half its own load; after each
 * bin the goal is the remaining load over the remaining bins; the last bin
 * takes the rest; once the boxes left are no more than the bins left each
 * gets its own bin; with nprocs >= n, box order[i] goes to rank i. Writes
 * the rank of every box (by box index) to rank[]. */
void amr_chombo_balance(const struct amr_box *boxes, int n, const int *order, int nprocs,
                        int *rank);

#endif
