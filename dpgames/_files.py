"""Reading user-named files safely: confinement to allowed folders, regular files only, size limits.

A bottom layer like :mod:`dpgames.validation` (it imports nothing else of dpgames).  Every data file
a scenario names (a CSV population, a TNTP network, an edge list) and the scenario file itself is
read through :func:`read_regular`, which

* refuses anything but a regular file *before opening it* (``os.stat``: a FIFO, a device or a folder
  never blocks or streams), then opens without blocking and checks with ``os.fstat`` that it opened
  that very regular file;
* refuses a file larger than the limit, with its size, without reading it;

and :func:`confine` refuses a path that, after resolving symbolic links and ``..``, lies outside the
folders the user allowed.  Errors (:class:`FileError`, a
:class:`~dpgames.validation.ValidationError`) name the file and, for content errors, the line and
the field: they never quote the file's contents.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from dpgames.validation import ValidationError

MIB = 2**20
#: Largest scenario file read (TOML; real ones are a few KiB).
MAX_SCENARIO_BYTES = 4 * MIB
#: Largest data file read (a TNTP net or trips file, an edge list): ten times Chicago Sketch's
#: trips, read in seconds.  CSV populations have their own limit
#: (:data:`dpgames.agents.MAX_CSV_BYTES`).
MAX_DATA_BYTES = 32 * MIB


class FileError(ValidationError):
    """A file that cannot be used: ``str()`` is ``"<file>: <reason>"`` (``field`` is the file
    name)."""

    def __init__(self, path: str | Path, message: str):
        super().__init__(str(path), message)
        self.args = (f"{path}: {message}",)


def _file_type(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "a file"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _size(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{n:,} bytes"


def check_regular(path: str | Path, limit: int = MAX_DATA_BYTES) -> os.stat_result:
    """``os.stat`` of ``path`` if it is a regular file of at most ``limit`` bytes, else a
    :class:`FileError`."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FileError(path, "file not found") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the name
        raise FileError(
            path, f"cannot read ({getattr(exc, 'strerror', None) or 'invalid file name'})"
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise FileError(path, f"is {_file_type(info.st_mode)}, not a regular file: refused")
    if info.st_size > limit:
        raise FileError(
            path, f"is {_size(info.st_size)}, over the limit of {_size(limit)}: refused"
        )
    return info


def check_folder(path: str | Path) -> None:
    """A :class:`FileError` unless ``path`` is a folder."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FileError(path, "not found") from None
    except (OSError, ValueError) as exc:
        raise FileError(
            path, f"cannot read ({getattr(exc, 'strerror', None) or 'invalid name'})"
        ) from None
    if not stat.S_ISDIR(info.st_mode):
        raise FileError(path, f"is {_file_type(info.st_mode)}, not a folder: refused")


def read_regular(path: str | Path, limit: int = MAX_DATA_BYTES) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes (see the module
    docstring)."""
    before = check_regular(path, limit)
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_NOCTTY", 0)
        | getattr(os, "O_BINARY", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise FileError(path, f"cannot read ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (
            before.st_dev,
            before.st_ino,
        ):
            raise FileError(path, "changed while it was being opened: refused")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(MIB, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise FileError(
                    path, f"grew over the limit of {_size(limit)} while being read: refused"
                )
        return b"".join(chunks)
    except OSError as exc:
        raise FileError(path, f"cannot read ({exc.strerror})") from None
    finally:
        os.close(fd)


def read_text(path: str | Path, limit: int = MAX_DATA_BYTES) -> str:
    """The text of a regular file: UTF-8 (a byte-order mark is allowed, UTF-16 with its mark too).

    A NUL byte or an invalid UTF-8 sequence is a :class:`FileError` naming the line, not the
    bytes."""
    raw = read_regular(path, limit)
    utf16 = raw.startswith((b"\xff\xfe", b"\xfe\xff"))
    try:
        text = raw.decode("utf-16" if utf16 else "utf-8-sig")
    except UnicodeDecodeError as exc:
        if utf16:
            raise FileError(
                path, "is not valid UTF-16 text (it starts with a UTF-16 byte-order mark)"
            ) from None
        line = raw[: exc.start].count(b"\n") + 1
        raise FileError(path, f"line {line}: not UTF-8 text (save the file as UTF-8)") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise FileError(path, f"line {line}: contains a NUL byte (a binary file?)")
    return text


def resolved(path: str | Path) -> Path:
    """``path`` with every symbolic link and ``..`` resolved (the file need not exist)."""
    return Path(os.path.realpath(os.path.abspath(path)))


def inside(path: str | Path, roots: Iterable[str | Path]) -> bool:
    """Whether ``path``, resolved, lies in (or is) one of the resolved ``roots``."""
    target = resolved(path)
    return any(target.is_relative_to(resolved(root)) for root in roots)


def confine(
    path: str | Path,
    roots: Iterable[str | Path],
    field: str,
    allowed: str,
    shown: str | None = None,
) -> Path:
    """``path`` resolved, if it lies inside one of ``roots`` (after resolving symbolic links); else
    a :class:`ValidationError` for ``field`` naming the path as ``shown`` (default: its repr) and
    saying what is ``allowed``.  Nothing is opened or read."""
    roots = [r for r in roots if r is not None]
    try:
        ok = bool(roots) and inside(path, roots)
    except (OSError, ValueError):
        ok = False
    if not ok:
        raise ValidationError(
            field,
            f"{shown or repr(str(path))} is outside the folders data may be read from "
            f"({allowed}): refused",
        )
    return resolved(path)
