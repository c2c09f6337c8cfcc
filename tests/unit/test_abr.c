/* SPDX-License-Identifier: BSD-3-Clause */
/* ABR grid files and the Chombo kernel's hierarchy: the shipped grid parses
 * and is what abrgen makes; writing and parsing round-trip; malformed files
 * are refused with one message naming the line; replication, orderings and
 * the balanced, sorted file order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "iokernels/error.h"
#include "iokernels/options.h"
#include "kernels/abrgen/abrgen_grid.h"
#include "kernels/amr_common/abr.h"
#include "kernels/chombo/chombo_grid.h"

static int
same_boxes(const struct amr_boxlist *a, const struct amr_boxlist *b)
{
    return a->n == b->n && (a->n == 0 || !memcmp(a->b, b->b, (size_t)a->n * sizeof *a->b));
}

static void
test_shipped_grid(void)
{
    const char *path = IOK_SOURCE_DIR "/grids/s64x64x64L2r4b8-32.abr";
    char *text = check_slurp(path);
    CHECK(text != NULL, "cannot read %s", path);
    if (!text)
        return;
    struct abr_grid g, made;
    iok_error_clear();
    CHECK(abr_parse(text, path, &g) == IOK_OK, "shipped grid: %s", iok_errmsg());
    free(text);
    CHECK(g.nlevels == 2 && g.ratio[0] == 4 && g.domain0.hi[0] == 63 && g.boxes[0].n == 8,
          "header of the shipped grid");
    struct abrgen_params p = {64, 2, 4, 8, 32, 0.25, 1.0};
    CHECK(abrgen_check(&p) == IOK_OK && abrgen_make(&p, &made) == IOK_OK, "abrgen defaults");
    for (int l = 0; l < 2; l++)
        CHECK(same_boxes(&g.boxes[l], &made.boxes[l]), "level %d differs from abrgen's", l);
    /* refined boxes: 8 to 32 cells a side, multiples of 8 */
    int bad = 0;
    for (int i = 0; i < g.boxes[1].n; i++)
        for (int d = 0; d < 3; d++) {
            int len = amr_box_len(&g.boxes[1].b[i], d);
            bad += len < 8 || len > 32 || len % 8 || g.boxes[1].b[i].lo[d] % 8;
        }
    CHECK(bad == 0, "%d box sides outside 8..32 or off the blocking factor", bad);

    /* written and parsed again: the same grid */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(abr_write(f, &made, "a comment\nover two lines") == 0, "write");
    fclose(f);
    struct abr_grid back;
    CHECK(abr_parse(buf, "mem.abr", &back) == IOK_OK, "round trip: %s", iok_errmsg());
    for (int l = 0; l < 2; l++)
        CHECK(same_boxes(&back.boxes[l], &made.boxes[l]), "round trip level %d", l);
    free(buf);
    abr_free(&back);
    abr_free(&made);
    abr_free(&g);
}

static const char *const header = "! a small grid\n"
                                  "ABR file format version 0.1\n"
                                  "Number of Levels = 2\n"
                                  "Refinement Ratio = 2\n"
                                  "Cell Centering = 0\n"
                                  "Number of Time Steps = 1\n"
                                  "Number of Processors = 2\n"
                                  "Level 0 Domain = (0,0,0)(7,7,7)\n"
                                  "TimeStep: 0\n"; /* 9 lines */

static void
bad_file(const char *name, const char *text, const char *want)
{
    struct abr_grid g;
    iok_error_clear();
    int rc = abr_parse(text, "bad.abr", &g);
    CHECK(rc == IOK_EUSAGE, "%s: rc %d", name, rc);
    CHECK(strstr(iok_errmsg(), want) != NULL, "%s: message '%s' lacks '%s'", name, iok_errmsg(),
          want);
}

