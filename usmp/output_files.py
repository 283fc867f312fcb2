"""Output files that appear whole or not at all.

Every file a tool writes (``-o FILE`` of ``usmp-opt`` and
``usmp-import-tflite``, the report of ``usmp{report=...}``, the files of
``usmp-compile``) is first written to a temporary file in the same folder and
renamed over the target when complete, so a run that fails leaves no empty or
partial file behind (and a previous good file stays as it was). A target that
exists and is not a regular file (``/dev/null``, a FIFO, a terminal) is
written in place: renaming over it would replace the device with a file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class AtomicFile:
    """A text file written under a temporary name in ``path``'s folder;
    :meth:`commit` renames it to ``path``, :meth:`discard` removes it."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.temporary: Path | None = None
        if _special(self.path):
            self.stream: IO[str] = open(self.path, "w", encoding="utf-8")
            return
        fd, name = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        self.temporary = Path(name)
        os.chmod(fd, 0o666 & ~_umask())  # as open() would create it
        self.stream = os.fdopen(fd, "w", encoding="utf-8")

    def commit(self) -> None:
        self.stream.close()
        if self.temporary is not None:
            os.replace(self.temporary, self.path)

    def discard(self) -> None:
        self.stream.close()
        if self.temporary is not None:
            self.temporary.unlink(missing_ok=True)


def _special(path: Path) -> bool:
    """``path`` exists and is not a regular file (a device, a FIFO)."""
    return path.exists() and not path.is_file()


@contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """A stream for ``path`` that becomes ``path`` only if the block ends
    without an exception."""
    file = AtomicFile(path)
    try:
        yield file.stream
    except BaseException:
        file.discard()
        raise
    file.commit()


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    with atomic_output(path) as out:
        out.write(text)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """``data`` to ``path``, renamed into place whole (as ``AtomicFile``)."""
    target = Path(path)
    if _special(target):
        target.write_bytes(data)
        return
    fd, name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        os.chmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(name, target)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
