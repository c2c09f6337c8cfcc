/* SPDX-License-Identifier: BSD-3-Clause */
/* SIGTERM, SIGINT and SIGHUP (what Slurm sends at a time limit, what
 * OpenMPI's mpiexec forwards to every rank): rank 0 prints one line naming
 * what the run was doing, the partial output of the pass under way (a file
 * this run created; kept with --keep-partial) is removed by the rank that
 * holds it, rank 0 appends the --json record with status "terminated", and
 * the process ends with 128 + the signal's number.
 *
 * Everything the handler does is async-signal-safe: write(2), open(2),
 * unlink(2), rmdir(2), getdents64 and _exit(2) on text prepared before,
 * outside the handler. The state it reads is set by the pass between
 * backend calls, never inside a timed region. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/guard/guard.h"

#define TEXT 4200

static volatile sig_atomic_t handling, quiet;
static int sig_rank, keep_partial;
static char label[128]; /* "member 2 (e3sm): " in a mix (mix.c), else "" */

void
iok_signals_label(const char *text)
{
    snprintf(label, sizeof label, "%s", text ? text : "");
}
static struct timespec t_start;
/* what the run is doing, twice: text for the line, JSON-escaped for the
 * record; two copies, the handler reads the one `cur` names */
static char doing[2][TEXT], doing_json[2][2 * TEXT];
static volatile sig_atomic_t cur;
static char partial[TEXT]; /* the output the pass under way is writing ("" none) */
static volatile sig_atomic_t has_partial;
static char json_path[TEXT];
static char *json_prefix; /* the record up to its last fields, or NULL */
/* A rank that aborts the job (error.c) leaves this mark in OpenMPI's
 * session folder of the job on its node (mpiexec removes the folder at the
 * end): the SIGTERM mpiexec then sends is the abort's, not the user's, and
 * rank 0 adds no second line. Where there is no such folder (srun, another
 * node) rank 0 cannot know and says it was terminated. */
static char failing_mark[TEXT];

static size_t
put_str(char *buf, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        buf[at++] = *s++;
    return at;
}

static size_t
put_uint(char *buf, size_t at, size_t cap, unsigned long v)
{
    char d[24];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < 24);
    while (n && at + 1 < cap)
        buf[at++] = d[--n];
    return at;
}

static void
write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* A file, or a folder of files (ADIOS2's BP): one level, as
 * iok_remove_output, with getdents64 (opendir/readdir are not
 * async-signal-safe). */
static void
remove_partial(const char *path)
{
    if (unlink(path) == 0)
        return;
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return;
    char buf[4096], sub[TEXT + 300];
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            struct dirent64 *e = (struct dirent64 *)(buf + off);
            off += e->d_reclen;
            if (e->d_type == DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            size_t at = put_str(sub, 0, sizeof sub, path);
            at = put_str(sub, at, sizeof sub, "/");
            at = put_str(sub, at, sizeof sub, e->d_name);
            sub[at] = '\0';
            unlink(sub);
        }
    }
    close(fd);
    rmdir(path);
}

static const char *
sig_name(int sig)
{
    return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP";
}

