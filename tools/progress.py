"""What a long compile is doing, on stderr (``usmp-compile``).

* On a terminal: a ``tqdm`` bar over the pipeline's steps, its label the
  step running and the model's operator count (``lower-ops (1,013
  operators)``); it appears only once the run has lasted ``DELAY`` seconds
  and is erased when the run ends. The per-step lines are written above it.
* Otherwise (a pipe, a log file): plain lines. Every finished step prints
  ``<step> <seconds> s``; once the run has lasted ``DELAY`` seconds, every
  step also says when it starts (``lower-ops (1,013 operators) ...``), so a
  log shows what a slow run is busy with.
* Inside a step, the passes report each operator they reach
  (``usmp.passes.progress``: ``lower-ops``, and ``usmp``'s kernel
  directions, overlaps and replay); :meth:`Progress.listener` is what the
  driver installs. Once the run has lasted ``DELAY`` seconds, the bar's label
  says which (``usmp (65 operators): replay 37/65 tvmgen_..._conv2d_12``);
  in plain lines, one such line every ``EVERY`` seconds at most.
* ``quiet``: nothing at all.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TextIO

from usmp.passes.progress import Listener

DELAY = 2.0
"""Seconds a run lasts before it reports the steps it starts."""
EVERY = 2.0
"""Seconds between two plain lines saying which operator a step is on."""
REFRESH = 0.2
"""Seconds between two redraws of the bar's label for an operator."""


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
        self.shown = 0.0
        """When an operator was last shown (``time.perf_counter()``)."""
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

    def listener(self, step: str) -> Listener:
        """What the passes of ``step`` report operators to."""

        def heard(phase: str, done: int, total: int, operator: str) -> None:
            now = time.perf_counter()
            if self.quiet or now - self.start < DELAY:
                return
            what = f"{self._what(step)}: {phase} {done:,}/{total:,} {operator}"
            if self.bar is not None:
                if now - self.shown >= REFRESH:
                    self.shown = now
                    self.bar.set_description_str(f"{self.prefix}: {what}")
            elif now - self.shown >= EVERY:
                self.shown = now
                self.line(f"{what} ...")

        return heard

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
