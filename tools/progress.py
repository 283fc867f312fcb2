"""What a long compile is doing, on stderr (``usmp-compile``).

* On a terminal: a ``tqdm`` bar over the pipeline's steps, its label the
  step running and the model's operator count (``lower-ops (1,013
  operators)``); it appears only once the run has lasted ``DELAY`` seconds
  and is erased when the run ends. The per-step lines are written above it.
* Otherwise (a pipe, a log file): plain lines. Every finished step prints
  ``<step> <seconds> s``; once the run has lasted ``DELAY`` seconds, every
  step also says when it starts (``lower-ops (1,013 operators) ...``), so a
  log shows what a slow run is busy with.
* ``quiet``: nothing at all.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TextIO

DELAY = 2.0
"""Seconds a run lasts before it reports the steps it starts."""


class Progress:
    def __init__(
        self, steps: Sequence[str], stream: TextIO, *, quiet: bool, prefix: str
    ):
        self.stream = stream
        self.quiet = quiet
        self.prefix = prefix
        self.operators: int | None = None
        self.start = time.perf_counter()
        self.bar = None
        if not quiet and stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(
                total=len(steps),
                file=stream,
                delay=DELAY,
                leave=False,
                unit="step",
                bar_format="{desc}: {n}/{total} steps |{bar}| {elapsed}",
            )

    def _what(self, step: str) -> str:
        if self.operators is None:
            return step
        return f"{step} ({self.operators:,} operators)"

    def begin(self, step: str) -> None:
        """``step`` starts."""
        late = time.perf_counter() - self.start >= DELAY
        if self.bar is not None:
            self.bar.set_description_str(f"{self.prefix}: {self._what(step)}", False)
            if late:
                self.bar.refresh()
        elif late:
            self.line(f"{self._what(step)} ...")

    def end(self, step: str, seconds: float) -> None:
        """``step`` took ``seconds``."""
        self.line(f"{step:<21} {seconds:7.2f} s")
        if self.bar is not None:
            self.bar.update(1)

    def line(self, message: str) -> None:
        if self.quiet:
            return
        text = f"{self.prefix}: {message}"
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
