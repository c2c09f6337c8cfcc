/* SPDX-License-Identifier: BSD-3-Clause */
/* The replay file's parser: a good file read field by field (spaces in a
 * path, '-' times, NSEG 0 on a collective call, a data line, comments and
 * blank lines), the shipped example, and every malformed line kind refused
 * with "PATH line N: what" naming the line. Then the plan: collective calls
 * matched by number, independent ones on their own, a fold, the fill. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "iokernels/error.h"
#include "iokernels/kernel.h"
#include "kernels/replay/replay_fidelity.h"
#include "kernels/replay/replay_file.h"
#include "kernels/replay/replay_plan.h"
#include "kernels/replay/replay_sequence.h"

static const char *good = "iokernels-replay 1\n"
                          "# a comment\n"
                          "\n"
                          "source darshan dxt.darshan (DXT_MPIIO, 2026-11-26)\n"
                          "ranks 2\n"
                          "file 0 1073741824 /scratch/user/app/out.nc\n"
                          "file 1 0 /scratch/user/app/restart 01.dat\n"
                          "data 0 0 double 2 4 0123456789abcdef var one\n"
                          "op 0 0 write coll 0.001250 0.004375 2 0 4096 65536 4096\n"
                          "op 0 1 read posix - - 1 0 1048576\r\n"
                          "op 1 0 write coll 0.001300 0.004100 0\n"
                          "op 1 1 write indep 0.5 0.75 1 7 9";

static void
test_good(void)
{
    struct rp_trace t;
    iok_error_clear();
    CHECK(rp_parse(good, strlen(good), "g.replay", &t) == IOK_OK, "%s", iok_errmsg());
    CHECK(t.ranks == 2 && t.nfiles == 2 && t.nops == 4 && t.nsegs == 4, "counts %d %d %lld %lld",
          t.ranks, t.nfiles, (long long)t.nops, (long long)t.nsegs);
    CHECK(t.source && !strcmp(t.source, "darshan dxt.darshan (DXT_MPIIO, 2026-11-26)"), "source");
    CHECK(t.nfiles == 2 && !strcmp(t.files[1].path, "/scratch/user/app/restart 01.dat") &&
              t.files[0].size == 1073741824,
          "files");
    CHECK(t.files[0].ndata == 1 && t.files[0].data[0].type == IOK_DOUBLE &&
              t.files[0].data[0].nrec == 2 && t.files[0].data[0].elems == 4 &&
              t.files[0].data[0].hash == 0x0123456789abcdefull &&
              !strcmp(t.files[0].data[0].name, "var one") &&
              rp_data_bytes(&t.files[0].data[0]) == 64,
          "data line");
    if (t.nops == 4) {
        const struct iok_logop *o = t.ops;
        CHECK(o[0].write && o[0].level == IOK_LEVEL_COLL && o[0].start == 0.00125 &&
                  o[0].nseg == 2 && t.segs[1].off == 65536 && t.segs[1].len == 4096,
              "op 0");
        CHECK(!o[1].write && o[1].level == IOK_LEVEL_INDEP && o[1].posix && o[1].start < 0 &&
                  o[1].end < 0 && t.segs[o[1].seg0].len == 1048576,
              "op 1 (CRLF, '-' times)");
        CHECK(o[2].rank == 1 && o[2].nseg == 0 && o[2].level == IOK_LEVEL_COLL, "op 2 (NSEG 0)");
        CHECK(o[3].level == IOK_LEVEL_INDEP && !o[3].posix && o[3].end == 0.75 &&
                  t.segs[o[3].seg0].off == 7,
              "op 3");
    }
    rp_free(&t);
}

/* Version 2 ends with `end OPS CHECKS` (blank lines and comments may
 * follow); version 1, without it, is read as not known to be whole. */
static void
test_end(void)
{
    const char *v2 = "iokernels-replay 2\nranks 1\nfile 0 0 /a\n"
                     "op 0 0 write indep - - 1 0 10\nop 0 0 write indep - - 1 10 10\n"
                     "check 0 0 2 20 0123456789abcdef\nend 2 1\n\n# done\n";
    struct rp_trace t;
    iok_error_clear();
    CHECK(rp_parse(v2, strlen(v2), "e.replay", &t) == IOK_OK, "%s", iok_errmsg());
    CHECK(t.version == 2 && t.ended && t.nops == 2 && t.nchecks == 1, "v2: %d %d", t.version,
          t.ended);
    rp_free(&t);
    const char *v1 = "iokernels-replay 1\nranks 1\nfile 0 0 /a\nop 0 0 write indep - - 1 0 10\n";
    CHECK(rp_parse(v1, strlen(v1), "o.replay", &t) == IOK_OK, "%s", iok_errmsg());
    CHECK(t.version == 1 && !t.ended, "v1: %d %d", t.version, t.ended);
    rp_free(&t);
}

static void
test_shipped(void)
{
    char *text = check_slurp(IOK_DATA_DIR "/replay/small.replay");
    struct rp_trace t;
    CHECK(text != NULL, "data/replay/small.replay missing");
    if (!text)
        return;
    CHECK(rp_parse(text, strlen(text), "small.replay", &t) == IOK_OK, "%s", iok_errmsg());
    CHECK(t.ranks == 4 && t.nfiles == 2 && t.nops == 13, "small.replay: %d ranks, %lld ops",
          t.ranks, (long long)t.nops);
    CHECK(t.version == 2 && t.ended, "small.replay: format %d, end line %d", t.version, t.ended);
    rp_free(&t);
    free(text);
}