static void
on_signal(int sig)
{
    if (handling)
        _exit(128 + sig);
    handling = 1;
    if (quiet || (failing_mark[0] && access(failing_mark, F_OK) == 0))
        _exit(128 + sig); /* the run failed and said so: mpiexec ends the ranks */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    unsigned long secs = (unsigned long)(now.tv_sec - t_start.tv_sec);
    int c = cur;
    int removed = has_partial && !keep_partial;
    if (sig_rank != 0) { /* rank 0 speaks: mpiexec kills every rank once one has ended */
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    if (removed)
        remove_partial(partial);
    if (sig_rank == 0) {
        char line[2 * TEXT];
        size_t at = put_str(line, 0, sizeof line, "iokernels: ");
        at = put_str(line, at, sizeof line, label);
        at = put_str(line, at, sizeof line, "terminated by ");
        at = put_str(line, at, sizeof line, sig_name(sig));
        at = put_str(line, at, sizeof line, " during ");
        at = put_str(line, at, sizeof line, doing[c]);
        at = put_str(line, at, sizeof line, " after ");
        at = put_uint(line, at, sizeof line, secs);
        at = put_str(line, at, sizeof line, " s");
        if (has_partial)
            at = put_str(line, at, sizeof line,
                         removed ? "; its partial output is removed (--keep-partial keeps it)"
                                 : "; its partial output is kept (--keep-partial)");
        at = put_str(line, at, sizeof line, "\n");
        write_all(STDERR_FILENO, line, at);
    }
    if (sig_rank == 0 && json_prefix) {
        char tail[2 * TEXT + 256];
        size_t at = put_str(tail, 0, sizeof tail, ",\"status\":\"terminated\",\"signal\":\"");
        at = put_str(tail, at, sizeof tail, sig_name(sig));
        at = put_str(tail, at, sizeof tail, "\",\"exit_code\":");
        at = put_uint(tail, at, sizeof tail, (unsigned long)(128 + sig));
        at = put_str(tail, at, sizeof tail, ",\"terminated_after_seconds\":");
        at = put_uint(tail, at, sizeof tail, secs);
        at = put_str(tail, at, sizeof tail, ",\"terminated_during\":\"");
        at = put_str(tail, at, sizeof tail, doing_json[c]);
        at = put_str(tail, at, sizeof tail, "\"}\n");
        int fd = open(json_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd >= 0) { /* one write: concurrent runs never interleave */
            size_t n = strlen(json_prefix);
            char rec[64 * 1024];
            if (n + at <= sizeof rec) {
                memcpy(rec, json_prefix, n);
                memcpy(rec + n, tail, at);
                write_all(fd, rec, n + at);
            } else {
                write_all(fd, json_prefix, n);
                write_all(fd, tail, at);
            }
            close(fd);
        }
    }
    _exit(128 + sig);
}

void
iok_signals_install(int rank, int keep)
{
    sig_rank = rank;
    keep_partial = keep;
    quiet = 0; /* a mix's member runs again after its last run ended quiet */
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    const char *session = getenv("OMPI_MCA_orte_jobfam_session_dir");
    if (session && *session)
        snprintf(failing_mark, sizeof failing_mark, "%s/iokernels-failed", session);
    iok_signals_doing("the set-up", NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static void
json_escape(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s && o + 7 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch < 0x20 || ch >= 0x7f) { /* any byte outside ASCII: valid JSON text */
            o += (size_t)snprintf(out + o, cap - o, "\\u%04x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o] = '\0';
}

/* the file of the write pass under way, for messages outside the handler */
static char writing[TEXT];

const char *
iok_signals_writing(void)
{
    return writing[0] ? writing : NULL;
}

void
iok_signals_doing(const char *what, const char *path)
{
    snprintf(writing, sizeof writing, "%s", path && !strcmp(what, "the write") ? path : "");
    int next = !cur;
    snprintf(doing[next], sizeof doing[next], "%s%s%s", what, path ? " of " : "", path ? path : "");
    json_escape(doing_json[next], sizeof doing_json[next], doing[next]);
    cur = next;
}

void
iok_signals_quiet(void)
{
    quiet = 1;
}

void
iok_signals_job_failing(void)
{
    quiet = 1;
    /* this rank ends the job: the output this run created for the pass
     * under way (an empty file it claimed, a partial write) goes, as on a
     * signal, so that a rerun is not told it exists */
    if (has_partial && !keep_partial) {
        has_partial = 0;
        remove_partial(partial);
    }
    if (!failing_mark[0])
        return;
    int fd = open(failing_mark, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0)
        close(fd);
}

void
iok_signals_partial(const char *path)
{
    has_partial = 0;
    if (path)
        snprintf(partial, sizeof partial, "%s", path);
    has_partial = path != NULL;
}

void
iok_signals_record(const char *path, char *prefix)
{
    snprintf(json_path, sizeof json_path, "%s", path);
    json_prefix = prefix;
}
