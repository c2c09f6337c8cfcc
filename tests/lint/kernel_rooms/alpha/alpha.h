/* SPDX-License-Identifier: BSD-3-Clause */
/* A planted case for scripts/check-kernel-rooms: kernel alpha's header. */
#ifndef PLANTED_ALPHA_H
#define PLANTED_ALPHA_H

int alpha(int x);

#endif
