"""aot-lower-main on random relay graphs: lowered main == relay oracle.

Graphs mix everything storage assignment has to get right: values used many
times, multi-output operators and tuple_get_item, tuples built and taken
apart, reshapes aliasing storage (of inputs, constants and call results),
on_device, constants, and returns that repeat values or return inputs and
constants directly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_aot_lower_main import check_equivalent, rand

SHAPES: list[tuple[int, ...]] = [(2, 4), (8,), (4, 2)]


def _t(shape: Sequence[int]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def _dense(values: np.ndarray) -> str:
    if values.ndim == 0:
        return f"{float(values):.9e}"
    return "[" + ", ".join(_dense(v) for v in values) + "]"


@st.composite
def graphs(draw: st.DrawFn) -> tuple[str, list[np.ndarray]]:
    lines: list[str] = []
    values: list[tuple[str, tuple[int, ...]]] = []
    inputs: list[np.ndarray] = []
    args: list[str] = []
    for i in range(draw(st.integers(1, 2))):
        shape = draw(st.sampled_from(SHAPES))
        args.append(f"%in{i}: {_t(shape)}")
        values.append((f"%in{i}", shape))
        inputs.append(rand(*shape, seed=draw(st.integers(0, 1000))))
    n = 0

    def fresh() -> str:
        nonlocal n
        n += 1
        return f"%v{n}"

    for _ in range(draw(st.integers(1, 7))):
        kind = draw(
            st.sampled_from(
                [
                    "add",
                    "sub",
                    "mul",
                    "relu",
                    "split",
                    "reshape",
                    "constant",
                    "tuple",
                    "on_device",
                ]
            )
        )
        a, shape = draw(st.sampled_from(values))
        t = _t(shape)
        dims = "x".join(map(str, shape))
        if kind in ("add", "sub", "mul"):
            b = draw(st.sampled_from([v for v, s in values if s == shape]))
            r = fresh()
            lines.append(
                f"{r} = relay.call @{kind}_{dims}({a}, {b}) : ({t}, {t}) -> {t}"
            )
            values.append((r, shape))
        elif kind == "relu":
            r = fresh()
            lines.append(f"{r} = relay.call @relu_{dims}({a}) : ({t}) -> {t}")
            values.append((r, shape))
        elif kind == "split":
            p, tt = fresh(), f"tuple<{t}, {t}>"
            lines.append(f"{p} = relay.call @split_{dims}({a}) : ({t}) -> {tt}")
            for index in draw(st.lists(st.integers(0, 1), min_size=1, max_size=2)):
                r = fresh()
                lines.append(f"{r} = relay.tuple_get_item {p}[{index}] : {tt} -> {t}")
                values.append((r, shape))
        elif kind == "reshape":
            new = draw(st.sampled_from([s for s in SHAPES if s != shape]))
            r = fresh()
            lines.append(f"{r} = relay.reshape {a} : {t} -> {_t(new)}")
            values.append((r, new))
        elif kind == "constant":
            shape = draw(st.sampled_from(SHAPES))
            data = np.array(
                draw(st.lists(st.floats(-4, 4, width=32), min_size=8, max_size=8)),
                dtype=np.float32,
            ).reshape(shape)
            r = fresh()
            lines.append(f"{r} = relay.constant dense<{_dense(data)}> : {_t(shape)}")
            values.append((r, shape))
        elif kind == "tuple":
            b, bshape = draw(st.sampled_from(values))
            p, tt = fresh(), f"tuple<{t}, {_t(bshape)}>"
            lines.append(f"{p} = relay.tuple({a}, {b}) : ({t}, {_t(bshape)}) -> {tt}")
            index = draw(st.integers(0, 1))
            r = fresh()
            picked = shape if index == 0 else bshape
            lines.append(
                f"{r} = relay.tuple_get_item {p}[{index}] : {tt} -> {_t(picked)}"
            )
            values.append((r, picked))
        else:
            r = fresh()
            vd = '#device.virtual_device<"cpu", 0, target = "c">'
            lines.append(f"{r} = relay.on_device {a} {{virtual_device = {vd}}} : {t}")
            values.append((r, shape))

    returned = draw(st.lists(st.sampled_from(values), min_size=1, max_size=3))
    names = ", ".join(v for v, _ in returned)
    types = ", ".join(_t(s) for _, s in returned)
    if len(returned) > 1 and draw(st.booleans()):
        tt = f"tuple<{types}>"
        lines.append(f"%ret = relay.tuple({names}) : ({types}) -> {tt}")
        lines.append(f"func.return %ret : {tt}")
        result = tt
    else:
        lines.append(f"func.return {names} : {types}")
        result = f"({types})"
    body = "\n".join(f"  {line}" for line in lines)
    main = f"func.func @main({', '.join(args)}) -> {result} {{\n{body}\n}}\n"
    return main, inputs


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(graphs())
def test_random_graphs_match_the_relay_oracle(
    graph: tuple[str, list[np.ndarray]],
) -> None:
    main, inputs = graph
    check_equivalent(main, inputs)
