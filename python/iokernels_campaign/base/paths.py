# SPDX-License-Identifier: BSD-3-Clause
"""The command line's file arguments, checked before anything runs: each
problem is one line naming the argument, what is wrong and the fix (a
folder where a file is expected, a file where a folder is, a missing file,
a read-only place, a store that is not SQLite or is cut short)."""

import os
import stat
from pathlib import Path

SQLITE_MAGIC = b"SQLite format 3\x00"


class PathError(Exception):
    """A file argument that cannot serve: one printable line."""


def show(path):
    """A path for a one-line message: escaped, long ones keep head and tail."""
    s = str(path).encode("unicode_escape").decode("ascii")
    return s if len(s) <= 80 else f"{s[:38]}...{s[-38:]}"


def _stat(label, path):
    """os.stat, or None when nothing is there; other failures are one line."""
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise PathError(
            f"{label} {show(path)}: a part of the path is a file, not a folder"
        ) from None
    except OSError as e:
        raise PathError(f"{label} {show(path)}: {e.strerror}") from None


def _read_only_fs(path):
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _why_not_writable(path):
    """'on a read-only file system' or 'read-only'."""
    return "is on a read-only file system" if _read_only_fs(path) else "is read-only"


def _existing_parent(label, path):
    """The nearest folder above path that exists; it must be a writable folder."""
    parent = path.parent
    while True:
        st = _stat(label, parent)
        if st is not None:
            break
        if parent == parent.parent:  # the working folder itself is gone
            raise PathError(f"{label} {show(path)}: {show(parent.absolute())} not found")
        parent = parent.parent
    if not stat.S_ISDIR(st.st_mode):
        raise PathError(f"{label} {show(path)}: {show(parent)} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PathError(
            f"{label} {show(path)}: folder {show(parent)} {_why_not_writable(parent)}; "
            "give a path in a writable folder"
        )
    return parent


def input_file(label, path):
    """A file to read: it exists, is a regular file, can be read."""
    path = Path(path)
    st = _stat(label, path)
    if st is None:
        raise PathError(f"{label} {show(path)} not found")
    if stat.S_ISDIR(st.st_mode):
        raise PathError(f"{label} {show(path)} is a folder; give a file path")
    if not stat.S_ISREG(st.st_mode):
        raise PathError(f"{label} {show(path)} is not a regular file")
    if not os.access(path, os.R_OK):
        raise PathError(f"{label} {show(path)} cannot be read (permission denied)")
    return path


def input_dir(label, path, hint="give a folder path"):
    path = Path(path)
    st = _stat(label, path)
    if st is None:
        raise PathError(f"{label} {show(path)} not found")
    if not stat.S_ISDIR(st.st_mode):
        raise PathError(f"{label} {show(path)} is a file, not a folder; {hint}")
    return path


def executable(label, path):
    path = input_file(label, path)
    if not os.access(path, os.X_OK):
        raise PathError(f"{label} {show(path)} is not executable (chmod +x, or another --bin)")
    return path


def output_file(label, path):
    """A file to write (created or replaced): not a folder, writable, in a
    folder that exists or can be made."""
    path = Path(path)
    st = _stat(label, path)
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise PathError(f"{label} {show(path)} is a folder; give a file path")
        if not stat.S_ISREG(st.st_mode):
            raise PathError(f"{label} {show(path)} is not a regular file; give a file path")
        if not os.access(path, os.W_OK):
            raise PathError(
                f"{label} {show(path)} {_why_not_writable(path)}; give a writable file path"
            )
    _existing_parent(label, path)
    return path


def output_dir(label, path):
    """A folder to write into: a folder or nothing yet, writable."""
    path = Path(path)
    st = _stat(label, path)
    if st is None:
        _existing_parent(label, path)
        return path
    if not stat.S_ISDIR(st.st_mode):
        raise PathError(f"{label} {show(path)} is a file; give a folder path")
    if not os.access(path, os.W_OK | os.X_OK):
        raise PathError(f"{label} {show(path)} {_why_not_writable(path)}; give a writable folder")
    return path


def sqlite_problem(path):
    """Why a file cannot be a SQLite database, from its header and size, or
    None (an empty file is an empty database)."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
            size = os.fstat(f.fileno()).st_size
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if size == 0:
        return None
    if not head.startswith(SQLITE_MAGIC[: len(head)]) or (
        len(head) >= 16 and head[:16] != SQLITE_MAGIC
    ):
        return "is not a SQLite database"
    if len(head) < 100:
        return f"is truncated ({size} bytes: not even a SQLite header)"
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    valid = head[24:28] == head[92:96] and pages > 0  # the in-header size is current
    if page < 512 or page & (page - 1):
        return "is corrupt (its header's page size is not a power of two)"
    # with a -wal beside it a checkpoint may be under way (page 1 is written
    # before the file grows): then SQLite itself says whether it is damaged
    if valid and size < page * pages and not os.path.exists(f"{path}-wal"):
        return f"is truncated ({size} bytes, its header says {page * pages})"
    return None


def store_for_reading(label, path):
    """An existing results store, a regular SQLite file."""
    path = input_file(label, path)
    why = sqlite_problem(path)
    if why:
        raise PathError(f"{label} {show(path)} {why}")
    return path


def store_for_writing(label, path):
    """A results store to create or add to: SQLite in WAL mode also writes
    PATH-wal and PATH-shm beside it, so its folder must be writable."""
    path = output_file(label, path)
    if path.exists():
        why = sqlite_problem(path)
        if why:
            raise PathError(f"{label} {show(path)} {why}; give another path")
        folder = path.parent
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PathError(
                f"{label} {show(path)}: its folder {_why_not_writable(folder)} "
                "(SQLite writes PATH-wal beside it); give a path in a writable folder"
            )
    return path


def not_an_input(label, out, inputs):
    """An output that would replace one of the command's inputs is refused."""
    for path in inputs:
        try:
            same = os.path.samefile(out, path)
        except OSError:
            continue
        if same:
            raise PathError(f"{label} {show(out)} is {show(path)}, which this command reads")
