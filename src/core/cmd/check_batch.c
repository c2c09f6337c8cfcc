/* SPDX-License-Identifier: BSD-3-Clause */
/* iokernels --check-batch: many `KERNEL --check --ranks N ...` questions
 * answered by one process, so a campaign's cases are checked without an MPI
 * start-up each (a singleton's start is most of a --check's time).
 *
 * stdin: one case a line, a JSON array of strings [RANKS, KERNEL, ARG...];
 * RANKS is what --ranks takes ("4", "1,2,4") or "" for none. stdout: one
 * line a case, "ok" or the one error line `KERNEL --check --ranks RANKS
 * ARG...` prints (the same bytes: its stderr's last line). A malformed line
 * ends the batch: its line number on stderr, exit 2. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/cmd/cmd.h"
#include "core/lib/lib.h"
#include "iokernels/error.h"

#define MAX_ARGS 256

/* A case's own stdout and stderr: memory, not a file (--check creates none). */
struct capture {
    int out, err;             /* the memfds */
    int saved_out, saved_err; /* the batch's own stdout and stderr */
};

static int
capture_begin(struct capture *c)
{
    fflush(stdout);
    fflush(stderr);
    if (ftruncate(c->out, 0) || ftruncate(c->err, 0) || lseek(c->err, 0, SEEK_SET) < 0 ||
        lseek(c->out, 0, SEEK_SET) < 0 || dup2(c->out, 1) < 0 || dup2(c->err, 2) < 0)
        return -1;
    return 0;
}

/* The case's last non-empty stderr line into line (size n), the batch's
 * stdout and stderr back. */
static void
capture_end(struct capture *c, char *line, size_t n)
{
    fflush(stdout);
    fflush(stderr);
    dup2(c->saved_out, 1);
    dup2(c->saved_err, 2);
    line[0] = '\0';
    off_t size = lseek(c->err, 0, SEEK_END);
    if (size <= 0)
        return;
    char *text = malloc((size_t)size + 1);
    if (!text || pread(c->err, text, (size_t)size, 0) != size) {
        free(text);
        return;
    }
    text[size] = '\0';
    char *last = NULL;
    for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
        if (strspn(p, " \t\r") < strlen(p))
            last = p;
    if (last)
        snprintf(line, n, "%s", last);
    free(text);
}

/* One case's argv ["iokernels", KERNEL, "--check", "--ranks", RANKS, ARG...]
 * from a JSON line; 0, or -1 and why in *why. */
static int
parse_case(const char *text, char **argv, int *argc, json_t **held, const char **why)
{
    json_error_t e;
    json_t *a = json_loads(text, 0, &e);
    *held = a;
    if (!a || !json_is_array(a) || json_array_size(a) < 2) {
        *why = "expected a JSON array of strings [RANKS, KERNEL, ARG...]";
        return -1;
    }
    size_t n = json_array_size(a);
    if (n + 3 > MAX_ARGS) {
        *why = "too many arguments";
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (!json_is_string(json_array_get(a, i))) {
            *why = "every item must be a string: [RANKS, KERNEL, ARG...]";
            return -1;
        }
    const char *ranks = json_string_value(json_array_get(a, 0));
    int k = 0;
    argv[k++] = "iokernels";
    argv[k++] = (char *)json_string_value(json_array_get(a, 1));
    argv[k++] = "--check";
    if (ranks[0]) {
        argv[k++] = "--ranks";
        argv[k++] = (char *)ranks;
    }
    for (size_t i = 2; i < n; i++)
        argv[k++] = (char *)json_string_value(json_array_get(a, i));
    argv[k] = NULL;
    *argc = k;
    return 0;
}

/* The answer to one case: "ok", or the line its single --check prints. */
static void
answer(iok_member_fn run, int argc, char **argv, struct capture *c, char *line, size_t n)
{
    const struct iok_kernel *k = iok_kernel_find(argv[1]);
    int rc;
    iok_error_reset_job(); /* each case is a job of its own */
    if (capture_begin(c)) {
        snprintf(line, n, "iokernels: error: --check-batch: cannot capture a case's output (%s)",
                 strerror(errno));
        return;
    }
    if (!k) /* mix and ceiling are no kernels: not for the batch either */
        rc = iok_unknown_kernel(argv[1]);
    else
        rc = run(k, argc - 2, argv + 2, NULL);
    capture_end(c, line, n);
    iok_error_reset_job();
    if (rc == IOK_OK)
        snprintf(line, n, "ok");
    else if (!line[0])
        snprintf(line, n, "iokernels: error: exited %d and printed no line", rc);
}

int
iok_unknown_kernel(const char *name)
{
    fprintf(stderr, "iokernels: error: unknown kernel '%s' (see iokernels --help)\n", name);
    return IOK_EUSAGE;
}

int
iok_check_batch_main(int argc, char **argv, iok_member_fn run)
{
    (void)argv;
    if (argc > 0)
        return iok_agree(MPI_COMM_WORLD,
                         iok_error(IOK_EUSAGE, "--check-batch takes no arguments: the cases come "
                                               "on stdin, one JSON array [RANKS, KERNEL, ARG...] "
                                               "a line"));
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) /* stdin is rank 0's; --ranks names the counts to check */
        return iok_agree(MPI_COMM_WORLD,
                         iok_error(IOK_EUSAGE, "--check-batch runs as one process: start it "
                                               "without mpiexec (the lines' RANKS are checked)"));
    struct capture c = {memfd_create("iok-check-out", 0), memfd_create("iok-check-err", 0), dup(1),
                        dup(2)};
    if (c.out < 0 || c.err < 0 || c.saved_out < 0 || c.saved_err < 0)
        return iok_agree(MPI_COMM_WORLD,
                         iok_error(IOK_EIO, "--check-batch: cannot capture the cases' output (%s)",
                                   strerror(errno)));
    FILE *answers = fdopen(dup(c.saved_out), "w");
    if (!answers)
        return iok_agree(MPI_COMM_WORLD, iok_error(IOK_EIO,
                                                   "--check-batch: cannot write the "
                                                   "answers (%s)",
                                                   strerror(errno)));
    char *text = NULL, line[4096];
    size_t cap = 0;
    long lineno = 0;
    int rc = IOK_OK;
    while (getline(&text, &cap, stdin) > 0) {
        lineno++;
        if (strspn(text, " \t\r\n") == strlen(text))
            continue; /* a blank line asks nothing */
        char *args[MAX_ARGS];
        int nargs;
        json_t *held;
        const char *why;
        if (parse_case(text, args, &nargs, &held, &why)) {
            json_decref(held);
            rc = iok_error(IOK_EUSAGE, "--check-batch line %ld: %s", lineno, why);
            break;
        }
        answer(run, nargs, args, &c, line, sizeof line);
        json_decref(held);
        fprintf(answers, "%s\n", line);
        fflush(answers); /* the answer as soon as it is known */
    }
    free(text);
    fclose(answers);
    close(c.out);
    close(c.err);
    close(c.saved_out);
    close(c.saved_err);
    return iok_agree(MPI_COMM_WORLD, rc); /* prints a malformed line's error */
}
