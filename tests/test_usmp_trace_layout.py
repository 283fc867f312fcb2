"""The tracer's array layout helpers: the same values as the plain
expressions they replace, laid out so that flattening them copies nothing
(``_Address.within``), and the shortcuts they take (``_per_byte``,
``ByteSets.used``) taken only where they give the same answer."""

from __future__ import annotations

from typing import cast

import numpy as np

from usmp.passes import usmp_kernel_trace as kt


def _naive_within(
    address: kt._Address,  # pyright: ignore[reportPrivateUsage]
    box: tuple[slice, ...],
    order: tuple[int, ...],
) -> kt.Array:
    out: kt.Array = np.array(address.offset, np.int64)
    for t, s in address.terms:
        out = out + kt._in_box(t, box).transpose(order) * s  # pyright: ignore[reportPrivateUsage]
    return out


def test_within_is_the_sum_in_c_order() -> None:
    """A padded window's address (rows with the window's rows, columns with
    its columns, channels) over its axes reordered largest last: the sum
    of the terms, C-contiguous, so its flat form is a view."""
    rows = (np.arange(6)[:, None] + np.arange(3)[None, :]).reshape(6, 1, 1, 3, 1)
    cols = (np.arange(5)[:, None] + np.arange(3)[None, :]).reshape(1, 5, 1, 1, 3)
    chans = np.arange(4).reshape(1, 1, 4, 1, 1)
    address = kt._Address(  # pyright: ignore[reportPrivateUsage]
        7, ((rows.astype(np.int64), 40), (cols.astype(np.int64), 4), (chans, 1))
    )
    shape = (6, 5, 4, 3, 3)
    for box in ((), (slice(1, 5), slice(0, 4), slice(None), slice(0, 2), slice(1, 3))):
        inside = kt._boxed(shape, box)  # pyright: ignore[reportPrivateUsage]
        order = kt._inner_last(inside)  # pyright: ignore[reportPrivateUsage]
        got = address.within(box, order)
        want = _naive_within(address, box, order)
        assert got.flags["C_CONTIGUOUS"]
        assert not want.flags["C_CONTIGUOUS"]  # (what the layout avoids)
        np.testing.assert_array_equal(got, want)
        grid = tuple(inside[a] for a in order)
        flat = np.broadcast_to(got, grid).reshape(-1)
        assert np.shares_memory(flat, got)  # flattened without a copy


def _times(values: object) -> kt.Array:
    """Times as the tracer keeps them where they fit: int32 (its ``Array``
    alias names the int64 case)."""
    return cast(kt.Array, np.asarray(values, np.int32))


def test_per_byte_collapses_only_one_value() -> None:
    same = _times([3] * 5)
    one = kt._per_byte(same, 2)  # pyright: ignore[reportPrivateUsage]
    assert one.strides == (0,) and one.size == 10 and (one == 3).all()
    # equal ends, other values inside: not one value
    ends = np.array([1, 2, 1], np.int64)
    np.testing.assert_array_equal(
        kt._per_byte(ends, 2),  # pyright: ignore[reportPrivateUsage]
        [1, 1, 2, 2, 1, 1],
    )
    np.testing.assert_array_equal(
        kt._per_byte(np.array([4, 4, 5]), 1),  # pyright: ignore[reportPrivateUsage]
        [4, 4, 5],
    )


def test_used_is_computed_once() -> None:
    never = int(np.iinfo(np.int32).max)
    first_read = _times([0, never, 3, never])
    first_write = _times([never, never, 1, 2])
    sets = kt.ByteSets(
        "rw", first_read=first_read, first_write=first_write, never=never
    )
    used = sets.used()
    np.testing.assert_array_equal(used, [True, False, True, True])
    assert sets.used() is used
    last = kt.ByteSets("r", last_read=_times([-1, 0, 5]), never=never)
    np.testing.assert_array_equal(last.used(), [False, True, True])
