/* placeholder */
#include <stdio.h>

#include "e3sm_gen.h"

int
e3sm_gen_g_setup(struct e3sm_gen *g, char *err, size_t errlen)
{
    (void)g;
    snprintf(err, errlen, "not yet");
    return -1;
}

int
e3sm_gen_g_pairs(const struct e3sm_gen *g, int d, int64_t r, struct e3sm_pairs *out)
{
    (void)g, (void)d, (void)r, (void)out;
    return -1;
}
