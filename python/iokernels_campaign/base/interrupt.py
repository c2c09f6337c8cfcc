# SPDX-License-Identifier: BSD-3-Clause
"""SIGTERM and SIGHUP handled as SIGINT is: what a closed terminal, `timeout`
or a batch system's time limit sends must end a campaign the way Ctrl-C
does (the running launcher's process group ended, what finished stored, one
line, exit 128 + signal), never leave an orphaned mpiexec and its ranks.

The handler raises Terminated (a KeyboardInterrupt, so every place that
already cleans up after Ctrl-C does the same for these; SIGINT too, so that
it is held as they are). Inside
`deferred()` (a store transaction, starting a launcher, moving a finished
report into place) the signal is held
and raised when the block ends, so a finished run is never half-stored and
a launcher is never started without the code that ends it knowing it.

The command's entry point (__main__.py) installs the handlers before it
imports anything else, so a signal during the seconds of start-up (numpy,
matplotlib) is one line too, and holds them while the output is flushed at
the end."""

import contextlib
import signal
import sys

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_state = {"depth": 0, "pending": None, "raised": False}


def _handler(signum, _frame):
    if _state["raised"]:  # already stopping: the cleanup under way must finish
        return
    if _state["depth"]:
        _state["pending"] = _state["pending"] or signum
        return
    _state["raised"] = True
    raise Terminated(signum)


def install():
    """Handles SIGINT, SIGTERM and SIGHUP from now on (in the main thread);
    returns what restore() needs to put the earlier handlers back."""
    _state.update(depth=0, pending=None, raised=False)
    return {sig: signal.signal(sig, _handler) for sig in SIGNALS}


def restore(earlier):
    """Puts back the handlers install() replaced (a command run in-process)."""
    for sig, handler in earlier.items():
        signal.signal(sig, handler)


def exit_code(exc):
    """128 + the signal that ended the command (SIGINT: 130)."""
    return 128 + getattr(exc, "signum", signal.SIGINT)


def name(exc):
    return signal.Signals(getattr(exc, "signum", signal.SIGINT)).name


def say(exc):
    """The command's one line for exc: interrupted by SIGNAL, and what is
    kept (exc.detail, set where the interrupted work knows it)."""
    detail = getattr(exc, "detail", "")
    try:
        print(
            f"iokernels-campaign: interrupted by {name(exc)}" + (f": {detail}" if detail else ""),
            file=sys.stderr,
            flush=True,
        )
    except (OSError, ValueError):  # SIGHUP: the terminal may be gone
        pass


def hold():
    """Holds SIGINT, SIGTERM and SIGHUP until release() (nestable): the
    handler keeps the first one pending."""
    _state["depth"] += 1


def release():
    """Ends a hold(); the last one raises Terminated for a pending signal."""
    _state["depth"] -= 1
    if not _state["depth"] and _state["pending"] and not _state["raised"]:
        signum, _state["pending"] = _state["pending"], None
        _state["raised"] = True
        raise Terminated(signum)


@contextlib.contextmanager
def deferred():
    """Holds SIGINT, SIGTERM and SIGHUP until the block ends (nestable)."""
    hold()
    try:
        yield
    finally:
        release()
