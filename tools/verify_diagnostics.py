"""``--verify-diagnostics`` as mlir-opt does it: the diagnostics a run emits
must be exactly those the input announces.

An annotation is a comment in the input::

    %0 = tir.allocate ... // expected-error {{must have a static shape}}
    // expected-error@+1 {{fits in no candidate pool}}
    // expected-warning@-2 {{...}}   expected-note@above / @below / @unknown
    // expected-error-re {{buffer '{{sid_[0-9]+}}' is too large}}

``@+N``/``@-N`` name the line N lines below/above the annotation, ``@above``
and ``@below`` the line just above/below it, none the annotation's own line,
and ``@unknown`` a diagnostic without a location in the file. The text in
``{{...}}`` must be contained in the diagnostic's message; the ``-re``
variant reads ``{{...}}`` inside it as a regular expression.

Each emitted diagnostic takes the first unused annotation of the same
severity, line and text; one without an annotation is reported as
``unexpected error: ...`` at its location, an annotation no diagnostic used
as ``expected error "..." was not produced`` at the annotation. Either makes
the run fail (exit status 1); the messages use mlir-opt's wording.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from usmp.diagnostics import LocatedError

_ANNOTATION = re.compile(
    r"expected-(error|warning|note|remark)(-re)?"
    r" *(?:@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\} *$"
)
_DIAGNOSTIC = re.compile(
    r"^(?P<file>.*?):(?P<line>[0-9]+)(?::(?P<col>[0-9]+))?: "
    r"(?P<severity>error|warning|note|remark): (?P<message>.*)$"
)


@dataclass
class Expectation:
    severity: str
    line: int | None
    """Line the diagnostic must be at; None: ``@unknown``."""
    text: str
    regex: re.Pattern[str] | None
    where: str
    """``file:line:col`` of the annotation itself."""
    used: bool = field(default=False)

    def matches(self, severity: str, line: int | None, message: str) -> bool:
        if self.used or severity != self.severity or line != self.line:
            return False
        if self.regex is not None:
            return self.regex.search(message) is not None
        return self.text in message


@dataclass(frozen=True)
class Diagnostic:
    severity: str
    line: int | None
    """Line in the input file; None: elsewhere or without a location."""
    where: str
    message: str


def _regex(text: str) -> re.Pattern[str]:
    """``-re`` text: ``{{...}}`` parts are regular expressions, the rest literal."""
    parts = re.split(r"\{\{(.*?)\}\}", text)
    pattern = "".join(p if k % 2 else re.escape(p) for k, p in enumerate(parts))
    return re.compile(pattern)


def expectations(text: str, file: str, first_line: int = 1) -> list[Expectation]:
    """The annotations of ``text`` (whose first line is ``first_line`` of
    ``file``). A malformed ``-re`` pattern is a ``LocatedError``."""
    found: list[Expectation] = []
    for number, line in enumerate(text.splitlines(), first_line):
        for m in _ANNOTATION.finditer(line):
            severity, is_re, offset, message = m.groups()
            if offset == "unknown":
                target = None
            elif offset in ("above", "below"):
                target = number + (-1 if offset == "above" else 1)
            else:
                target = number + int(offset or 0)
            where = f"{file}:{number}:{m.start() + 1}"
            try:
                regex = _regex(message) if is_re else None
            except re.error as e:
                raise LocatedError(where, f"invalid regex in annotation: {e}") from None
            found.append(Expectation(severity, target, message, regex, where))
    return found


def parse_diagnostic(text: str, file: str) -> Diagnostic:
    """The first line of a printed diagnostic (``file:line:col: error: msg``)."""
    first = text.split("\n", 1)[0]
    m = _DIAGNOSTIC.match(first)
    if m is None:
        return Diagnostic("error", None, "<unknown>", first)
    line = int(m["line"]) if m["file"] == file else None
    where = f"{m['file']}:{m['line']}" + (f":{m['col']}" if m["col"] else "")
    return Diagnostic(m["severity"], line, where, m["message"])


def check(emitted: list[Diagnostic], expected: list[Expectation]) -> list[str]:
    """mlir-opt's complaints (empty: every diagnostic was expected and every
    annotation was produced)."""
    problems: list[str] = []
    for d in emitted:
        match = next(
            (e for e in expected if e.matches(d.severity, d.line, d.message)), None
        )
        if match is None:
            problems.append(f"{d.where}: error: unexpected {d.severity}: {d.message}")
        else:
            match.used = True
    for e in expected:
        if not e.used:
            problems.append(
                f'{e.where}: error: expected {e.severity} "{e.text}" was not produced'
            )
    return problems
