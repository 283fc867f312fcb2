"""The per-layer profile table the kit's ``example/profile.c`` prints, read
back (``usmp-compile --report-html OUT --profile-data FILE``, and
``benchmarks/cortex_m.py --profile``, which prints the same table from QEMU).

The table (``usmp.tools.firmware_kit_profile``)::

    profile: model kws, 12 operators, 20 runs, us per run (CPU time)
        #  function                TFLite op          index   per run   share
        0  tvmgen_kws_fused_...    CONV_2D                0   122.957   23.2%
        ...
           total                                              530.604  100.0%

Lines before the ``profile:`` line (the example's outputs and time) are
skipped. A malformed table is a ``ProfileError`` naming ``file:line``, what
is wrong and what is expected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from usmp.tools.profile_error import ProfileError as ProfileError

_HEAD = re.compile(
    r"^profile: model (?P<model>\S+), (?P<count>\d+) operators?, "
    r"(?P<runs>\d+) runs?, (?P<unit>.+)$"
)
_ROW = re.compile(
    r"^\s*(?P<k>\d+)\s+(?P<function>\S+)\s+(?P<op>\S+)\s+(?P<index>-?\d+)\s+"
    r"(?P<value>\d+(?:\.\d+)?)\s+(?P<share>\d+(?:\.\d+)?)%\s*$"
)
_TOTAL = re.compile(r"^\s*total\s+(?P<value>\d+(?:\.\d+)?)\s+\d+(?:\.\d+)?%\s*$")
_ROW_FORM = "'<#> <function> <TFLite op> <index> <per run> <share>%'"


@dataclass(frozen=True)
class ProfileRow:
    index: int
    function: str
    tflite_operator: str
    """``-`` printed for none is read as ``""``."""
    tflite_index: int
    value: float
    """Per run, in the table's unit."""


@dataclass(frozen=True)
class ProfileTable:
    model: str
    runs: int
    unit: str
    """``us per run (CPU time)``, ``cycles per run (SysTick)``, ..."""
    rows: tuple[ProfileRow, ...]

    @property
    def total(self) -> float:
        return sum(r.value for r in self.rows)

    def share(self, row: ProfileRow) -> float:
        """``row``'s share of the total, in percent."""
        return 100.0 * row.value / self.total if self.total else 0.0


def parse_profile(text: str, source: str = "<profile>") -> ProfileTable:
    """The table in ``text`` (module note); ``source`` names it in errors."""
    lines = text.splitlines()

    def error(line: int, message: str) -> ProfileError:
        return ProfileError(f"{source}:{line}: error: {message}")

    start = next((k for k, x in enumerate(lines) if x.startswith("profile:")), None)
    if start is None:
        raise ProfileError(
            f"{source}: error: no profile table (expected a line 'profile: model "
            "<name>, <n> operators, <runs> runs, <unit>', as the example built "
            "with usmp-compile --profile prints)"
        )
    head = _HEAD.match(lines[start])
    if head is None:
        raise error(
            start + 1,
            f"malformed profile header {lines[start]!r} (expected 'profile: model "
            "<name>, <n> operators, <runs> runs, <unit>')",
        )
    count = int(head["count"])
    rows: list[ProfileRow] = []
    at = start + 2  # after the column titles
    for k in range(count):
        if at >= len(lines):
            raise error(
                len(lines),
                f"the table ends after {k} of its {count} operators "
                f"(expected rows {_ROW_FORM})",
            )
        row = _ROW.match(lines[at])
        if row is None or int(row["k"]) != k:
            raise error(
                at + 1,
                f"malformed row {lines[at]!r} (expected operator {k} as {_ROW_FORM})",
            )
        op = row["op"]
        rows.append(
            ProfileRow(
                k,
                row["function"],
                "" if op == "-" else op,
                int(row["index"]),
                float(row["value"]),
            )
        )
        at += 1
    if at >= len(lines) or _TOTAL.match(lines[at]) is None:
        got = repr(lines[at]) if at < len(lines) else "the end of the file"
        raise error(
            min(at + 1, len(lines)),
            f"expected the 'total <per run> 100.0%' row after {count} operators, "
            f"got {got}",
        )
    return ProfileTable(head["model"], int(head["runs"]), head["unit"], tuple(rows))


def format_profile(table: ProfileTable) -> str:
    """``table`` as the example prints it (values with 3 decimals unless
    they are whole)."""
    width = max([8, *(len(r.function) for r in table.rows)])
    runs = f"{table.runs} run{'' if table.runs == 1 else 's'}"
    lines = [
        f"profile: model {table.model}, {len(table.rows)} operators, {runs}, "
        f"{table.unit}",
        f"{'#':>5}  {'function':<{width}} {'TFLite op':<20} {'index':>5} "
        f"{'per run':>12} {'share':>7}",
    ]

    def value(v: float) -> str:
        return f"{v:12.0f}" if float(v).is_integer() else f"{v:12.3f}"

    for r in table.rows:
        lines.append(
            f"{r.index:>5}  {r.function:<{width}} {r.tflite_operator or '-':<20} "
            f"{r.tflite_index:>5} {value(r.value)} {table.share(r):7.1f}%"
        )
    total = "100.0%" if table.total else "0.0%"
    lines.append(
        f"{'':>5}  {'total':<{width}} {'':<20} {'':>5} {value(table.total)} {total:>8}"
    )
    return "\n".join(lines) + "\n"


def scaled(table: ProfileTable, factor: float, unit: str) -> ProfileTable:
    """``table`` with every value times ``factor``, in ``unit``."""
    rows: Sequence[ProfileRow] = [
        ProfileRow(
            r.index, r.function, r.tflite_operator, r.tflite_index, r.value * factor
        )
        for r in table.rows
    ]
    return ProfileTable(table.model, table.runs, unit, tuple(rows))
