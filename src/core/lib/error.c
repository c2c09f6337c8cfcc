/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-rank error message and the agreement on the worst status. */
#include "iokernels/error.h"

#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <stdio.h>
#include <string.h>

#include "core/lib/lib.h"

static char errmsg[2048];
static char label[128]; /* "member 2 (e3sm): " in a mix, else "" */

void
iok_error_label(const char *text)
{
    snprintf(label, sizeof label, "%s", text ? text : "");
}
static int reported; /* the last failure was printed; its message is spent */
static int failed;   /* the worst status an agreement returned so far: the job is failing */

static int
printable(unsigned char c)
{
    return c >= 0x20 && c < 0x7f;
}

const char *
iok_quote_n(const char *text, size_t len)
{
    /* up to IOK_QUOTE_MAX characters (the last escape may pass it by 3),
     * then "..." and the '\0' */
    static char slot[IOK_QUOTE_SLOTS][IOK_QUOTE_MAX + 8];
    static int next;
    char *out = slot[next];
    next = (next + 1) % IOK_QUOTE_SLOTS;
    size_t o = 0, i = 0;
    for (; i < len && text[i] && o < IOK_QUOTE_MAX; i++) {
        unsigned char c = (unsigned char)text[i];
        if (printable(c))
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, 5, "\\x%02X", c);
    }
    if (i < len && text[i])
        memcpy(out + o, "...", 3), o += 3;
    out[o] = '\0';
    return out;
}

const char *
iok_quote(const char *text)
{
    return iok_quote_n(text ? text : "", (size_t)-1);
}

int
iok_error(int code, const char *fmt, ...)
{
    if (errmsg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errmsg, sizeof errmsg, fmt, ap);
        va_end(ap);
        /* whatever reached the message unquoted (a file name, a library's
         * text), a control character never breaks its one line */
        for (char *p = errmsg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
    }
    return code;
}

const char *
iok_errmsg(void)
{
    return errmsg;
}

void
iok_error_spent(void)
{
    errmsg[0] = '\0';
    reported = 1;
}

int
iok_error_append(const char *fmt, ...)
{
    size_t used = strlen(errmsg);
    if (used == 0 || used + 1 >= sizeof errmsg)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errmsg + used, sizeof errmsg - used, fmt, ap);
    va_end(ap);
    for (char *p = errmsg + used; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return 1;
}

void
iok_error_clear(void)
{
    errmsg[0] = '\0';
    reported = 0;
}

void
iok_error_reset_job(void)
{
    iok_error_clear();
    failed = 0;
}

/* How long a failing rank waits for the others to agree (IOK_AGREE_SECONDS,
 * default 10, env.c, passed in by main.c): a rank whose call failed may
 * have left the others inside a collective call of the library that never
 * completes. */
static int agree_s = IOK_AGREE_SECONDS_DEFAULT;

void
iok_agree_timeout(int seconds)
{
    agree_s = seconds;
}

static int
agree_seconds(void)
{
    return agree_s;
}

