# SPDX-License-Identifier: BSD-3-Clause
"""python -m iokernels_campaign: the same as the iokernels-campaign command."""

import sys

from .base import interrupt

interrupt.install()  # a signal during the imports below (a second or so) is one line too
try:
    from .cli import main
except KeyboardInterrupt as e:
    print(f"iokernels-campaign: interrupted by {interrupt.name(e)}", file=sys.stderr)
    sys.exit(interrupt.exit_code(e))

sys.exit(main())
