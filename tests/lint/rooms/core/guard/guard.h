/* SPDX-License-Identifier: BSD-3-Clause */
/* The planted guard room's header: above lib. */
#ifndef PLANTED_GUARD_H
#define PLANTED_GUARD_H

int iok_limits_note(int status);

#endif