static void
test_malformed(void)
{
    char t[4096];
    const char *l0 = "Number of Boxes on Level 0: 2\n(0,0,0)(3,7,7)[0] (4,0,0)(7,7,7)[1]\n";
    snprintf(t, sizeof t, "%s%sNumber of Boxes on Level 1: 1\n(0,0,0)(3,3,3)[0]\n", header, l0);
    struct abr_grid g;
    CHECK(abr_parse(t, "ok.abr", &g) == IOK_OK, "the good one: %s", iok_errmsg());
    CHECK(g.boxes[1].n == 1 && g.boxes[0].b[1].lo[0] == 4, "boxes read");
    abr_free(&g);

    bad_file("missing key",
             "ABR file format version 0.1\nNumber of Levels = 1\nNumber of Time Steps = 1\n"
             "Number of Processors = 1\nLevel 0 Domain = (0,0,0)(7,7,7)\nTimeStep: 0\n",
             "bad.abr line 6: TimeStep before the header key Cell Centering");
    snprintf(t, sizeof t,
             "%sNumber of Boxes on Level 0: 3\n(0,0,0)(3,7,7)[0]\n"
             "(4,0,0)(7,7,7)[1]\nNumber of Boxes on Level 1: 1\n(0,0,0)(3,3,3)[0]\n",
             header);
    bad_file("too few boxes", t, "bad.abr line 13: level 0 declares 3 boxes (line 10) but lists 2");
    snprintf(t, sizeof t, "%sNumber of Boxes on Level 0: 1\n(0,0,0)(3,7,7)[0] (4,0,0)(7,7,7)[1]\n",
             header);
    bad_file("too many boxes", t, "bad.abr line 11: more boxes than the level declares");
    snprintf(t, sizeof t, "%sNumber of Boxes on Level 0: 2\n(0,0,0)(4,7,7)[0]\n(4,0,0)(7,7,7)[1]\n",
             header);
    bad_file("overlap", t,
             "bad.abr line 12: box (4,0,0)(7,7,7) of level 0 overlaps box (0,0,0)(4,7,7) of "
             "line 11");
    /* level 0 covers x 0-3 only: level 1's box over x 4 does not nest */
    snprintf(t, sizeof t,
             "%sNumber of Boxes on Level 0: 1\n(0,0,0)(3,7,7)[0]\n"
             "Number of Boxes on Level 1: 2\n(0,0,0)(5,3,3)[0]\n(6,0,0)(9,1,1)[0]\n",
             header);
    bad_file("not nested", t,
             "bad.abr line 14: box (6,0,0)(9,1,1) of level 1 does not nest in level 0: "
             "coarsened by 2 it is (3,0,0)(4,0,0), of whose 2 cells level 0's boxes hold 1");
    snprintf(t, sizeof t, "%s%sNumber of Boxes on Level 1: 1\n(8,8,8)(16,15,15)[0]\n", header, l0);
    bad_file("outside", t, "bad.abr line 13: box (8,8,8)(16,15,15) is empty or outside level 1's");
    snprintf(t, sizeof t, "%sNumber of Boxes on Level 0: 2\n(0,0,0)(3,7)[0] (4,0,0)(7,7,7)[1]\n",
             header);
    bad_file("syntax", t, "bad.abr line 11: expected boxes written (i,j,k)(i,j,k)[rank]");
    snprintf(t, sizeof t, "%s%sNumber of Boxes on Level 1: 1\n(0,0,0)(3,3,3)[0]\nextra\n", header,
             l0);
    bad_file("trailing text", t, "bad.abr line 14: unexpected text after the last level's boxes");
    bad_file("duplicate key",
             "ABR file format version 0.1\nNumber of Levels = 1\nNumber of Levels = 1\n",
             "bad.abr line 3: header key given twice: Number of Levels");
    bad_file("ratio first", "Refinement Ratio = 2\nNumber of Levels = 2\n",
             "bad.abr line 1: Refinement Ratio before Number of Levels");
    bad_file("too few ratios", "Number of Levels = 3\nRefinement Ratio = 2\n",
             "bad.abr line 2: Refinement Ratio needs one integer");
    bad_file("version", "ABR file format version 0.2\n",
             "bad.abr line 1: unsupported ABR file format version 0.2");
    snprintf(t, sizeof t, "%sNumber of Boxes on Level 1: 2\n", header);
    bad_file("level out of order", t, "bad.abr line 10: expected 'Number of Boxes on Level N");
    bad_file("no boxes", header, "end of file before 'Number of Boxes on Level 0:'");
}

