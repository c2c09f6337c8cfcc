/* SPDX-License-Identifier: BSD-3-Clause */
/* AMR boxes: AMReX's maxSize chopping and SFC mapping reproduce the
 * reference file's Processors, boxes and offsets; for sizes that do not
 * divide evenly the boxes tile each level's region exactly once, no box
 * exceeds max_grid_size, offsets are consistent; Morton order, the SFC
 * buckets and Chombo's load balance on small known inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels/amr_common/amr_box.h"
#include "kernels/amrex/amrex_grid.h"

/* The numbers after "NAME =" up to ';' in a CDL file; returns how many. */
static int
cdl_values(const char *text, const char *name, long long *out, int max)
{
    char key[128];
    snprintf(key, sizeof key, " %s =", name);
    const char *p = strstr(text, key);
    if (!p)
        return -1;
    p += strlen(key);
    int n = 0;
    while (*p && *p != ';' && n < max) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p) {
            p++;
            continue;
        }
        out[n++] = v;
        p = end;
    }
    return n;
}

static void
test_reference(void)
{
    const char *path = IOK_TEST_DATA "/amrex/plt00000_n128_mgs32_nc2_np4.meta.cdl";
    char *text = check_slurp(path);
    CHECK(text != NULL, "cannot read %s", path);
    if (!text)
        return;
    long long procs[64], boxes[64 * 6], offsets[65];
    CHECK(cdl_values(text, "level_0.Processors", procs, 64) == 64, "Processors in %s", path);
    CHECK(cdl_values(text, "level_0.boxes", boxes, 64 * 6) == 64 * 6, "boxes in %s", path);
    CHECK(cdl_values(text, "level_0.data:offsets=0", offsets, 65) == 65, "offsets in %s", path);
    free(text);

    struct amr_hier h;
    CHECK(amrex_build(&h, 128, 32, 1, 2, 4) == 0, "build");
    const struct amr_level *L = &h.lev[0];
    CHECK(L->nboxes == 64, "%d boxes", L->nboxes);
    int bad_p = 0, bad_b = 0, bad_o = 0;
    for (int i = 0; i < 64 && i < L->nboxes; i++) {
        bad_p += L->procs[i] != procs[i];
        for (int d = 0; d < 3; d++)
            bad_b +=
                L->boxes[i].lo[d] != boxes[6 * i + d] || L->boxes[i].hi[d] != boxes[6 * i + 3 + d];
    }
    for (int i = 0; i <= 64 && i <= L->nboxes; i++)
        bad_o += L->offsets[i] != offsets[i];
    CHECK(bad_p == 0, "%d Processors differ from the reference", bad_p);
    CHECK(bad_b == 0, "%d box corners differ from the reference", bad_b);
    CHECK(bad_o == 0, "%d offsets differ from the reference", bad_o);
    amr_hier_free(&h);
}

static void
invariants(int ncells, int mgs, int nlevs, int ncomp, int nprocs)
{
    struct amr_hier h;
    CHECK(amrex_build(&h, ncells, mgs, nlevs, ncomp, nprocs) == 0, "build");
    for (int l = 0; l < nlevs; l++) {
        const struct amr_level *L = &h.lev[l];
        struct amr_box r = amrex_region(ncells, l);
        int side = ncells << l;
        CHECK(r.lo[0] >= 0 && r.hi[0] < side, "region inside the level domain");
        int n[3];
        for (int d = 0; d < 3; d++)
            n[d] = r.hi[d] - r.lo[d] + 1;
        unsigned char *hit = calloc((size_t)n[0] * n[1] * n[2], 1);
        int too_big = 0, outside = 0, bad_off = 0, unsorted = 0, bad_rank = 0;
        for (int i = 0; i < L->nboxes; i++) {
            const struct amr_box *b = &L->boxes[i];
            for (int d = 0; d < 3; d++)
                too_big += amr_box_len(b, d) > mgs;
            if (!amr_box_contains(&r, b)) {
                outside++;
                continue;
            }
            for (int z = b->lo[2]; z <= b->hi[2]; z++)
                for (int y = b->lo[1]; y <= b->hi[1]; y++)
                    for (int x = b->lo[0]; x <= b->hi[0]; x++)
                        hit[((size_t)(z - r.lo[2]) * n[1] + (y - r.lo[1])) * n[0] +
                            (x - r.lo[0])]++;
            bad_off += L->offsets[i + 1] - L->offsets[i] != amr_box_cells(b) * ncomp;
            unsorted += i > 0 && L->procs[i] < L->procs[i - 1];
            bad_rank += L->procs[i] < 0 || L->procs[i] >= nprocs;
        }
        size_t miss = 0;
        for (size_t c = 0; c < (size_t)n[0] * n[1] * n[2]; c++)
            miss += hit[c] != 1;
        free(hit);
        CHECK(miss == 0, "n%d mgs%d level %d: %zu cells not covered exactly once", ncells, mgs, l,
              miss);
        CHECK(too_big == 0 && outside == 0, "n%d mgs%d level %d: %d sides over max, %d outside",
              ncells, mgs, l, too_big, outside);
        CHECK(bad_off == 0 && L->offsets[0] == 0 &&
                  L->offsets[L->nboxes] == (int64_t)n[0] * n[1] * n[2] * ncomp,
              "n%d level %d: offsets", ncells, l);
        CHECK(unsorted == 0 && bad_rank == 0, "n%d level %d: boxes grouped by rank", ncells, l);
    }
    amr_hier_free(&h);
}

