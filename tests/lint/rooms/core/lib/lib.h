/* SPDX-License-Identifier: BSD-3-Clause */
/* The planted lib room's header (scripts/check-rooms, tests/CMakeLists.txt). */
#ifndef PLANTED_LIB_H
#define PLANTED_LIB_H

int iok_error(int code, const char *text);

#endif
