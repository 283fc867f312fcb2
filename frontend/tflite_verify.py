"""Bounds checks of a ``.tflite`` flatbuffer before the reader touches it.

The ``tflite`` package's generated accessors trust the file: an offset that
points past the end ends in ``struct.error`` deep inside ``flatbuffers``,
and one that points elsewhere inside the file silently reads other bytes.
``verify_structure(data, name)`` walks every table, vector and string the
reader (``tflite_reader``) will read, as flatbuffers' own C++ verifier does:

* every table: its ``soffset`` to the vtable, the vtable (even size >= 4,
  inside the file), the object (its inline size inside the file), and every
  field the reader reads inside the object;
* every ``uoffset`` (sub-table, vector, string) lands inside the file, and
  every vector/string with its length (elements x element size) ends inside
  it.

What the fields *mean* (indices in range, buffer sizes matching shapes) is
checked afterwards by the reader, on the decoded values. Errors are
``TFLiteImportError`` naming the model, the place in the model (``subgraph
0, tensor 12``) and the field.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from usmp.diagnostics import LocatedError

_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U16 = struct.Struct("<H")

MAX_FLATBUFFER_BYTES = (1 << 31) - 1
"""Flatbuffers' own limit: offsets are 32-bit."""

MAX_VECTOR_LENGTH = 1 << 28
"""No vector the importer reads holds more entries (a larger length is a
damaged file, not a model)."""


class TFLiteImportError(LocatedError):
    """The model cannot be imported; ``str()`` is ``<model>: error: <why>``."""


class _Buffer:
    def __init__(self, data: bytes, name: str):
        self.data = data
        self.name = name
        self.size = len(data)

    def fail(self, where: str, what: str) -> TFLiteImportError:
        return TFLiteImportError(
            self.name,
            f"damaged model: {where or 'model table'}: {what} (the file has "
            f"{self.size} bytes; it is truncated or corrupt)",
        )

    def u32(self, pos: int, where: str, what: str) -> int:
        self.need(pos, 4, where, what)
        return _U32.unpack_from(self.data, pos)[0]

    def need(self, pos: int, length: int, where: str, what: str) -> None:
        if pos < 0 or pos + length > self.size:
            raise self.fail(
                where, f"{what} at byte {pos} ({length} B) lies outside the file"
            )

    def table(self, pos: int, where: str) -> Table:
        """The table at ``pos`` with its vtable checked."""
        self.need(pos, 4, where, "the table")
        vtable = pos - _I32.unpack_from(self.data, pos)[0]
        self.need(vtable, 4, where, "the table's vtable")
        vt_size, obj_size = struct.unpack_from("<HH", self.data, vtable)
        if vt_size < 4 or vt_size % 2:
            raise self.fail(where, f"the vtable at byte {vtable} has size {vt_size}")
        self.need(vtable, vt_size, where, "the table's vtable")
        if obj_size < 4:
            raise self.fail(where, f"the table at byte {pos} has size {obj_size}")
        self.need(pos, obj_size, where, "the table")
        return Table(self, pos, vtable, vt_size, obj_size, where)


