"""Small relay models for the C tests, as MLIR text (deterministic).

``int8_convnet``: conv2d 3x3 (int8, per-channel requantization, TFLite's
chain) -> max_pool2d -> reshape -> dense (per-tensor requantization); the
shapes the U1-U3 applications in this folder are written for: input
``image`` int8[1][6][6][3], output ``output`` int8[1][5].

``float_mlp``: dense -> bias -> relu -> dense -> bias; input ``features``
float[1][16], output ``output`` float[1][4].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _tensor(shape: Sequence[int], element: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + f"{element}>"


def _dense(values: np.ndarray) -> str:
    def nest(x: np.ndarray) -> str:
        if x.ndim == 0:
            return f"{float(x):.9e}" if x.dtype.kind == "f" else str(int(x))
        return "[" + ", ".join(nest(r) for r in x) + "]"

    return f"dense<{nest(np.asarray(values))}>"


class _Graph:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.lines: list[str] = []
        self.n = 0

    def const(
        self, values: np.ndarray, element: str
    ) -> tuple[str, tuple[int, ...], str]:
        self.n += 1
        name = f"%c{self.n}"
        self.lines.append(
            f"  {name} = relay.constant {_dense(values)} : {_tensor(values.shape, element)}"
        )
        return name, tuple(values.shape), element

    def op(
        self,
        name: str,
        operands: Sequence[tuple[str, tuple[int, ...], str]],
        shape: Sequence[int],
        element: str,
        attrs: str = "",
    ) -> tuple[str, tuple[int, ...], str]:
        self.n += 1
        result = f"%v{self.n}"
        ins = [_tensor(s, e) for _, s, e in operands]
        sig = f"{ins[0]}" if len(ins) == 1 else f"({', '.join(ins)})"
        attrs = f" {{{attrs}}}" if attrs else ""
        names = ", ".join(v for v, _, _ in operands)
        self.lines.append(
            f"  {result} = relay.{name} {names}{attrs} : {sig} -> {_tensor(shape, element)}"
        )
        return result, tuple(shape), element

    def requantize(self, acc: tuple[str, tuple[int, ...], str], per_channel: bool):
        shape = acc[1]
        channels = shape[-1]
        bias = self.const(
            self.rng.integers(-500, 500, channels).astype(np.int32), "i32"
        )
        v = self.op("add", [acc, bias], shape, "i32")
        n = channels if per_channel else 1
        mult = ", ".join(
            str(int(m)) for m in self.rng.integers(1 << 30, (1 << 31) - 1, n)
        )
        shift = ", ".join(str(int(s)) for s in self.rng.integers(-9, -5, n))
        v = self.op(
            "fixed_point_multiply",
            [v],
            shape,
            "i32",
            f"multiplier = array<i32: {mult}>, shift = array<i32: {shift}>, "
            f"axis = {len(shape) - 1} : i64",
        )
        zp = self.const(np.array(-5, dtype=np.int32), "i32")
        v = self.op("add", [v, zp], shape, "i32")
        v = self.op(
            "clip", [v], shape, "i32", "a_min = -128.0 : f64, a_max = 127.0 : f64"
        )
        return self.op("cast", [v], shape, "i8")

    def text(self, arg: str, shape: Sequence[int], element: str, result) -> str:
        out = _tensor(result[1], result[2])
        body = "\n".join(self.lines)
        return (
            f"func.func @main(%{arg}: {_tensor(shape, element)}) -> {out} {{\n{body}\n"
            f"  func.return {result[0]} : {out}\n}}\n"
        )


def int8_convnet(seed: int = 0) -> tuple[str, list[np.ndarray]]:
    g = _Graph(seed)
    image = ("%image", (1, 6, 6, 3), "i8")
    w = g.const(g.rng.integers(-128, 128, (3, 3, 3, 4)).astype(np.int8), "i8")
    conv = g.op(
        "conv2d",
        [image, w],
        (1, 6, 6, 4),
        "i32",
        "strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, "
        "dilation = array<i64: 1, 1>, groups = 1 : i64, data_layout = #relay<data_layout NHWC>, "
        "kernel_layout = #relay<kernel_layout HWIO>, input_zero_point = -3 : i64, kernel_zero_point = 0 : i64",
    )
    x = g.requantize(conv, per_channel=True)
    x = g.op(
        "max_pool2d",
        [x],
        (1, 3, 3, 4),
        "i8",
        "pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>",
    )
    x = g.op("reshape", [x], (1, 36), "i8")
    w2 = g.const(g.rng.integers(-128, 128, (5, 36)).astype(np.int8), "i8")
    d = g.op("dense", [x, w2], (1, 5), "i32", "input_zero_point = -5 : i64")
    out = g.requantize(d, per_channel=False)
    inputs = [g.rng.integers(-128, 128, (1, 6, 6, 3)).astype(np.int8)]
    return g.text("image", (1, 6, 6, 3), "i8", out), inputs


def float_mlp(seed: int = 0) -> tuple[str, list[np.ndarray]]:
    g = _Graph(seed)
    x = ("%features", (1, 16), "f32")
    w1 = g.const(g.rng.standard_normal((8, 16)).astype(np.float32), "f32")
    h = g.op("dense", [x, w1], (1, 8), "f32")
    b1 = g.const(g.rng.standard_normal(8).astype(np.float32), "f32")
    h = g.op("add", [h, b1], (1, 8), "f32")
    h = g.op("relu", [h], (1, 8), "f32")
    w2 = g.const(g.rng.standard_normal((4, 8)).astype(np.float32), "f32")
    y = g.op("dense", [h, w2], (1, 4), "f32")
    b2 = g.const(g.rng.standard_normal(4).astype(np.float32), "f32")
    y = g.op("add", [y, b2], (1, 4), "f32")
    inputs = [g.rng.standard_normal((1, 16)).astype(np.float32)]
    return g.text("features", (1, 16), "f32", y), inputs