struct bad {
    const char *text, *want;
};

#define H "iokernels-replay 1\n"
#define R H "ranks 2\nfile 0 0 /a\n"
#define V2 "iokernels-replay 2\nranks 2\nfile 0 0 /a\n"

static const struct bad bads[] = {
    {"", "is empty"},
    {"\n\n  \n", "is empty"},
    {"iokernels-replay 3\n",
     "line 1: replay format version 3; this iokernels reads versions 1 to 2"},
    {"iokernels-replay 0\n",
     "line 1: replay format version 0; this iokernels reads versions 1 to 2"},
    {"iokernels-replay\n", "line 1: missing the format version"},
    {"iokernels-replay 1 extra\n", "line 1: the header is"},
    {"ranks 2\n", "line 1: expected 'iokernels-replay 2'"},
    {H, "has no 'ranks' line"},
    {H "file 0 0 /a\nop 0 0 write coll - - 1 0 1\n", "line 3: op before the 'ranks' line"},
    {H "ranks 2\nranks 2\n", "line 3: a second 'ranks' line"},
    {H "ranks 0\n", "line 2: the rank count must be at least 1"},
    {H "ranks -1\n", "line 2: the rank count must be a decimal number"},
    {H "ranks 99999999999\n", "line 2: the rank count must be a decimal number from 0 to"},
    {H "source a\nsource b\nranks 1\n", "line 3: a second 'source' line"},
    {R "file 2 0 /b\n", "line 4: file id 2 out of order: expected 1"},
    {R "file 0 0 /b\n", "line 4: file id 0 out of order: expected 1"},
    {R "file 1 0\n", "line 4: missing the file's path"},
    {R "file 1 -5 /b\n", "line 4: file size must be a decimal number"},
    {R "files 1 0 /b\n", "line 4: unknown keyword"},
    {R "op 2 0 write coll - - 1 0 1\n", "line 4: rank 2, but the trace has 2 ranks"},
    {R "op 0 1 write coll - - 1 0 1\n", "line 4: op names a file id not listed"},
    {R "op 0 0 append coll - - 1 0 1\n", "line 4: expected the kind 'write' or 'read'"},
    {R "op 0 0 write all - - 1 0 1\n", "line 4: expected the level 'coll', 'indep' or 'posix'"},
    {R "op 0 0 write coll x - 1 0 1\n", "line 4: START must be seconds"},
    {R "op 0 0 write coll -1 - 1 0 1\n", "line 4: START must be seconds"},
    {R "op 0 0 write coll 1 nan 1 0 1\n", "line 4: END must be seconds"},
    {R "op 0 0 write coll 2 1 1 0 1\n", "line 4: END is before START"},
    {R "op 0 0 write coll - - 2 0 1\n", "line 4: NSEG is 2 but only 1 OFFSET LENGTH pairs"},
    {R "op 0 0 write coll - - 1 0 1 5 5\n", "line 4: NSEG is 1 but more fields follow"},
    {R "op 0 0 write coll - - 1 0\n", "line 4: missing LENGTH of segment 1"},
    {R "op 0 0 write indep - - 0\n", "line 4: NSEG 0 (no data) is allowed only for 'coll'"},
    {R "op 0 0 read posix - - 0\n", "line 4: NSEG 0 (no data) is allowed only for 'coll'"},
    {R "op 0 0 write coll - - 1 0 0\n", "line 4: a segment's LENGTH must be > 0"},
    {R "op 0 0 write coll - - 1 -4 8\n", "line 4: OFFSET of segment 1 must be a decimal"},
    {R "op 0 0 write coll - - 1 99999999999999999999 8\n", "line 4: OFFSET of segment 1"},
    {R "op 0 0 write coll - - 1 0 9223372036854775807\n", "line 4: LENGTH of segment 1"},
    {R "op 0 0 write coll - - -1\n", "line 4: NSEG must be a decimal number"},
    {R "op\n", "line 4: missing rank"},
    {R "data 1 0 byte 0 4 0123456789abcdef x\n", "line 4: data names a file not listed"},
    {R "data 0 0 bytes 0 4 0123456789abcdef x\n", "line 4: expected a type"},
    {R "data 0 0 byte 0 4 0123 x\n", "line 4: expected the variable's hash"},
    {R "data 0 8 byte 0 4 0123456789abcdef x\ndata 0 0 byte 0 4 0123456789abcdef y\n",
     "line 5: data lines of a file must come in increasing offset order"},
    {R "data 0 0 int 2 4 0123456789abcdef x\ndata 0 32 int 3 4 0123456789abcdef y\n",
     "line 5: record variables of one file must have the same record count"},
    {H "ranks 1\n\x01garbage\n", "line 3: unknown keyword"},
    {R "check 0 1 1 10 0123456789abcdef\n", "line 4: check names a file id not listed"},
    {R "check 2 0 1 10 0123456789abcdef\n", "line 4: check names a rank the trace does not have"},
    {R "check 0 0 1 10 0123\n", "line 4: expected the sequence's digest (16 hex digits)"},
    {R "check 0 0 1 10 0123456789abcdeg\n", "line 4: expected the sequence's digest"},
    {R "check 0 0 1 10 0123456789abcdef x\n", "line 4: 'check' takes RANK FILE OPS BYTES"},
    {R "check 0 0 1 10 0123456789abcdef\ncheck 0 0 1 10 0123456789abcdef\n",
     "line 5: a second check line for this rank and file"},
    {R "coverage 5 4\n", "line 4: 'coverage TRACED COUNTED' takes two counts"},
    {R "coverage 1 4\ncoverage 1 4\n", "line 5: a second 'coverage' line"},
    {H "check 0 0 1 10 0123456789abcdef\n", "line 2: check before the 'ranks' line"},
    /* one operation's segments share no byte, in or out of order, read or write */
    {R "op 0 0 write coll - - 3 0 10 100 10 5 10\n",
     "line 4: segments 1 (0+10) and 3 (5+10) overlap"},
    {R "op 0 0 read indep - - 2 0 10 0 10\n", "line 4: segments 1 (0+10) and 2 (0+10) overlap"},
    {R "op 0 0 write coll - - 3 100 10 0 1000 50 5\n",
     "line 4: segments 2 (0+1000) and 3 (50+5) overlap"},
    /* version 2: the last line is `end OPS CHECKS`, counting them */
    {V2 "op 0 0 write coll - - 1 0 1\n", "line 4: the file ends here, without its last line 'end"},
    {V2 "op 0 0 write coll - - 1 0 1\n# c\n\n", "line 5: the file ends here, without its last"},
    {V2 "op 0 0 write coll - - 1 0 1\nend 2 0\n",
     "line 5: 'end' counts 2 op and 0 check lines, but 1 and 0 come before it"},
    {V2 "op 0 0 write coll - - 1 0 1\nend 1 1\n", "line 5: 'end' counts 1 op and 1 check lines"},
    {V2 "end 0 0\nop 0 0 write coll - - 1 0 1\n", "line 5: a line after the 'end' line"},
    {V2 "end 0 0 x\n", "line 4: 'end' takes OPS CHECKS and nothing more"},
    {V2 "end 0\n", "line 4: missing the check line count"},
};