static int
agree_in_time(MPI_Request *req)
{
    double end = MPI_Wtime() + agree_seconds();
    for (;;) {
        int done = 0;
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            return 1;
        if (MPI_Wtime() > end)
            return 0;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* The pause lets the launcher forward the lines printed before an
 * MPI_Abort: MPICH's hydra kills the ranks on MPI_Abort, and a CI run of
 * the test of a fault on one rank once got exit 1 and no stderr at all
 * (neither its line nor MPICH's own "Abort(1)" line). */
void
iok_abort_job(int code)
{
    fflush(stdout);
    fflush(stderr);
    struct timespec forward = {0, 200000000};
    nanosleep(&forward, NULL);
    MPI_Abort(MPI_COMM_WORLD, code);
}

static void (*ending)(void); /* iok_signals_job_failing (iok_agree_init) */

/* Ends the job from this rank, its line printed. */
static void
abort_job(int code)
{
    if (ending)
        ending();
    iok_abort_job(code);
}

/* The agreements' own communicator, a duplicate of MPI_COMM_WORLD made
 * once in main. A rank whose call of a collective open failed meets the
 * others at an agreement while they are still inside the library's
 * collective calls on the run's communicator: on that same communicator
 * OpenMPI matched the agreement's nonblocking reduction with the library's
 * own collective ("NBC_Progress: an error 15", MPI_ERR_TRUNCATE) and the
 * job hung. On a communicator of its own the agreement never meets the
 * library's calls: the failing rank's bounded wait ends and it aborts. */
static MPI_Comm agree_world = MPI_COMM_NULL;
static int (*note)(int status); /* iok_limits_note (iok_agree_init) */

void
iok_agree_init(int (*note_fn)(int status), void (*ending_fn)(void))
{
    MPI_Comm_dup(MPI_COMM_WORLD, &agree_world);
    note = note_fn;
    ending = ending_fn;
}

/* The same for a mix member's communicator (mix.c makes both). */
static MPI_Comm member_comm = MPI_COMM_NULL, member_agree = MPI_COMM_NULL;

void
iok_agree_comm_for(MPI_Comm comm, MPI_Comm agree)
{
    member_comm = comm;
    member_agree = agree;
}

static MPI_Comm
agree_comm(MPI_Comm comm)
{
    if (comm != MPI_COMM_NULL && comm == member_comm)
        return member_agree;
    return comm == MPI_COMM_WORLD && agree_world != MPI_COMM_NULL ? agree_world : comm;
}

/* A barrier of the suite's own (--barriers, a pass's start): on the
 * agreements' communicator, so that it never meets a library's collective
 * on the run's; once the job has failed, bounded as an agreement is. */
void
iok_barrier(MPI_Comm comm)
{
    MPI_Request req;
    MPI_Ibarrier(agree_comm(comm), &req);
    if (!failed)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    else if (!agree_in_time(&req))
        abort_job(failed);
}

int
iok_agree(MPI_Comm comm, int status)
{
    return iok_agree_max(comm, status, NULL, 0);
}

int
iok_agree_max(MPI_Comm comm, int status, int *v, int n)
{
    int rank, nprocs;
    comm = agree_comm(comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    /* [0]: worst code; [1]: lowest failing rank (as nprocs - rank for MAX);
     * then the caller's values, in the same reduction. */
    int buf[2 * (2 + IOK_AGREE_MAX_VALUES)], *mine = buf, *all = buf + 2 + IOK_AGREE_MAX_VALUES;
    if (n > IOK_AGREE_MAX_VALUES)
        n = IOK_AGREE_MAX_VALUES;
    if (note)
        status = note(status); /* a limit the process met, named (limits.c) */
    mine[0] = status;
    mine[1] = status != IOK_OK ? nprocs - rank : 0;
    for (int i = 0; i < n; i++)
        mine[2 + i] = v[i];
    MPI_Request req;
    MPI_Iallreduce(mine, all, 2 + n, MPI_INT, MPI_MAX, comm, &req);
    if (status == IOK_OK && !failed) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (status == IOK_OK && !agree_in_time(&req)) {
        /* The job failed already (its line is printed) and a rank is stuck
         * in a library call that failure left waiting (ADIOS2's close after
         * a failed end of step): a second line would say nothing new. */
        abort_job(failed);
    } else if (status != IOK_OK && !agree_in_time(&req)) {
        /* The others are stuck inside a collective library call that this
         * rank's failure left them waiting in (a close after a failed
         * write): nothing but ending the job frees them. */
        if (errmsg[0] || !reported) /* a consequence of a reported error says nothing */
            fprintf(stderr,
                    "iokernels: error: %s%s (rank %d; the other ranks did not reach the agreement "
                    "within %d s: the job is aborted)\n",
                    label, errmsg[0] ? errmsg : "unspecified failure (no message recorded)", rank,
                    agree_seconds());
        abort_job(status);
    }
    for (int i = 0; i < n; i++)
        v[i] = all[2 + i];
    if (all[0] != IOK_OK && all[0] != IOK_EVERIFY && !failed) /* a mismatch stops no library */
        failed = all[0];
    /* An error agreed on twice (a helper agrees, then its caller) prints
     * once: printing spends the message. */
    if (all[0] != IOK_OK && all[1] == nprocs - rank && (errmsg[0] || !reported)) {
        fprintf(stderr, "iokernels: error: %s%s\n", label,
                errmsg[0] ? errmsg : "unspecified failure (no message recorded)");
        fflush(stderr);
    }
    if (all[0] != IOK_OK) { /* the job's line is printed: what follows from it says nothing */
        if (status != IOK_OK)
            errmsg[0] = '\0';
        reported = 1;
    }
    return all[0];
}
