# SPDX-License-Identifier: BSD-3-Clause
"""A report's page and plots written aside, in a hidden folder beside the
page, and moved into place only once complete: a report interrupted
(Ctrl-C, SIGTERM) or failing half-way leaves the previous page and plots as
they were and nothing half-made."""

import os
import shutil
import tempfile
from pathlib import Path

from ..base import interrupt

PAGE = ".page.html"
_UMASK = os.umask(0o022)  # read once: umask() only reads by also setting
os.umask(_UMASK)


class Staged:
    """with Staged(page, plots, marker) as st: draw into st.work, write the
    page to st.page; on leaving the block without an error both move into
    place (the plots folder's old PNGs replaced); the hidden folder is
    removed in any case."""

    def __init__(self, page, plots, marker):
        self.final_page, self.plots, self.marker = Path(page), Path(plots), marker
        self.work = Path(
            tempfile.mkdtemp(prefix=f".{self.plots.name}.", dir=self.final_page.parent)
        )
        self.page = self.work / PAGE

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self._commit()
        finally:
            shutil.rmtree(self.work, ignore_errors=True)
        if isinstance(exc, OSError):  # named as the file it was to become
            inside = exc.filename and Path(exc.filename).parent == self.work
            if exc.filename is None or (inside and Path(exc.filename).name == PAGE):
                exc.filename = str(self.final_page)
            elif inside:
                exc.filename = str(self.final(exc.filename))
        return False

    def final(self, path):
        """Where a file drawn into the hidden folder ends up."""
        return self.plots / Path(path).name

    def _commit(self):
        with interrupt.deferred():  # the swap itself is not cut short
            self.plots.mkdir(exist_ok=True)
            (self.plots / self.marker).write_text("plots of the report next to this directory\n")
            for old in self.plots.glob("*.png"):
                old.unlink()
            for f in self.work.glob("*.png"):
                os.replace(f, self.plots / f.name)
            os.replace(self.page, self.final_page)


def write_with(path, write):
    """A whole file or none: write(temporary path) beside it, then renamed over it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # as a file made by open(), not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError) and e.filename in (None, tmp):  # write() names no file
            e.filename = str(path)
        raise


def write_text(path, text):
    write_with(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
