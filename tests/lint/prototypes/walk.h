/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-prototypes (tests/CMakeLists.txt). */
int walk(const char *path, long *end);
