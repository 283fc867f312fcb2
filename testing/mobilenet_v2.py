"""MobileNetV2 as TFLite's converter writes Keras' ``MobileNetV2`` (int8, full
integer quantisation), with random weights: the layer shapes, padding and
operators of the real model, for compile-time and memory benchmarks of a
model larger than the shared ones.

    python -m usmp.testing.mobilenet_v2 out.tflite [--size 224] [--alpha 1.0]

Layers (Sandler et al. 2018, as ``keras.applications.MobileNetV2``): a
3x3/2 convolution (SAME, RELU6); 17 inverted residual blocks (1x1 expand
``t = 6`` with RELU6 except the first block, 3x3 depthwise with RELU6 -- at
stride 2 after a PAD of one row and column at the end, VALID --, 1x1
linear projection, an ADD of the block's input when the shape allows); a
1x1 convolution to 1280 channels (RELU6); MEAN over H and W; a fully
connected layer to 1000 classes; SOFTMAX. Scales are chosen so every
tensor uses the int8 range (per-channel weight scales, biases at
input x weight scale).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from usmp.testing.tflite_builder import ModelBuilder

RELU6, NONE = 3, 0
SAME, VALID = 0, 1
BLOCKS = (  # expansion t, channels c, repeats n, first stride s
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def _divisible(v: float, divisor: int = 8) -> int:
    """Keras' ``_make_divisible``: channels rounded to a multiple of 8."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


class _Net:
    def __init__(self, seed: int):
        self.m = ModelBuilder()
        self.rng = np.random.default_rng(seed)

    def activation(self, shape: tuple[int, ...], relu6: bool) -> int:
        # RELU6 outputs use [0, 6] (zero point -128); others a symmetric range
        if relu6:
            return self.m.tensor(shape, "int8", scale=6 / 255, zero_point=-128)
        return self.m.tensor(shape, "int8", scale=0.1, zero_point=0)

    def weights(self, shape: tuple[int, ...], channels: int, axis: int) -> int:
        data = self.rng.integers(-127, 128, size=shape).astype(np.int8)
        scales = list(self.rng.uniform(0.002, 0.02, channels).astype(np.float32))
        return self.m.tensor(shape, "int8", data, scale=scales, axis=axis)

    def bias(self, channels: int, in_scale: float, w: int) -> int:
        scales = self.m.tensors[w]["scales"] * np.float32(in_scale)
        data = self.rng.integers(-2000, 2000, size=channels).astype(np.int32)
        return self.m.tensor((channels,), "int32", data, scale=list(scales))

    def scale(self, t: int) -> float:
        return float(self.m.tensors[t]["scales"][0])

    def conv(
        self, x: int, cout: int, kernel: int, stride: int, relu6: bool, padding: int
    ) -> int:
        _, h, w, cin = self.m.tensors[x]["shape"]
        oh, ow = _out(h, kernel, stride, padding), _out(w, kernel, stride, padding)
        wt = self.weights((cout, kernel, kernel, cin), cout, 0)
        b = self.bias(cout, self.scale(x), wt)
        y = self.activation((1, oh, ow, cout), relu6)
        options = dict(
            Padding=padding,
            StrideW=stride,
            StrideH=stride,
            DilationWFactor=1,
            DilationHFactor=1,
            FusedActivationFunction=RELU6 if relu6 else NONE,
        )
        self.m.op("CONV_2D", [x, wt, b], [y], ("Conv2DOptions", options))
        return y

    def depthwise(self, x: int, stride: int) -> int:
        _, h, w, c = self.m.tensors[x]["shape"]
        padding = SAME
        if stride == 2:  # Keras: ZeroPadding2D(correct_pad) then VALID
            padded = self.m.tensor(
                (1, h + 1, w + 1, c), "int8", scale=self.scale(x), zero_point=-128
            )
            widths = self.m.tensor(
                (4, 2), "int32", np.array([[0, 0], [0, 1], [0, 1], [0, 0]])
            )
            self.m.op("PAD", [x, widths], [padded], ("PadOptions", {}))
            x, h, w, padding = padded, h + 1, w + 1, VALID
        oh, ow = _out(h, 3, stride, padding), _out(w, 3, stride, padding)
        wt = self.weights((1, 3, 3, c), c, 3)
        b = self.bias(c, self.scale(x), wt)
        y = self.activation((1, oh, ow, c), True)
        options = dict(
            Padding=padding,
            StrideW=stride,
            StrideH=stride,
            DepthMultiplier=1,
            DilationWFactor=1,
            DilationHFactor=1,
            FusedActivationFunction=RELU6,
        )
        self.m.op(
            "DEPTHWISE_CONV_2D", [x, wt, b], [y], ("DepthwiseConv2DOptions", options)
        )
        return y

    def add(self, a: int, b: int) -> int:
        y = self.activation(tuple(self.m.tensors[a]["shape"]), False)
        self.m.op("ADD", [a, b], [y], ("AddOptions", {}))
        return y


def _out(size: int, kernel: int, stride: int, padding: int) -> int:
    if padding == SAME:
        return math.ceil(size / stride)
    return (size - kernel) // stride + 1


def mobilenet_v2(size: int = 224, alpha: float = 1.0, seed: int = 0) -> bytes:
    """The ``.tflite`` file of MobileNetV2 for ``size x size x 3`` images."""
    net = _Net(seed)
    m = net.m
    image = m.tensor((1, size, size, 3), "int8", scale=1 / 128, zero_point=0)
    x = net.conv(image, _divisible(32 * alpha), 3, 2, True, SAME)
    cin = m.tensors[x]["shape"][3]
    for t, c, n, s in BLOCKS:
        cout = _divisible(c * alpha)
        for k in range(n):
            stride = s if k == 0 else 1
            h = net.conv(x, cin * t, 1, 1, True, SAME) if t != 1 else x
            h = net.depthwise(h, stride)
            h = net.conv(h, cout, 1, 1, False, SAME)
            x = net.add(x, h) if stride == 1 and cin == cout else h
            cin = cout
    last = _divisible(1280 * alpha) if alpha > 1.0 else 1280
    x = net.conv(x, last, 1, 1, True, SAME)
    axes = m.tensor((2,), "int32", np.array([1, 2]))
    pooled = net.activation((1, last), True)
    m.op("MEAN", [x, axes], [pooled], ("ReducerOptions", {"KeepDims": False}))
    wt = net.weights((1000, last), 1000, 0)
    b = net.bias(1000, net.scale(pooled), wt)
    logits = m.tensor((1, 1000), "int8", scale=0.1, zero_point=0)
    m.op("FULLY_CONNECTED", [pooled, wt, b], [logits], ("FullyConnectedOptions", {}))
    probabilities = m.tensor((1, 1000), "int8", scale=1 / 256, zero_point=-128)
    m.op("SOFTMAX", [logits], [probabilities], ("SoftmaxOptions", {"Beta": 1.0}))
    return m.build([image], [probabilities])


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("output", type=Path)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--alpha", type=float, default=1.0)
    args = p.parse_args()
    args.output.write_bytes(mobilenet_v2(args.size, args.alpha))


if __name__ == "__main__":
    main()