static void
test_bad(void)
{
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        struct rp_trace t;
        iok_error_clear();
        int rc = rp_parse(bads[i].text, strlen(bads[i].text), "b.replay", &t);
        CHECK(rc == IOK_EUSAGE, "case %zu accepted", i);
        CHECK(strstr(iok_errmsg(), "b.replay") && strstr(iok_errmsg(), bads[i].want),
              "case %zu: message '%s', want '%s'", i, iok_errmsg(), bads[i].want);
        CHECK(!strchr(iok_errmsg(), '\n'), "case %zu: one line", i);
    }
    /* a NUL byte inside the text */
    struct rp_trace t;
    const char nul[] = "iokernels-replay 1\nranks 1\nfi\0le 0 0 /a\n";
    iok_error_clear();
    CHECK(rp_parse(nul, sizeof nul - 1, "n.replay", &t) == IOK_EUSAGE &&
              strstr(iok_errmsg(), "n.replay line 3: a NUL byte"),
          "NUL: '%s'", iok_errmsg());
}

/* A long line: one collective call of 100,000 segments. */
static void
test_long_line(void)
{
    size_t cap = 4000000, n = 0;
    char *text = malloc(cap);
    n += (size_t)snprintf(text, cap,
                          "iokernels-replay 1\nranks 1\nfile 0 0 /big\nop 0 0 write "
                          "coll - - 100000");
    for (int i = 0; i < 100000; i++)
        n += (size_t)snprintf(text + n, cap - n, " %d 8", i * 16);
    struct rp_trace t;
    CHECK(rp_parse(text, n, "long.replay", &t) == IOK_OK, "%s", iok_errmsg());
    CHECK(t.nsegs == 100000 && t.segs[99999].off == 99999 * 16, "100,000 segments");
    rp_free(&t);
    free(text);
}

