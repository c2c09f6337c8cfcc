# SPDX-License-Identifier: BSD-3-Clause
"""The iokernels-campaign command's entry point (main), also python -m
iokernels_campaign.

It handles SIGINT, SIGTERM and SIGHUP (base/interrupt.py) before it imports
the command line, whose imports (numpy, pandas, matplotlib) take seconds:
a signal at any moment, start-up included, ends the command with one line
and exit 128 + N. It checks the address-space limit before those imports
and loads numpy with one OpenBLAS thread (base/limits.py). At the end the
output is flushed with the signals held and the process exits at once
(os._exit): a signal during Python's own shutdown would otherwise be a
traceback, or an exit by the signal without a line. For main(argv) in a
test's process, call cli.main."""

import os
import sys

from .base import interrupt

# First thing: from here on a signal is held until main() releases it
interrupt.install()
interrupt.hold()

from .base import limits  # noqa: E402


def _command():
    """Runs the command; its exit code."""
    try:
        why = limits.too_little()
        if why:
            print(f"iokernels-campaign: error: {why}", file=sys.stderr)
            return 1
        try:
            with limits.one_blas_thread():
                from .cli import main as command

                limits.warm_blas()
        except (MemoryError, ImportError) as e:
            if not limits.exhausted(e):
                raise
            print(f"iokernels-campaign: error: {limits.out_of_memory(e)}", file=sys.stderr)
            return 1
        return command()
    except SystemExit as e:  # argparse: --help, a usage error (its lines printed)
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, a terminal gone
            pass


def main():
    try:
        interrupt.release()  # a signal since the start is raised here
        code = _command()
        with interrupt.deferred():  # a signal meanwhile is raised when the block ends
            _flush()
    except KeyboardInterrupt as e:  # the handler raises once: later signals are ignored
        interrupt.say(e)
        code = interrupt.exit_code(e)
        _flush()
    os._exit(code)


if __name__ == "__main__":
    main()
