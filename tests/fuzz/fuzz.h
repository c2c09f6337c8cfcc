/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the fuzz targets: each defines fuzz_one(data, size) on a
 * NUL-terminated copy of the input. Built two ways (tests/fuzz/CMakeLists.txt):
 * with clang's libFuzzer (`make fuzz`), and with the ordinary compiler as a
 * replay program that runs every file named on its command line once (the
 * committed corpus, in ctest). A parser must never crash, hang or leak, and
 * an input it refuses must leave one printable line as its message. */
#ifndef IOK_FUZZ_H
#define IOK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "iokernels/error.h"

void fuzz_one(const char *text, size_t size);

/* A refused input's message: one line, no control bytes (the user's bytes
 * are quoted escaped), not empty. Aborts otherwise, so the fuzzer reports. */
static inline void
fuzz_check_message(const char *what, const char *msg)
{
    if (!msg || !msg[0]) {
        fprintf(stderr, "%s: refused with an empty message\n", what);
        abort();
    }
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f) {
            fprintf(stderr, "%s: message holds byte 0x%02x: %s\n", what, *p, msg);
            abort();
        }
}

static inline void
fuzz_mpi_init(void)
{
    int on = 0;
    MPI_Initialized(&on);
    if (!on) {
        MPI_Init(NULL, NULL);
        atexit((void (*)(void))MPI_Finalize);
    }
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_mpi_init();
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    iok_error_clear();
    fuzz_one(text, size);
    iok_error_clear();
    free(text);
    return 0;
}

#ifdef IOK_FUZZ_REPLAY
/* Without libFuzzer: run each file (or every file of each directory) once. */
#include <dirent.h>
#include <sys/stat.h>

static int
replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    size_t got = fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 0;
}

int
main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    int bad = 0, runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            for (struct dirent *e; d && (e = readdir(d));) {
                if (e->d_name[0] == '.')
                    continue;
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                bad |= replay_file(path);
                runs++;
            }
            if (d)
                closedir(d);
        } else {
            bad |= replay_file(argv[i]);
            runs++;
        }
    }
    printf("replayed %d inputs\n", runs);
    return bad || runs == 0;
}
#endif

#endif