static void
test_plan(void)
{
    /* rank 0: coll, indep, coll; rank 1: coll; rank 2: indep, coll, coll */
    const char *text = "iokernels-replay 1\nranks 3\nfile 0 0 /a/./b/../c\n"
                       "op 0 0 write coll - - 1 0 10\n"
                       "op 0 0 write indep - - 1 10 10\n"
                       "op 0 0 write coll - - 1 20 10\n"
                       "op 1 0 write coll - - 1 30 10\n"
                       "op 2 0 write indep - - 1 40 10\n"
                       "op 2 0 write coll - - 1 50 10\n"
                       "op 2 0 write coll - - 1 60 10\n"
                       "op 1 0 read coll - - 2 5 10 100 4\n";
    struct rp_trace t;
    struct rp_plan p;
    struct iok_schema s[4];
    CHECK(rp_parse(text, strlen(text), "p.replay", &t) == IOK_OK, "%s", iok_errmsg());
    CHECK(rp_plan_build(&t, 3, 0, "p.replay", &p, s, 4) == IOK_OK, "%s", iok_errmsg());
    /* step 0: rank 2's indep alone; 1: coll #0 of all; 2: rank 0's indep; 3: coll #1 of
     * ranks 0 and 2 (rank 1, which has no second one, joins with nothing) */
    static const int want[4][3] = {{-1, -1, 4}, {0, 3, 5}, {1, -1, -1}, {2, -1, 6}};
    CHECK(p.nfiles == 1 && p.files[0].w.nsteps == 4, "%d write steps", p.files[0].w.nsteps);
    for (int k = 0; k < 4 && p.files[0].w.nsteps == 4; k++)
        for (int r = 0; r < 3; r++)
            CHECK(p.files[0].w.op[k * 3 + r] == want[k][r], "step %d rank %d: op %d, want %d", k, r,
                  p.files[0].w.op[k * 3 + r], want[k][r]);
    CHECK(p.files[0].w.level[0] == IOK_LEVEL_INDEP && p.files[0].w.level[1] == IOK_LEVEL_COLL,
          "levels");
    /* read 5..15 and 100..104; written 0..70: the fill is 100..104 */
    CHECK(p.files[0].nfill == 1 && p.files[0].fill[0].off == 100 && p.files[0].fill[0].len == 4,
          "fill %lld", (long long)p.files[0].nfill);
    CHECK(p.files[0].extent == 104 && s[0].nvars == 1 && s[0].vars[0].type == IOK_BYTE &&
              iok_var_total_elems(&s[0], 0) == 104,
          "one byte variable of the extent");
    iok_schema_free(&s[0]);
    rp_plan_free(&p);
    /* folded on 2 ranks: rank 0 runs trace ranks 0 then 2 */
    CHECK(rp_plan_build(&t, 2, 1, "p.replay", &p, s, 4) == IOK_OK, "%s", iok_errmsg());
    int n0 = 0;
    for (int k = 0; k < p.files[0].w.nsteps; k++)
        n0 += p.files[0].w.op[k * 2] >= 0;
    CHECK(n0 == 6, "folded rank 0 runs %d ops", n0);
    iok_schema_free(&s[0]);
    rp_plan_free(&p);
    rp_free(&t);
    char out[64];
    CHECK(rp_map_path("d", "/a/./b/../c", ".mpi", out, sizeof out) == 0 &&
              !strcmp(out, "d/a_b_c.mpi"),
          "mapped '%s'", out);
    CHECK(rp_map_path("d", "/x/out.nc", ".nc", out, sizeof out) == 0 && !strcmp(out, "d/x_out.nc"),
          "mapped '%s'", out);
    CHECK(rp_map_path("d", "/../..", ".nc", out, sizeof out) == RP_MAP_NO_NAME, "no name: refused");
    /* a path that does not fit is refused, never cut to another name */
    CHECK(rp_map_path("d", "/abcdefgh/abcdefgh/abcdefgh/abcdefgh/abcdefgh/abcdefgh/abcdefgh/x",
                      ".nc", out, sizeof out) == RP_MAP_TOO_LONG,
          "a name past the buffer: refused, got '%s'", out);
    CHECK(rp_map_path("d", "/abcdefgh/abcdefgh/abcdefgh/abcdefgh/abcdefgh/abcdefgh/abcdef", ".nc",
                      out, sizeof out) == RP_MAP_TOO_LONG,
          "the extension past the buffer: refused");
    /* 16 components of 15 characters: 255 with their 15 '_' and ".nc" is 258 */
    char traced[512] = "", big[1024];
    for (int i = 0; i < 16; i++)
        strcat(traced, "/abcdefghijklmno");
    CHECK(rp_map_path("d", traced, ".nc", big, sizeof big) == RP_MAP_NAME_MAX,
          "a name of %zu bytes: refused", strlen(big) - 2);
    traced[strlen(traced) - 3] = '\0'; /* 255 bytes with ".nc": a file system takes it */
    CHECK(rp_map_path("d", traced, ".nc", big, sizeof big) == 0 && strlen(big) - 2 == 255,
          "a name of %zu bytes: taken", strlen(big) - 2);
}

/* The score by sequence: a log built from a trace's ops, then changed in
 * exactly one way; each change is named as the first difference. */
static const char *seq_trace = "iokernels-replay 1\n"
                               "ranks 2\n"
                               "file 0 0 /a\n"
                               "file 1 0 /b\n"
                               "op 0 0 write coll - - 1 0 4096\n"
                               "op 1 0 write coll - - 1 4096 4096\n"
                               "op 0 0 write indep - - 1 8192 100\n"
                               "op 0 0 read indep - - 1 0 4096\n"
                               "op 1 1 write posix - - 1 0 10\n";

/* The log a faithful replay of t makes: its ops, in order (the same type:
 * copied only so that a case can change them). */
static void
log_of(const struct rp_trace *t, struct iok_reqlog *log, struct iok_logop *ops,
       struct iok_logseg *segs)
{
    memset(log, 0, sizeof *log);
    memcpy(ops, t->ops, (size_t)t->nops * sizeof *ops);
    memcpy(segs, t->segs, (size_t)t->nsegs * sizeof *segs);
    log->nops = t->nops;
    log->nsegs = t->nsegs;
    log->ops = ops;
    log->segs = segs;
}

static void
seq_case(const struct rp_trace *t, const struct iok_reqlog *log, int64_t differ, int rank, int file,
         int64_t index, const char *traced, const char *replayed, const char *what)
{
    static const int ident[2] = {0, 1};
    struct rp_sequences q;
    CHECK(rp_sequences(t, log, 2, 0, ident, 1, 1, &q) == IOK_OK, "%s: %s", what, iok_errmsg());
    CHECK(q.differ == differ, "%s: %lld sequences differ, want %lld", what, (long long)q.differ,
          (long long)differ);
    if (!differ) {
        CHECK(!q.have_first && q.compared == 3, "%s: compared %lld", what, (long long)q.compared);
        return;
    }
    CHECK(q.have_first && q.first.rank == rank && q.first.file == file && q.first.index == index,
          "%s: first difference rank %d file %d op %lld", what, q.first.rank, q.first.file,
          (long long)q.first.index);
    CHECK(!strcmp(q.first.traced, traced) && !strcmp(q.first.replayed, replayed),
          "%s: traced '%s' replayed '%s'", what, q.first.traced, q.first.replayed);
}

