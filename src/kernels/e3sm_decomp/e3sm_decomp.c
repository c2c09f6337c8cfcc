/* e3sm-decomp: stub while the layers land. */
#include "iokernels/error.h"
#include "iokernels/kernel.h"

static int
dc_plan(const void *kopts, const struct iok_run *run, struct iok_plan *plan)
{
    return iok_error(IOK_EUSAGE, "e3sm-decomp: not yet");
}

const struct iok_kernel iok_kernel_e3sm_decomp = {
    .name = "e3sm-decomp",
    .summary = "PIO .dat decomposition files -> E3SM decomposition map file (dat2nc)",
    .plan = dc_plan,
};
