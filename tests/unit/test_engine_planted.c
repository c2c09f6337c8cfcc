/* SPDX-License-Identifier: BSD-3-Clause */
/* test_engine.c against a planted engine (engine_step.c built with
 * IOK_ENGINE_PLANTED: the kernel's work inside the post region), linked
 * ahead of the core's own engine_step.o: the test must fail, naming the
 * region that held more than its backend call (ctest unit.engine.planted). */
#define IOK_ENGINE_PLANTED
#include "core/run/engine_step.c"
