"""Sparse constant tensors (TFLite's ``SparsityParameters``) made dense.

A sparse tensor's buffer holds only the values its sparsity metadata
addresses; the tensor's ``shape`` is the dense shape. The metadata
(``schema.fbs``): ``traversal_order`` (n + k dimensions: a permutation of the
n dense dimensions, then of the k block dimensions), ``block_map`` (the dense
dimension each block dimension splits) and one ``DimensionMetadata`` per
traversed dimension, in traversal order: ``DENSE`` (``dense_size`` entries)
or ``SPARSE_CSR`` (``array_segments``: where each parent's entries start in
``array_indices``; ``array_indices``: the coordinates present), each vector
an ``Int32Vector``, ``Uint16Vector`` or ``Uint8Vector``.

``densify`` walks the dimensions in traversal order as TFLite's
``FormatConverter::SparseToDense`` does (``sparsity_format_converter.cc``):
the values come in that walk's order, a block dimension ``n + b`` adds its
coordinate to ``block size x`` the block coordinate of dimension
``block_map[b]``, the block size being ``dim_metadata[n + b].dense_size``,
and every coordinate not visited is 0. It works level by level on numpy
arrays (the cost is the number of stored values, not a Python call per
value). Malformed metadata is a ``ValueError`` saying what is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from usmp.frontend.tflite_schema import schema_class

__all__ = ["Dimension", "Sparsity", "densify", "read_sparsity"]


@dataclass(frozen=True)
class Dimension:
    """One traversed dimension: dense (``dense_size``) or CSR (``segments``,
    ``indices``)."""

    dense_size: int | None
    segments: npt.NDArray[np.int64] | None = None
    indices: npt.NDArray[np.int64] | None = None


@dataclass(frozen=True)
class Sparsity:
    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    dimensions: tuple[Dimension, ...]


def _index_vector(kind: int, table: Any) -> npt.NDArray[np.int64] | None:
    """The values of a ``SparseIndexVector`` union member (``None`` if
    absent or of an unknown kind)."""
    name = {1: "Int32Vector", 2: "Uint16Vector", 3: "Uint8Vector"}.get(kind)
    if name is None or table is None:
        return None
    vector = schema_class(name)()
    vector.Init(table.Bytes, table.Pos)
    if not vector.ValuesLength():
        return np.zeros(0, np.int64)
    return np.asarray(vector.ValuesAsNumpy(), np.int64)


def read_sparsity(sparsity: Any) -> Sparsity:
    """The metadata of a ``tflite.SparsityParameters`` table."""
    order = tuple(
        int(v)
        for v in (
            sparsity.TraversalOrderAsNumpy() if sparsity.TraversalOrderLength() else ()
        )
    )
    block_map = tuple(
        int(v)
        for v in (sparsity.BlockMapAsNumpy() if sparsity.BlockMapLength() else ())
    )
    dims: list[Dimension] = []
    for i in range(sparsity.DimMetadataLength()):
        meta = sparsity.DimMetadata(i)
        if meta.Format() == 0:  # DENSE
            dims.append(Dimension(int(meta.DenseSize())))
        else:
            dims.append(
                Dimension(
                    None,
                    _index_vector(meta.ArraySegmentsType(), meta.ArraySegments()),
                    _index_vector(meta.ArrayIndicesType(), meta.ArrayIndices()),
                )
            )
    return Sparsity(order, block_map, tuple(dims))


def densify(
    values: npt.NDArray[Any], shape: tuple[int, ...], sparsity: Sparsity
) -> npt.NDArray[Any]:
    """The dense tensor of ``shape`` whose stored ``values`` (1-d, in
    traversal order) ``sparsity`` addresses (see the module doc)."""
    rank = len(shape)
    order, block_map, dims = (
        sparsity.traversal_order,
        sparsity.block_map,
        sparsity.dimensions,
    )
    levels = len(order)
    if sorted(order[:rank]) != list(range(rank)) or sorted(order[rank:]) != list(
        range(rank, levels)
    ):
        raise ValueError(
            f"traversal_order {list(order)} is not a permutation of the {rank} "
            "dimensions followed by one of the block dimensions"
        )
    if len(block_map) != levels - rank or any(not 0 <= d < rank for d in block_map):
        raise ValueError(
            f"block_map {list(block_map)} must name one of the {rank} dimensions "
            f"for each of the {levels - rank} block dimensions"
        )
    if len(dims) != levels:
        raise ValueError(
            f"{len(dims)} dim_metadata entries for {levels} traversed dimensions"
        )
    block_size = [dims[rank + b].dense_size for b in range(levels - rank)]
    if any(s is None or s <= 0 for s in block_size):
        raise ValueError("block dimensions must be dense with a positive dense_size")
    sizes = list(shape)
    for b, d in enumerate(block_map):
        size = block_size[b]
        assert size is not None
        if shape[d] % size:
            raise ValueError(
                f"dimension {d} ({shape[d]}) is not a multiple of its block size {size}"
            )
        sizes[d] = shape[d] // size
    sizes += [s or 0 for s in block_size]
    # breadth first: paths in traversal order (children of one parent stay
    # together and in order, so this is the depth-first order TFLite walks)
    parents = np.zeros(1, np.int64)
    coordinates: list[npt.NDArray[np.int64]] = []
    for level, dim in enumerate(dims):
        extent = sizes[order[level]]
        if dim.dense_size is not None:
            n = dim.dense_size
            if n != extent:
                raise ValueError(
                    f"dim_metadata {level}: dense_size {n}, but the traversed "
                    f"dimension has {extent} entries"
                )
            coordinates = [np.repeat(c, n) for c in coordinates]
            inner = np.tile(np.arange(n, dtype=np.int64), len(parents))
            parents = np.repeat(parents, n) * n + inner
            coordinates.append(inner)
            continue
        seg, idx = dim.segments, dim.indices
        if seg is None or idx is None:
            raise ValueError(
                f"dim_metadata {level}: a sparse dimension needs array_segments and "
                "array_indices (Int32Vector, Uint16Vector or Uint8Vector)"
            )
        if len(seg) < int(parents.max(initial=-1)) + 2 or np.any(np.diff(seg) < 0):
            raise ValueError(
                f"dim_metadata {level}: array_segments must hold a non-decreasing "
                "start for every parent entry and one end"
            )
        starts, ends = seg[parents], seg[parents + 1]
        if len(seg) and (seg[0] < 0 or int(ends.max(initial=0)) > len(idx)):
            raise ValueError(
                f"dim_metadata {level}: array_segments point outside array_indices "
                f"({len(idx)} entries)"
            )
        counts = ends - starts
        total = int(counts.sum())
        first = np.repeat(
            starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts
        )
        positions = first + np.arange(total, dtype=np.int64)
        inner = idx[positions]
        if np.any(inner < 0) or np.any(inner >= extent):
            raise ValueError(
                f"dim_metadata {level}: array_indices out of range 0..{extent - 1}"
            )
        coordinates = [np.repeat(c, counts) for c in coordinates]
        coordinates.append(inner)
        parents = positions
    count = len(parents)
    if values.size != count:
        raise ValueError(
            f"the sparsity metadata addresses {count} values, the buffer holds "
            f"{values.size}"
        )
    original = [np.zeros(count, np.int64) for _ in range(rank)]
    for level in range(rank):
        original[order[level]] = coordinates[level]
    for level in range(rank, levels):
        b = order[level] - rank
        d = block_map[b]
        size = block_size[b]
        assert size is not None
        original[d] = original[d] * size + coordinates[level]
    dense = np.zeros(math.prod(shape), values.dtype)
    if count:
        flat = (
            np.ravel_multi_index(tuple(original), shape)
            if rank
            else np.zeros(1, np.int64)
        )
        dense[flat] = values.reshape(-1)
    return dense.reshape(shape)