static void
test_sequences(void)
{
    struct rp_trace t;
    CHECK(rp_parse(seq_trace, strlen(seq_trace), "s.replay", &t) == IOK_OK, "%s", iok_errmsg());
    struct iok_logop ops[8];
    struct iok_logseg segs[8];
    struct iok_reqlog log;
    log_of(&t, &log, ops, segs);
    seq_case(&t, &log, 0, 0, 0, 0, "", "", "equal");
    segs[2].off += 4096; /* rank 0's second op on file 0 */
    seq_case(&t, &log, 1, 0, 0, 1, "write indep 8192+100", "write indep 12288+100", "one offset");
    log_of(&t, &log, ops, segs);
    ops[3].write = 1;
    seq_case(&t, &log, 1, 0, 0, 2, "read indep 0+4096", "write indep 0+4096", "one kind");
    log_of(&t, &log, ops, segs);
    struct iok_logop o = ops[2];
    ops[2] = ops[3];
    ops[3] = o;
    seq_case(&t, &log, 1, 0, 0, 1, "write indep 8192+100", "read indep 0+4096", "two ops swapped");
    log_of(&t, &log, ops, segs);
    ops[1].level = IOK_LEVEL_INDEP;
    seq_case(&t, &log, 1, 1, 0, 0, "write coll 4096+4096", "write indep 4096+4096", "one level");
    log_of(&t, &log, ops, segs);
    ops[5] = (struct iok_logop){.rank = 1, .write = 1, .level = IOK_LEVEL_COLL}; /* rank 1 joins
                                                                                 with nothing */
    log.nops = 6;
    seq_case(&t, &log, 1, 1, 0, 1, "(none)", "write coll (no data)", "one extra empty call");
    log_of(&t, &log, ops, segs);
    ops[4] = ops[3]; /* rank 1's posix write missing: the log holds rank 0's read twice */
    log.nops = 4;
    seq_case(&t, &log, 1, 1, 1, 0, "write indep 0+10", "(none)", "one missing op");
    /* the order across files open at the same time: rank 0 on a, b, a */
    const char *ab = "iokernels-replay 1\nranks 1\nfile 0 0 /a\nfile 1 0 /b\n"
                     "op 0 0 write indep - - 1 0 1\nop 0 1 write indep - - 1 0 1\n"
                     "op 0 0 write indep - - 1 1 1\n";
    struct rp_trace u;
    CHECK(rp_parse(ab, strlen(ab), "ab.replay", &u) == IOK_OK, "%s", iok_errmsg());
    log_of(&u, &log, ops, segs);
    struct rp_sequences q;
    static const int ident[2] = {0, 1};
    CHECK(rp_sequences(&u, &log, 1, 0, ident, 1, 1, &q) == IOK_OK && !q.differ &&
              q.order_ranks == 1 && !q.order_differ,
          "interleaved as traced: %d ranks, %d differ", q.order_ranks, q.order_differ);
    o = ops[1]; /* file by file, as a pass per file does */
    ops[1] = ops[2];
    ops[2] = o;
    CHECK(rp_sequences(&u, &log, 1, 0, ident, 1, 1, &q) == IOK_OK && !q.differ &&
              q.order_differ == 1 && q.order.index == 1 && !strcmp(q.order.traced, "file 1") &&
              !strcmp(q.order.replayed, "file 0"),
          "one file after the other: %d differ at %lld (%s, %s)", q.order_differ,
          (long long)q.order.index, q.order.traced, q.order.replayed);
    rp_free(&u);
    rp_free(&t);
}