@dataclass(frozen=True)
class Table:
    """A checked table: fields are looked up by their vtable slot."""

    buf: _Buffer
    pos: int
    vtable: int
    vt_size: int
    obj_size: int
    where: str

    def field(self, slot: int, size: int, what: str) -> int | None:
        """Byte position of field ``slot`` (``size`` bytes, inside the
        object), or ``None`` when the field is absent (its default)."""
        entry = 4 + 2 * slot
        if entry + 2 > self.vt_size:
            return None
        off = _U16.unpack_from(self.buf.data, self.vtable + entry)[0]
        if off == 0:
            return None
        if off + size > self.obj_size:
            raise self.buf.fail(
                self.where,
                f"field '{what}' ({size} B at offset {off}) lies outside its table "
                f"({self.obj_size} B)",
            )
        self.buf.need(self.pos + off, size, self.where, f"field '{what}'")
        return self.pos + off

    def byte(self, slot: int) -> int:
        """The value of the one-byte scalar field ``slot`` (0 when absent)."""
        pos = self.field(slot, 1, f"#{slot}")
        return 0 if pos is None else self.buf.data[pos]

    def target(self, slot: int, what: str) -> int | None:
        """Where the ``uoffset`` field ``slot`` points, checked inside the file."""
        pos = self.field(slot, 4, what)
        if pos is None:
            return None
        target = pos + self.buf.u32(pos, self.where, f"field '{what}'")
        self.buf.need(target, 4, self.where, f"'{what}'")
        return target

    def table(self, slot: int, what: str, where: str | None = None) -> Table | None:
        target = self.target(slot, what)
        if target is None:
            return None
        return self.buf.table(target, where or f"{self.where}, {what}")

    def vector(self, slot: int, element_size: int, what: str) -> tuple[int, int]:
        """(position of the first element, length) of a vector field; (0, 0)
        when absent."""
        target = self.target(slot, what)
        if target is None:
            return 0, 0
        length = self.buf.u32(target, self.where, f"the length of '{what}'")
        if length > MAX_VECTOR_LENGTH:
            raise self.buf.fail(self.where, f"'{what}' claims {length} entries")
        self.buf.need(
            target + 4,
            length * element_size,
            self.where,
            f"'{what}' ({length} x {element_size} B)",
        )
        return target + 4, length

    def tables(self, slot: int, what: str, item: str) -> list[Table]:
        """The tables of a vector-of-tables field, each checked; ``item``
        names an entry in messages (``f"{item} {i}"``)."""
        start, length = self.vector(slot, 4, what)
        result: list[Table] = []
        for i in range(length):
            pos = start + 4 * i
            where = f"{self.where}, {item} {i}" if self.where else f"{item} {i}"
            target = pos + self.buf.u32(pos, where, "the offset")
            result.append(self.buf.table(target, where))
        return result

    def scalars(self, *fields: tuple[int, int, str]) -> None:
        """Check scalar fields given as (slot, size, name)."""
        for slot, size, what in fields:
            self.field(slot, size, what)

    def any_fields(self) -> None:
        """Check every field of a table whose schema the verifier does not
        spell out (builtin options: scalars of at most 4 bytes)."""
        for slot in range((self.vt_size - 4) // 2):
            pos = self.field(slot, 1, f"#{slot}")
            if pos is not None:
                self.buf.need(pos, 4, self.where, f"field #{slot}")


# Fields are (vtable slot, bytes, name) of the schema
# (tensorflow/compiler/mlir/lite/schema/schema.fbs), as the reader reads them.


def verify_structure(data: bytes, name: str) -> None:
    """Raise ``TFLiteImportError`` unless every table, vector and string the
    reader reads lies inside ``data`` (see the module doc)."""
    buf = _Buffer(data, name)
    if buf.size < 8 or data[4:8] != b"TFL3":
        raise TFLiteImportError(
            name,
            "cannot read the model: the file identifier 'TFL3' is missing (not a "
            "TFLite flatbuffer)",
        )
    if buf.size > MAX_FLATBUFFER_BYTES:
        raise TFLiteImportError(
            name, f"the file is larger than {MAX_FLATBUFFER_BYTES} B"
        )
    root = buf.table(buf.u32(0, "header", "the root offset"), "")
    root.scalars((0, 4, "version"))
    for code in root.tables(1, "operator_codes", "operator code"):
        code.scalars((0, 1, "deprecated_builtin_code"), (2, 4, "version"))
        code.scalars((3, 4, "builtin_code"))
        code.vector(1, 1, "custom_code")
    root.vector(3, 1, "description")
    for buffer in root.tables(4, "buffers", "buffer"):
        buffer.vector(0, 1, "data")
        buffer.scalars((1, 8, "offset"), (2, 8, "size"))
    for graph in root.tables(2, "subgraphs", "subgraph"):
        _verify_subgraph(graph)


_VAR_HANDLE_OPTIONS = 111
"""``BuiltinOptions.VarHandleOptions``: its two fields are strings."""

_INDEX_VECTOR_BYTES = {1: 4, 2: 2, 3: 1}
"""``SparseIndexVector`` union: Int32Vector, Uint16Vector, Uint8Vector."""


def _verify_subgraph(graph: Table) -> None:
    for tensor in graph.tables(0, "tensors", "tensor"):
        tensor.vector(0, 4, "shape")
        tensor.scalars((1, 1, "type"), (2, 4, "buffer"), (5, 1, "is_variable"))
        tensor.vector(3, 1, "name")
        tensor.vector(7, 4, "shape_signature")
        quant = tensor.table(4, "quantization")
        if quant is not None:
            quant.vector(2, 4, "scale")
            quant.vector(3, 8, "zero_point")
            quant.scalars((6, 4, "quantized_dimension"))
        sparsity = tensor.table(6, "sparsity")
        if sparsity is not None:
            _verify_sparsity(sparsity)
    graph.vector(1, 4, "inputs")
    graph.vector(2, 4, "outputs")
    for op in graph.tables(3, "operators", "operator"):
        op.scalars((0, 4, "opcode_index"), (3, 1, "builtin_options_type"))
        op.vector(1, 4, "inputs")
        op.vector(2, 4, "outputs")
        op.vector(5, 1, "custom_options")
        op.vector(8, 4, "intermediates")
        options = op.table(4, "builtin_options")
        if options is not None:
            options.any_fields()
            if op.byte(3) == _VAR_HANDLE_OPTIONS:
                options.vector(0, 1, "container")
                options.vector(1, 1, "shared_name")


def _verify_sparsity(sparsity: Table) -> None:
    """A tensor's ``SparsityParameters``: its vectors and every dimension's
    segment and index vectors (``tflite_sparsity`` reads them)."""
    sparsity.vector(0, 4, "traversal_order")
    sparsity.vector(1, 4, "block_map")
    for dim in sparsity.tables(2, "dim_metadata", "dimension"):
        dim.scalars((0, 1, "format"), (1, 4, "dense_size"))
        for slot, what in ((2, "array_segments"), (4, "array_indices")):
            dim.scalars((slot, 1, f"{what}_type"))
            size = _INDEX_VECTOR_BYTES.get(dim.byte(slot))
            values = dim.table(slot + 1, what)
            if values is not None and size is not None:
                values.vector(0, size, f"{what} values")
