"""Located diagnostics: every error caused by input names ``file:line:col``.

* ``LocatingParser`` attaches a ``FileLineColLoc`` to every operation it parses
  (unless the source gives an explicit ``loc(...)``), so that passes running
  long after parsing can still point at the line a user wrote.
* ``located_error(op, msg)`` builds the ``DiagnosticException`` passes raise.
* ``verify_located(module)`` verifies op by op and reports the first failure
  at the failing op's location (xDSL's own verifier dumps the whole module).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.lexer import Span


def location_of(op: Operation | None) -> str:
    """``file:line:col`` of ``op`` or of its nearest located ancestor."""
    while op is not None:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        op = op.parent_op()
    return "<unknown>"


class LocatedError(DiagnosticException):
    """An input error at a source location; ``str()`` is the full diagnostic."""

    def __init__(self, location: str, message: str):
        super().__init__(f"{location}: error: {message}")
        self.location = location
        self.message = message


def located_error(op: Operation | None, message: str) -> LocatedError:
    return LocatedError(location_of(op), message)


def verify_located(root: Operation) -> None:
    """Verify ``root`` and everything nested in it, raising a ``LocatedError``
    at the first op (in textual order) whose verifier fails."""
    for op in root.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise located_error(op, f"'{op.name}' op {e.args[0]}") from None


class LocatingParser(Parser):
    """An xDSL parser that records where each operation was written.

    ``line_offset`` is added to line numbers (for ``--split-input-file``
    chunks, so locations name lines of the whole file)."""

    def __init__(
        self, ctx: Context, input: str | bytes, name: str, line_offset: int = 0
    ):
        super().__init__(ctx, input, name)
        self.line_offset = line_offset

    def current_token_span(self) -> Span[str] | Span[bytes]:
        return self._current_token.span

    def parse_optional_operation(self) -> Operation | None:
        span = self._current_token.span
        op = super().parse_optional_operation()
        if op is not None and not isinstance(op.location, FileLineColLoc):
            where = span.get_location()
            op.location = FileLineColLoc(
                StringAttr(self.lexer.input.name),
                IntAttr(where.line + self.line_offset),
                IntAttr(where.col),
            )
        return op