/* check lines: the file's own ops against its trace's digests. */
static void
test_digests(void)
{
    struct rp_trace t;
    CHECK(rp_parse(seq_trace, strlen(seq_trace), "s.replay", &t) == IOK_OK, "%s", iok_errmsg());
    char text[2048];
    size_t n = (size_t)snprintf(text, sizeof text, "%s", seq_trace);
    struct iok_seqdigest d[4];
    CHECK(rp_trace_digests(&t, d) == IOK_OK, "%s", iok_errmsg());
    for (int g = 0; g < 4; g++)
        if (d[g].ops)
            n += (size_t)snprintf(text + n, sizeof text - n, "check %d %d %lld %lld %016llx\n",
                                  g / 2, g % 2, (long long)d[g].ops, (long long)d[g].bytes,
                                  (unsigned long long)d[g].hash);
    struct iok_logop ops[8];
    struct iok_logseg segs[8];
    struct iok_reqlog log;
    struct rp_sequences q;
    static const int ident[2] = {0, 1};
    struct rp_trace c;
    CHECK(rp_parse(text, n, "c.replay", &c) == IOK_OK && c.nchecks == 3, "%s", iok_errmsg());
    log_of(&c, &log, ops, segs);
    CHECK(rp_sequences(&c, &log, 2, 0, ident, 1, 1, &q) == IOK_OK && q.checked && !q.edited,
          "as converted: %lld edited", (long long)q.edited);
    rp_free(&c);
    /* one offset +4096 in the file: the replay follows the file, the digest does not */
    char *at = strstr(text, "1 8192 100");
    memmove(at + 11, at + 10, strlen(at + 10) + 1);
    memcpy(at, "1 12288 100", 11);
    CHECK(rp_parse(text, strlen(text), "e.replay", &c) == IOK_OK, "%s", iok_errmsg());
    log_of(&c, &log, ops, segs);
    CHECK(rp_sequences(&c, &log, 2, 0, ident, 1, 1, &q) == IOK_OK && !q.differ && q.edited == 1 &&
              q.edit.rank == 0 && q.edit.file == 0,
          "edited: %lld (rank %d file %d)", (long long)q.edited, q.edit.rank, q.edit.file);
    rp_free(&c);
    /* a write turned into a read (rank 1's posix write), then a line removed */
    at = strstr(text, "op 1 1 write");
    memcpy(at + 7, "read ", 5);
    memmove(at + 12, at + 13, strlen(at + 13) + 1);
    CHECK(rp_parse(text, strlen(text), "k.replay", &c) == IOK_OK, "%s", iok_errmsg());
    log_of(&c, &log, ops, segs);
    CHECK(rp_sequences(&c, &log, 2, 0, ident, 1, 1, &q) == IOK_OK && q.edited == 2 &&
              q.edit.rank == 0 && strstr(q.edit.traced, "3 operations"),
          "kind turned: %lld edited", (long long)q.edited);
    rp_free(&c);
    at = strstr(text, "op 1 0 write coll");
    memmove(at, strchr(at, '\n') + 1, strlen(strchr(at, '\n') + 1) + 1);
    CHECK(rp_parse(text, strlen(text), "l.replay", &c) == IOK_OK, "%s", iok_errmsg());
    log_of(&c, &log, ops, segs);
    CHECK(rp_sequences(&c, &log, 2, 0, ident, 1, 1, &q) == IOK_OK && q.edited == 3,
          "line removed: %lld edited", (long long)q.edited);
    rp_free(&c);
    rp_free(&t);
}

/* The passes' order: a trace's files as it used them (rp_pass_order). */
static void
pass_order_case(const char *ops, int n, const int *want, const char *what)
{
    char text[512];
    snprintf(text, sizeof text, "iokernels-replay 1\nranks 1\nfile 0 0 /a\nfile 1 0 /b\n%s", ops);
    struct rp_trace t;
    struct rp_plan p;
    struct iok_schema s[2];
    int order[4] = {-1, -1, -1, -1};
    CHECK(rp_parse(text, strlen(text), "o.replay", &t) == IOK_OK, "%s", iok_errmsg());
    CHECK(rp_plan_build(&t, 1, 0, "o.replay", &p, s, 2) == IOK_OK, "%s", iok_errmsg());
    CHECK(rp_pass_order(&t, &p, NULL, order) == n, "%s: %d passes", what, 2 * p.nfiles);
    CHECK(!memcmp(order, want, (size_t)n * sizeof *order), "%s: %d %d %d %d", what, order[0],
          order[1], order[2], order[3]);
    struct iok_plan *plan = calloc(1, sizeof *plan); /* as the core checks it */
    plan->nfiles = p.nfiles;
    plan->npass_order = n;
    memcpy(iok_plan_pass_order(plan, 4), order, sizeof order);
    CHECK(iok_plan_order_valid(plan), "%s: a valid pass order", what);
    free(plan->pass_order);
    free(plan);
    for (int f = 0; f < p.nfiles; f++)
        iok_schema_free(&s[f]);
    rp_plan_free(&p);
    rp_free(&t);
}

/* Passes open at the same time in the trace: one group, its steps in the
 * traced order (rp_groups_build), taken by the core's check. */
static void
groups_case_on(int ranks, const char *ops, int ngroups, int nsteps,
               const struct iok_filegroup_step *want, const char *what)
{
    char text[512];
    snprintf(text, sizeof text, "iokernels-replay 1\nranks %d\nfile 0 0 /a\nfile 1 0 /b\n%s", ranks,
             ops);
    struct rp_trace t;
    struct rp_plan p;
    struct rp_groups g;
    struct iok_schema s[2];
    CHECK(rp_parse(text, strlen(text), "g.replay", &t) == IOK_OK, "%s", iok_errmsg());
    CHECK(rp_plan_build(&t, ranks, 0, "g.replay", &p, s, 2) == IOK_OK, "%s", iok_errmsg());
    CHECK(rp_groups_build(&t, &p, 1, 1, 0, 1, &g) == 0 && g.n == ngroups, "%s: %d groups", what,
          g.n);
    for (int i = 0; ngroups && i < nsteps; i++)
        CHECK(g.g[0].nsteps == nsteps && g.g[0].steps[i].file == want[i].file &&
                  g.g[0].steps[i].op == want[i].op && g.g[0].steps[i].step == want[i].step,
              "%s: step %d is file %d op %d step %d", what, i, g.g[0].steps[i].file,
              (int)g.g[0].steps[i].op, g.g[0].steps[i].step);
    struct iok_plan *plan = calloc(1, sizeof *plan);
    struct iok_file_plan *fp;
    for (int f = 0; f < p.nfiles; f++)
        CHECK(iok_plan_add_file(plan, &fp) == IOK_OK, "%s: file %d planned", what, f);
    plan->nfilegroups = g.n;
    plan->filegroups = g.g;
    plan->npass_order = rp_pass_order(&t, &p, &g, iok_plan_pass_order(plan, 2 * p.nfiles + g.n));
    CHECK(iok_plan_order_valid(plan), "%s: a valid pass order", what);
    if (ngroups) { /* a step naming a file out of range: refused */
        struct iok_filegroup_step bad = {5, IOK_OP_WRITE, 0};
        struct iok_filegroup gb = {1, &bad};
        plan->filegroups = &gb;
        CHECK(!iok_plan_order_valid(plan), "%s: a group naming file 5 taken", what);
        gb.nsteps = 0;
        CHECK(!iok_plan_order_valid(plan), "%s: a group of no steps taken", what);
    }
    free(plan->files);
    free(plan->pass_order);
    free(plan);
    rp_groups_free(&g);
    for (int f = 0; f < p.nfiles; f++)
        iok_schema_free(&s[f]);
    rp_plan_free(&p);
    rp_free(&t);
}