static void
test_replicate_and_build(void)
{
    char t[2048];
    snprintf(t, sizeof t,
             "%sNumber of Boxes on Level 0: 2\n(0,0,0)(3,7,7)[0] (4,0,0)(7,7,7)[1]\n"
             "Number of Boxes on Level 1: 1\n(2,2,2)(5,5,5)[0]\n",
             header);
    struct abr_grid g, r;
    CHECK(abr_parse(t, "t.abr", &g) == IOK_OK, "parse: %s", iok_errmsg());
    CHECK(chombo_replicate(&g, (int[3]){2, 1, 3}, &r) == IOK_OK, "replicate");
    CHECK(r.domain0.hi[0] == 15 && r.domain0.hi[1] == 7 && r.domain0.hi[2] == 23, "domain grows");
    CHECK(r.boxes[0].n == 12 && r.boxes[1].n == 6, "copies: %d %d", r.boxes[0].n, r.boxes[1].n);
    /* copy (i=1, j=0, k=0) of the level-1 box is shifted by level 1's extent 16 */
    CHECK(r.boxes[1].b[1].lo[0] == 18 && r.boxes[1].b[1].hi[0] == 21, "x shift on level 1");
    CHECK(r.boxes[1].b[2].lo[2] == 18 && r.boxes[1].b[5].lo[0] == 18 && r.boxes[1].b[5].lo[2] == 34,
          "z shifts, i innermost");
    abr_free(&r);
    CHECK(chombo_replicate(&g, (int[3]){0, 1, 1}, &r) == IOK_EUSAGE, "zero copies");
    abr_free(&r);

    /* orderings */
    CHECK(chombo_replicate(&g, (int[3]){2, 2, 2}, &r) == IOK_OK, "2,2,2");
    int n = r.boxes[0].n, o1[16], o2[16], o3[16];
    chombo_order(&r.boxes[0], CHOMBO_RANDOM, 7, 0, o1);
    chombo_order(&r.boxes[0], CHOMBO_RANDOM, 7, 0, o2);
    chombo_order(&r.boxes[0], CHOMBO_RANDOM, 8, 0, o3);
    int seen[16] = {0}, same = 1, differ = 0;
    for (int i = 0; i < n; i++) {
        seen[o1[i]]++;
        same &= o1[i] == o2[i];
        differ |= o1[i] != o3[i];
    }
    int perm = 1;
    for (int i = 0; i < n; i++)
        perm &= seen[i] == 1;
    CHECK(perm && same && differ, "random: a permutation, fixed by the seed");
    chombo_order(&r.boxes[0], CHOMBO_FILE, 0, 0, o1);
    CHECK(o1[0] == 0 && o1[n - 1] == n - 1, "file order");
    chombo_order(&r.boxes[0], CHOMBO_MORTON, 0, 0, o1);
    for (int i = 1; i < n; i++)
        CHECK(!amr_morton_less(&r.boxes[0].b[o1[i]], &r.boxes[0].b[o1[i - 1]]), "morton sorted");
    CHECK(iok_choice_index(CHOMBO_ORDERING_CHOICES, "lexicographic") == CHOMBO_LEX &&
              iok_choice_index(CHOMBO_ORDERING_CHOICES, "hilbert") < 0,
          "ordering names");

    /* the hierarchy: file order by small end, 4 ranks, offsets of 3 values per cell */
    struct amr_hier h;
    CHECK(chombo_build(&r, 3, 1.0 / 8, CHOMBO_MORTON, 0, 4, &h) == 0, "build");
    const struct amr_level *L = &h.lev[0];
    int sorted = 1, used[4] = {0};
    for (int i = 0; i < L->nboxes; i++) {
        if (i > 0)
            sorted &= amr_lex_less(&L->boxes[i - 1], &L->boxes[i]);
        used[L->procs[i]] += (int)amr_box_cells(&L->boxes[i]);
        CHECK(L->offsets[i + 1] - L->offsets[i] == 3 * amr_box_cells(&L->boxes[i]), "offsets");
    }
    CHECK(sorted, "level 0 sorted by small end");
    CHECK(used[0] == 1024 && used[1] == 1024 && used[2] == 1024 && used[3] == 1024,
          "equal boxes balance evenly: %d %d %d %d", used[0], used[1], used[2], used[3]);
    CHECK(h.lev[0].ref_ratio == 2 && h.lev[1].ref_ratio == 1 && h.lev[1].dx == 1.0 / 16,
          "ratios and dx");
    /* 8 level-1 boxes on 4 ranks */
    CHECK(h.lev[1].nboxes == 8 && h.lev[1].domain.hi[0] == 31, "level 1");
    amr_hier_free(&h);
    abr_free(&r);
    abr_free(&g);
}

int
main(void)
{
    test_shipped_grid();
    test_malformed();
    test_replicate_and_build();
    return check_summary("test_abr");
}
