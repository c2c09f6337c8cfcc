/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-prototypes: walk() declared by hand (the
 * one it must name), beside what it must let pass: a static prototype, a
 * forward declaration of a function defined below, a function pointer, a
 * prototype inside a comment or a string. */
#include <stdio.h>

/* int walk(const char *path, long *end); */
int walk(const char *path, long *end);
static int helper(int x);
int later(void);
int (*hook)(void);
extern const char banner[];
struct table {
    int (*fn)(int);
};

static const char *text = "int walk(const char *path);";

int
later(void)
{
    long end;
    return helper(walk(text, &end)) + (hook ? hook() : 0);
}

static int
helper(int x)
{
    return x;
}