static void
groups_case(const char *ops, int ngroups, int nsteps, const struct iok_filegroup_step *want,
            const char *what)
{
    groups_case_on(1, ops, ngroups, nsteps, want, what);
}

static void
test_groups(void)
{
    /* mpi-io-test's rank: side file, data, side file, reads, side file again */
    static const struct iok_filegroup_step mixed[5] = {{0, IOK_OP_WRITE, 0},
                                                       {1, IOK_OP_WRITE, 0},
                                                       {0, IOK_OP_READ, 0},
                                                       {1, IOK_OP_READ, 0},
                                                       {0, IOK_OP_WRITE, 1}};
    groups_case("op 0 0 write indep - - 1 0 4\nop 0 1 write indep - - 1 0 4\n"
                "op 0 0 read indep - - 1 0 4\nop 0 1 read indep - - 1 0 4\n"
                "op 0 0 write indep - - 1 4 4\n",
                1, 5, mixed, "interleaved");
    /* read before it is written: the bytes it reads (what the file held
     * before) filled first, untimed, then read and written as traced, in
     * one file created read-write */
    static const struct iok_filegroup_step rw[3] = {
        {0, IOK_OP_WRITE, 0}, {0, IOK_OP_READ, 0}, {0, IOK_OP_WRITE, 1}};
    groups_case("op 0 0 read indep - - 1 0 4\nop 0 0 write indep - - 1 0 4\n", 1, 3, rw,
                "read first");
    /* rank 0 writes a, reads b, writes a; rank 1 wrote b before that read:
     * b's write joins the group (b exists when the group opens it) */
    static const struct iok_filegroup_step joined[4] = {
        {0, IOK_OP_WRITE, 0}, {1, IOK_OP_WRITE, 0}, {1, IOK_OP_READ, 0}, {0, IOK_OP_WRITE, 1}};
    groups_case_on(2,
                   "op 0 0 write indep - - 1 0 4\nop 1 1 write indep - - 1 0 4\n"
                   "op 0 1 read indep - - 1 0 4\nop 0 0 write indep - - 1 4 4\n",
                   1, 4, joined, "another rank's write");
    /* file by file, or all written first: no group, the passes suffice */
    groups_case("op 0 0 write indep - - 1 0 4\nop 0 0 read indep - - 1 0 4\n"
                "op 0 1 write indep - - 1 0 4\nop 0 1 read indep - - 1 0 4\n",
                0, 0, NULL, "by file");
    groups_case("op 0 0 write indep - - 1 0 4\nop 0 1 write indep - - 1 0 4\n"
                "op 0 0 read indep - - 1 0 4\nop 0 1 read indep - - 1 0 4\n",
                0, 0, NULL, "by kind");
}

static void
test_pass_order(void)
{
    /* the core refuses an order that lists a pass twice, one out of range,
     * or a file's read pass before its write pass */
    struct iok_plan *plan = calloc(1, sizeof *plan);
    static const int bad[3][4] = {{0, 1, 2, 2}, {0, 1, 2, 4}, {0, 3, 2, 1}};
    plan->nfiles = 2;
    plan->npass_order = 4;
    CHECK(iok_plan_pass_order(plan, 4) != NULL, "room for 4 passes");
    for (int i = 0; i < 3; i++) {
        memcpy(plan->pass_order, bad[i], sizeof bad[i]);
        CHECK(!iok_plan_order_valid(plan), "bad order %d taken", i);
    }
    memcpy(plan->pass_order, (int[]){2, 3, 0, 1}, 4 * sizeof(int));
    CHECK(iok_plan_order_valid(plan), "b's passes, then a's: taken");
    free(plan->pass_order);
    free(plan);
    static const int by_file[4] = {0, 1, 2, 3}, by_kind[4] = {0, 2, 1, 3}, read_first[4] = {0, 1};
    static const int verify_last[4] = {0, 2, 3, 1};
    pass_order_case("op 0 0 write indep - - 1 0 4\nop 0 0 read indep - - 1 0 4\n"
                    "op 0 1 write indep - - 1 0 4\nop 0 1 read indep - - 1 0 4\n",
                    4, by_file, "a written and read, then b");
    pass_order_case("op 0 0 write indep - - 1 0 4\nop 0 1 write indep - - 1 0 4\n"
                    "op 0 0 read indep - - 1 0 4\nop 0 1 read indep - - 1 0 4\n",
                    4, by_kind, "both written, then both read");
    /* read before it is written: its write pass (the fill, the write) just before */
    pass_order_case("op 0 0 read indep - - 1 0 4\nop 0 0 write indep - - 1 0 4\n", 2, read_first,
                    "read first");
    /* a only written: its read pass (a --verify read-back) after every other */
    pass_order_case("op 0 0 write indep - - 1 0 4\nop 0 1 write indep - - 1 0 4\n"
                    "op 0 1 read indep - - 1 0 4\n",
                    4, verify_last, "a only written");
}

