/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal assertion kit for the unit tests: count failures, print each. */
#ifndef IOK_TEST_CHECK_H
#define IOK_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures, check_count;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        check_count++;                                                                             \
        if (!(cond)) {                                                                             \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* A whole file as a NUL-terminated string (the caller frees it), or NULL. */
static inline char *
check_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (t)
        t[fread(t, 1, (size_t)len, f)] = '\0';
    fclose(f);
    return t;
}

static inline int
check_summary(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