static void
test_sfc_small(void)
{
    /* 10 cells along x, max 4: kept [0,1], cut [6,9] then [2,5] */
    struct amr_boxlist l;
    amr_boxlist_init(&l);
    struct amr_box dom = {{0, 0, 0}, {9, 0, 0}};
    amr_boxlist_push(&l, &dom);
    CHECK(amr_max_size(&l, 4) == 0 && l.n == 3, "%d boxes", l.n);
    CHECK(l.b[0].lo[0] == 0 && l.b[0].hi[0] == 1 && l.b[1].lo[0] == 6 && l.b[2].lo[0] == 2,
          "order %d %d %d", l.b[0].lo[0], l.b[1].lo[0], l.b[2].lo[0]);
    /* 2 ranks, target 5: bucket 0 takes [0,1] and [2,5] (6 > 5: gives [2,5]
     * back), bucket 1 the rest (8); heaviest first: bucket 1 is rank 0 */
    int rank[3];
    CHECK(amr_sfc_map(l.b, 3, 2, rank) == 0, "sfc");
    CHECK(rank[0] == 1 && rank[1] == 0 && rank[2] == 0, "ranks %d %d %d", rank[0], rank[1],
          rank[2]);
    amr_boxlist_free(&l);

    struct amr_box a = {{1, 0, 0}, {1, 0, 0}}, b = {{0, 1, 0}, {0, 1, 0}},
                   c = {{0, 0, 1}, {0, 0, 1}}, d = {{1, 1, 0}, {1, 1, 0}},
                   e = {{4, 0, 0}, {4, 0, 0}};
    CHECK(amr_morton_less(&a, &b) && !amr_morton_less(&b, &a), "x bit before y bit");
    CHECK(amr_morton_less(&d, &c), "(1,1,0) before (0,0,1): z is the most significant");
    CHECK(amr_morton_less(&c, &e), "(0,0,1) before (4,0,0): a higher bit wins");
    CHECK(!amr_morton_less(&a, &a), "irreflexive");
    CHECK(amr_lex_less(&b, &a) && amr_lex_less(&c, &b), "lexicographic: i, then j, then k");
}

/* Boxes of given loads (1 x 1 x load) walked in index order. */
static void
balance(const int *loads, int n, int nprocs, const int *want)
{
    struct amr_box boxes[16];
    int order[16], rank[16];
    for (int i = 0; i < n; i++) {
        boxes[i] = (struct amr_box){{0, 0, 100 * i}, {0, 0, 100 * i + loads[i] - 1}};
        order[i] = i;
    }
    amr_chombo_balance(boxes, n, order, nprocs, rank);
    char got[128] = "", exp[128] = "";
    for (int i = 0; i < n; i++) {
        snprintf(got + strlen(got), sizeof got - strlen(got), "%d ", rank[i]);
        snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%d ", want[i]);
    }
    CHECK(!strcmp(got, exp), "balance of %d boxes on %d: got %s, want %s", n, nprocs, got, exp);
}

static void
test_chombo_balance(void)
{
    balance((int[]){4, 4, 4, 4}, 4, 2, (int[]){0, 0, 1, 1});
    /* the 8 would overshoot the goal 6 by more than half of itself */
    balance((int[]){1, 1, 1, 1, 8}, 5, 2, (int[]){0, 0, 0, 0, 1});
    /* goal recomputed after the first bin: 3 over 2 bins */
    balance((int[]){5, 1, 1, 1}, 4, 3, (int[]){0, 1, 1, 2});
    balance((int[]){1, 1, 1, 1}, 4, 3, (int[]){0, 1, 1, 2});
    /* as many bins as boxes: one each; more bins than boxes: box i to rank i */
    balance((int[]){9, 1, 1}, 3, 3, (int[]){0, 1, 2});
    balance((int[]){2, 3}, 2, 5, (int[]){0, 1});
    balance((int[]){1, 1, 1, 1, 1}, 5, 4, (int[]){0, 1, 2, 2, 3});
    /* two boxes left for the two empty bins: one each, however light */
    balance((int[]){1, 1, 1, 1, 1, 1, 1, 1, 1, 30}, 10, 3, (int[]){0, 0, 0, 0, 0, 0, 0, 0, 1, 2});
}

int
main(void)
{
    test_reference();
    const int cases[][5] = {{128, 32, 1, 2, 4}, {100, 32, 1, 1, 3}, {37, 8, 2, 2, 5},
                            {20, 8, 3, 3, 3},   {64, 16, 2, 1, 7},  {9, 4, 3, 2, 2},
                            {1, 1, 3, 1, 2},    {30, 7, 1, 1, 64}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        invariants(cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4]);
    test_sfc_small();
    test_chombo_balance();
    return check_summary("test_amr_box");
}