/* The whole verdict (counts, sequences, order) of a log against t. */
static int
verdict(const struct rp_trace *t, const struct iok_reqlog *log, struct rp_fidelity *f)
{
    static const int ident[2] = {0, 1};
    CHECK(rp_fidelity(t, log, 1, ident, 1, 1, f) == IOK_OK, "%s", iok_errmsg());
    CHECK(rp_sequences(t, log, 1, 0, ident, 1, 1, &f->seq) == IOK_OK, "%s", iok_errmsg());
    f->have_seq = 1;
    return rp_fidelity_exact(f);
}

/* The rank of issue 38's 32-rank mpi-io-test log: a side file written, 4
 * data writes, the side file again, 4 reads; replayed a file at a time
 * (both side writes, then the data file's) it is not exact, though every
 * file's own sequence and every count is as traced: the order across the
 * files it had open at the same time says where. */
static void
test_order_verdict(void)
{
    const char *text = "iokernels-replay 1\nranks 1\nfile 0 0 /sm\nfile 1 0 /data\n"
                       "op 0 0 write indep - - 1 0 8\n"
                       "op 0 1 write indep - - 1 0 100\nop 0 1 write indep - - 1 100 100\n"
                       "op 0 1 write indep - - 1 200 100\nop 0 1 write indep - - 1 300 100\n"
                       "op 0 0 write indep - - 1 8 8\n"
                       "op 0 1 read indep - - 1 0 100\nop 0 1 read indep - - 1 100 100\n"
                       "op 0 1 read indep - - 1 200 100\nop 0 1 read indep - - 1 300 100\n";
    struct rp_trace t;
    CHECK(rp_parse(text, strlen(text), "sm.replay", &t) == IOK_OK, "%s", iok_errmsg());
    struct iok_logop ops[10];
    struct iok_logseg segs[10];
    struct iok_reqlog log;
    struct rp_fidelity f;
    log_of(&t, &log, ops, segs);
    CHECK(verdict(&t, &log, &f) && f.seq.order_ranks == 1, "in traced order: exact");
    rp_fidelity_free(&f);
    struct iok_logop second = ops[5]; /* the side file's second write moved up: file by file */
    memmove(ops + 2, ops + 1, 4 * sizeof *ops);
    ops[1] = second;
    CHECK(!verdict(&t, &log, &f) && !f.seq.differ && f.seq.order_differ == 1 &&
              f.seq.order.index == 1 && !strcmp(f.seq.order.traced, "file 1") &&
              !strcmp(f.seq.order.replayed, "file 0") &&
              rp_counts_equal(&f.trace_total, &f.replay_total),
          "file by file: not exact (%d orders differ, at %lld: %s, %s)", f.seq.order_differ,
          (long long)f.seq.order.index, f.seq.order.traced, f.seq.order.replayed);
    char *json = rp_fidelity_json(&f);
    CHECK(json && strstr(json, "\"exact\":false") &&
              strstr(json, "\"order\":{\"ranks\":1,\"differ\":1,"),
          "the record says so: %s", json ? json : "(null)");
    free(json);
    rp_fidelity_free(&f);
    rp_free(&t);
}

/* The one merge routine (iokernels/reqlog.h), both ways. */
static void
test_merge(void)
{
    struct iok_logseg a[] = {{100, 10}, {110, 5}, {0, 10}, {10, 0}, {5, 10}, {200, 1}};
    struct iok_logseg b[6];
    memcpy(b, a, sizeof a);
    /* in order: only a segment continuing the one before it joins it */
    int64_t n = iok_segs_merge(b, 6, IOK_SEGS_IN_ORDER);
    CHECK(n == 4 && b[0].off == 100 && b[0].len == 15 && b[1].off == 0 && b[1].len == 10 &&
              b[2].off == 5 && b[3].off == 200,
          "in order: %lld runs, first %lld+%lld", (long long)n, (long long)b[0].off,
          (long long)b[0].len);
    memcpy(b, a, sizeof a);
    /* sorted: overlapping and touching ones joined, the empty one dropped */
    n = iok_segs_merge(b, 6, IOK_SEGS_SORTED);
    CHECK(n == 3 && b[0].off == 0 && b[0].len == 15 && b[1].off == 100 && b[1].len == 15 &&
              b[2].off == 200 && b[2].len == 1,
          "sorted: %lld runs, first %lld+%lld", (long long)n, (long long)b[0].off,
          (long long)b[0].len);
}

int
main(void)
{
    test_merge();
    test_order_verdict();
    test_pass_order();
    test_groups();
    test_sequences();
    test_digests();
    test_good();
    test_end();
    test_shipped();
    test_bad();
    test_long_line();
    test_plan();
    return check_summary("test_replay_file");
}
