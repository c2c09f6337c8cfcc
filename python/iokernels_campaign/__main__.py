# SPDX-License-Identifier: BSD-3-Clause
"""python -m iokernels_campaign: the same as the iokernels-campaign command."""

import sys

from .cli import main

sys.exit(main())
