"""A TFLite int8 model as direct calls to CMSIS-NN's s8 functions.

``cmsis_nn_program(model, inputs)`` writes the C of a model part for
``usmp.testing.cortex_m`` (``bench_inputs``/``bench_run``/``bench_outputs``)
that runs the model the way TFLite Micro's CMSIS-NN kernels do, without the
interpreter: one call per operator, with the parameters TFLite Micro's
``Prepare`` computes (``usmp.frontend.quantization``: per-channel multipliers
and shifts, activation ranges, ADD's and SOFTMAX's parameters), the weights
and biases as ``const`` arrays, and the activations in one arena planned
like TFLite Micro's greedy planner (largest first, lowest offset free over
the tensor's lifetime, 16-byte aligned; a RESHAPE's output shares its
input's bytes). The scratch buffer CMSIS-NN asks for (``*_get_buffer_size``)
is one static array of ``SCRATCH`` bytes; the program prints the largest size
requested (``scratch N``), which is the RAM to count. On a CPU with MVE the
fully connected layers' kernel sums are computed before the measurement (in
TFLite Micro's ``Prepare``).

Operators: CONV_2D (``arm_convolve_wrapper_s8``), DEPTHWISE_CONV_2D
(``arm_depthwise_conv_wrapper_s8``), FULLY_CONNECTED
(``arm_fully_connected_s8``), AVERAGE_POOL_2D (``arm_avgpool_s8``), ADD
(``arm_elementwise_add_s8``, equal shapes), SOFTMAX (``arm_softmax_s8``),
RESHAPE (no call). Anything else raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from usmp.frontend.quantization import (
    Activation,
    activation_range_quantized,
    add_multipliers,
    conv_multipliers,
    fully_connected_multiplier,
    softmax_params,
)
from usmp.frontend.tflite_reader import Model, Operator, Tensor
from usmp.testing.cortex_m import THIRD_PARTY, ModelPart

SCRATCH = 32768
"""Bytes of the static scratch array (the largest request is printed)."""

ALIGN = 16

KERNELS = (
    "ConvolutionFunctions",
    "FullyConnectedFunctions",
    "NNSupportFunctions",
    "PoolingFunctions",
    "SoftmaxFunctions",
    "BasicMathFunctions",
    "TransposeFunctions",
)
"""CMSIS-NN source folders built into the program's archive: their s8
files and ``SUPPORT``."""

SUPPORT = ("arm_nntables", "arm_q7_to_q15_with_offset")


def cmsis_nn_sources() -> list[Path]:
    """The s8 and support sources of CMSIS-NN (unused members stay out of
    the image: the archive is linked with ``--gc-sections``)."""
    root = THIRD_PARTY / "CMSIS-NN/Source"
    files: list[Path] = []
    for folder in KERNELS:
        for path in sorted((root / folder).glob("*.c")):
            if "s8" in path.stem.split("_") or path.stem in SUPPORT:
                files.append(path)
    return files


def cmsis_nn_host_flags(compiler: str = "gcc") -> tuple[list[str], list[str]]:
    """gcc flags that compile C calling CMSIS-NN on the host, and the
    archive to link after the sources (``../shared/third_party/CMSIS-NN``,
    its portable C; ``usmp.tools.host_run.cmsis_nn_archive``)."""
    from usmp.tools.host_run import cmsis_nn_archive

    root = THIRD_PARTY / "CMSIS-NN"
    return ["-I", str(root / "Include")], [str(cmsis_nn_archive(root, compiler))]


@dataclass
class _Buffer:
    tensor: int
    size: int
    first: int
    last: int
    offset: int = 0


def _plan(model: Model) -> tuple[dict[int, int], int]:
    """Arena offset of every activation tensor and the arena's size."""
    alias: dict[int, int] = {}
    for op in model.operators:
        if op.opcode == "RESHAPE":
            alias[op.outputs[0]] = alias.get(op.inputs[0], op.inputs[0])
    buffers: dict[int, _Buffer] = {}

    def use(t: int, step: int) -> None:
        t = alias.get(t, t)
        tensor = model.tensors[t]
        if tensor.is_constant:
            return
        size = int(np.prod(tensor.shape, dtype=np.int64)) * tensor.dtype.itemsize  # type: ignore[union-attr]
        b = buffers.setdefault(t, _Buffer(t, size, step, step))
        b.first, b.last = min(b.first, step), max(b.last, step)

    for t in model.inputs:
        use(t, -1)
    for step, op in enumerate(model.operators):
        for t in (*op.inputs, *op.outputs):
            if t >= 0:
                use(t, step)
    for t in model.outputs:
        use(t, len(model.operators))
    placed: list[_Buffer] = []
    for b in sorted(buffers.values(), key=lambda b: (-b.size, b.tensor)):
        offset = 0
        for p in sorted(placed, key=lambda p: p.offset):
            if p.last < b.first or b.last < p.first:
                continue
            if offset + b.size <= p.offset:
                break
            offset = max(offset, -(-(p.offset + p.size) // ALIGN) * ALIGN)
        b.offset = offset
        placed.append(b)
    size = max((b.offset + b.size for b in placed), default=0)
    offsets = {t: b.offset for t, b in buffers.items()}
    for t, source in alias.items():
        offsets[t] = offsets[source]
    return offsets, -(-size // ALIGN) * ALIGN


def _padding(
    padding: int, stride: int, dilation: int, size: int, k: int, out: int
) -> int:
    """TFLite's ``ComputePaddingWithOffset`` (the top/left pad)."""
    if padding == 1:  # VALID
        return 0
    effective = (k - 1) * dilation + 1
    return max(0, (out - 1) * stride + effective - size) // 2


def _activation(op: Operator, out: Tensor) -> tuple[int, int]:
    assert out.quantization is not None
    fused = Activation(op.options.FusedActivationFunction())
    return activation_range_quantized(
        fused, out.quantization.scale, out.quantization.zero_point, -128, 127
    )


class _Writer:
    def __init__(self, model: Model):
        self.model = model
        self.offsets, self.arena = _plan(model)
        self.consts: list[str] = []
        self.calls: list[str] = []
        self.sizes: list[str] = []
        self.prepare: list[str] = []
        self.labels: list[str] = []
        self.names: dict[int, str] = {}

    def tensor(self, t: int) -> str:
        """A C expression for tensor ``t``'s data."""
        if t < 0:
            return "NULL"
        tensor = self.model.tensors[t]
        if tensor.is_constant:
            if t not in self.names:
                data = np.ascontiguousarray(tensor.data)
                c_type = {"int8": "int8_t", "int32": "int32_t"}[str(data.dtype)]
                name = f"tensor_{t}"
                values = ",".join(str(int(v)) for v in data.reshape(-1))
                self.consts.append(
                    f"static const {c_type} {name}[{data.size}] "
                    f"__attribute__((aligned(4))) = {{{values}}};"
                )
                self.names[t] = name
            return self.names[t]
        c_type = {"INT8": "int8_t", "INT32": "int32_t"}[tensor.type_name]
        return f"(({c_type}*)&arena[{self.offsets[t]}])"

    def array(self, name: str, values: Sequence[int]) -> str:
        self.consts.append(
            f"static int32_t {name}[{len(values)}] = {{{','.join(map(str, values))}}};"
        )
        return name

    def dims(self, name: str, n: int, h: int, w: int, c: int) -> str:
        self.consts.append(
            f"static const cmsis_nn_dims {name} = {{{n}, {h}, {w}, {c}}};"
        )
        return f"&{name}"

    def q(self, t: int) -> tuple[float, int]:
        quant = self.model.tensors[t].quantization
        assert quant is not None
        return quant.scale, quant.zero_point

    def op(self, op: Operator) -> None:
        k = op.index
        handler = getattr(self, f"op_{op.opcode.lower()}", None)
        if handler is None:
            raise ValueError(f"operator {k} ({op.opcode}): no CMSIS-NN call here")
        if op.opcode != "RESHAPE":
            self.labels.append(f"{op.opcode} #{k}")
        handler(op, k)

    def op_reshape(self, op: Operator, k: int) -> None:
        del op, k  # the output shares its input's bytes

    def _conv_like(self, op: Operator, k: int, depthwise: bool) -> None:
        x, w, b = op.inputs[:3]
        (y,) = op.outputs
        o = op.options
        xs, ws, ys = (self.model.tensors[t].shape for t in (x, w, y))
        _, in_h, in_w, in_c = xs
        _, out_h, out_w, out_c = ys
        kh, kw = ws[1], ws[2]
        sh, sw = o.StrideH(), o.StrideW()
        dh, dw = o.DilationHFactor(), o.DilationWFactor()
        ph = _padding(o.Padding(), sh, dh, in_h, kh, out_h)
        pw = _padding(o.Padding(), sw, dw, in_w, kw, out_w)
        x_scale, x_zp = self.q(x)
        y_scale, y_zp = self.q(y)
        wq = self.model.tensors[w].quantization
        assert wq is not None
        scales = list(wq.scales) * (out_c if len(wq.scales) == 1 else 1)
        mult, shift = conv_multipliers(x_scale, scales, y_scale)
        lo, hi = _activation(op, self.model.tensors[y])
        m = self.array(f"mult_{k}", mult)
        s = self.array(f"shift_{k}", shift)
        self.consts.append(
            f"static cmsis_nn_per_channel_quant_params quant_{k} = {{{m}, {s}}};"
        )
        in_dims = self.dims(f"in_dims_{k}", 1, in_h, in_w, in_c)
        bias_dims = self.dims(f"bias_dims_{k}", 1, 1, 1, out_c)
        out_dims = self.dims(f"out_dims_{k}", 1, out_h, out_w, out_c)
        if depthwise:
            f_dims = self.dims(f"f_dims_{k}", 1, kh, kw, out_c)
            self.consts.append(
                f"static const cmsis_nn_dw_conv_params params_{k} = {{{-x_zp}, {y_zp}, "
                f"{out_c // in_c}, {{{sw}, {sh}}}, {{{pw}, {ph}}}, {{{dw}, {dh}}}, "
                f"{{{lo}, {hi}}}}};"
            )
            fn = "arm_depthwise_conv_wrapper_s8"
        else:
            f_dims = self.dims(f"f_dims_{k}", out_c, kh, kw, in_c)
            self.consts.append(
                f"static const cmsis_nn_conv_params params_{k} = {{{-x_zp}, {y_zp}, "
                f"{{{sw}, {sh}}}, {{{pw}, {ph}}}, {{{dw}, {dh}}}, {{{lo}, {hi}}}}};"
            )
            fn = "arm_convolve_wrapper_s8"
        self.sizes.append(
            f"{fn}_get_buffer_size(&params_{k}, {in_dims}, {f_dims}, {out_dims})"
        )
        self.calls.append(
            f"{fn}(&ctx, &params_{k}, &quant_{k}, {in_dims}, {self.tensor(x)}, "
            f"{f_dims}, {self.tensor(w)}, {bias_dims}, {self.tensor(b)}, {out_dims}, "
            f"{self.tensor(y)});"
        )

    def op_conv_2d(self, op: Operator, k: int) -> None:
        self._conv_like(op, k, depthwise=False)

    def op_depthwise_conv_2d(self, op: Operator, k: int) -> None:
        self._conv_like(op, k, depthwise=True)

    def op_fully_connected(self, op: Operator, k: int) -> None:
        x, w = op.inputs[:2]
        b = op.inputs[2] if len(op.inputs) > 2 else -1
        (y,) = op.outputs
        units, depth = self.model.tensors[w].shape
        batches = int(np.prod(self.model.tensors[x].shape)) // depth
        x_scale, x_zp = self.q(x)
        w_scale, w_zp = self.q(w)
        y_scale, y_zp = self.q(y)
        mult, shift = fully_connected_multiplier(x_scale, w_scale, y_scale)
        lo, hi = _activation(op, self.model.tensors[y])
        self.consts.append(
            f"static const cmsis_nn_fc_params params_{k} = {{{-x_zp}, {-w_zp}, {y_zp}, "
            f"{{{lo}, {hi}}}}};"
        )
        self.consts.append(
            "static const cmsis_nn_per_tensor_quant_params "
            f"quant_{k} = {{{mult}, {shift}}};"
        )
        in_dims = self.dims(f"in_dims_{k}", batches, 1, 1, depth)
        f_dims = self.dims(f"f_dims_{k}", depth, 1, 1, units)
        bias_dims = self.dims(f"bias_dims_{k}", 1, 1, 1, units)
        out_dims = self.dims(f"out_dims_{k}", batches, 1, 1, units)
        self.consts.append(  # TFLite Micro computes them only for MVE
            "#if defined(ARM_MATH_MVEI)\n"
            f"static int32_t kernel_sum_{k}[{units}];\n"
            f"#define KERNEL_SUM_{k} kernel_sum_{k}, (int32_t)sizeof kernel_sum_{k}\n"
            f"#else\n#define KERNEL_SUM_{k} NULL, 0\n#endif"
        )
        self.prepare.append(
            "#if defined(ARM_MATH_MVEI)\n"
            f"  arm_vector_sum_s8(kernel_sum_{k}, {depth}, {units}, {self.tensor(w)}, "
            f"{-x_zp}, 0, {self.tensor(b)});\n#endif"
        )
        self.calls.append(
            "{ "
            f"cmsis_nn_context c = {{KERNEL_SUM_{k}}}; "
            f"arm_fully_connected_s8(&c, &params_{k}, &quant_{k}, {in_dims}, "
            f"{self.tensor(x)}, {f_dims}, {self.tensor(w)}, {bias_dims}, "
            f"{self.tensor(b)}, {out_dims}, {self.tensor(y)}); }}"
        )

    def op_average_pool_2d(self, op: Operator, k: int) -> None:
        (x,) = op.inputs[:1]
        (y,) = op.outputs
        o = op.options
        _, in_h, in_w, c = self.model.tensors[x].shape
        _, out_h, out_w, _ = self.model.tensors[y].shape
        fh, fw = o.FilterHeight(), o.FilterWidth()
        sh, sw = o.StrideH(), o.StrideW()
        ph = _padding(o.Padding(), sh, 1, in_h, fh, out_h)
        pw = _padding(o.Padding(), sw, 1, in_w, fw, out_w)
        lo, hi = _activation(op, self.model.tensors[y])
        self.consts.append(
            f"static const cmsis_nn_pool_params params_{k} = {{{{{sw}, {sh}}}, "
            f"{{{pw}, {ph}}}, {{{lo}, {hi}}}}};"
        )
        in_dims = self.dims(f"in_dims_{k}", 1, in_h, in_w, c)
        f_dims = self.dims(f"f_dims_{k}", 1, fh, fw, 1)
        out_dims = self.dims(f"out_dims_{k}", 1, out_h, out_w, c)
        self.sizes.append(f"arm_avgpool_s8_get_buffer_size({out_w}, {c})")
        self.calls.append(
            f"arm_avgpool_s8(&ctx, &params_{k}, {in_dims}, {self.tensor(x)}, "
            f"{f_dims}, {out_dims}, {self.tensor(y)});"
        )

    def op_softmax(self, op: Operator, k: int) -> None:
        (x,) = op.inputs[:1]
        (y,) = op.outputs
        shape = self.model.tensors[x].shape
        x_scale, _ = self.q(x)
        mult, shift, diff_min = softmax_params(op.options.Beta(), x_scale)
        rows = int(np.prod(shape[:-1]))
        self.calls.append(
            f"arm_softmax_s8({self.tensor(x)}, {rows}, {shape[-1]}, {mult}, {shift}, "
            f"{diff_min}, {self.tensor(y)});"
        )

    def op_add(self, op: Operator, k: int) -> None:
        a, b = op.inputs[:2]
        (y,) = op.outputs
        shapes = {self.model.tensors[t].shape for t in (a, b, y)}
        if len(shapes) != 1:
            raise ValueError(f"operator {k} (ADD): broadcasting is not written here")
        a_scale, a_zp = self.q(a)
        b_scale, b_zp = self.q(b)
        y_scale, y_zp = self.q(y)
        (m1, s1), (m2, s2), (mo, so) = add_multipliers(a_scale, b_scale, y_scale)
        lo, hi = _activation(op, self.model.tensors[y])
        n = int(np.prod(self.model.tensors[y].shape))
        self.calls.append(
            f"arm_elementwise_add_s8({self.tensor(a)}, {self.tensor(b)}, "
            f"{-a_zp}, {m1}, {s1}, {-b_zp}, {m2}, {s2}, 20, {self.tensor(y)}, "
            f"{y_zp}, {mo}, {so}, "
            f"{lo}, {hi}, {n});"
        )


def cmsis_nn_program(model: Model, inputs: Sequence[np.ndarray]) -> ModelPart:
    """The model part running ``model`` on ``inputs`` with CMSIS-NN."""
    w = _Writer(model)
    for op in model.operators:
        w.op(op)
    lines = [
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <string.h>",
        '#include "arm_nnfunctions.h"',
        "void bench_hex(const char*, unsigned, const void*, unsigned);",
        "void usmp_profile_tick(void);",
        "#ifdef USMP_PROFILE",
        "#define TICK() usmp_profile_tick()",
        "#else",
        "#define TICK() ((void)0)",
        "#endif",
        f"static int8_t arena[{max(w.arena, 1)}] __attribute__((aligned({ALIGN})));",
        f"static int8_t scratch[{SCRATCH}] __attribute__((aligned({ALIGN})));",
        *w.consts,
    ]
    for k, x in enumerate(inputs):
        data = np.ascontiguousarray(x).tobytes()
        lines.append(
            f"static const unsigned char input_{k}[{len(data)}] = "
            f"{{{','.join(str(v) for v in data)}}};"
        )
    lines.append("void bench_inputs(void) {")
    lines.append("  int32_t need = 0, n;")
    for size in w.sizes:
        lines.append(f"  n = {size}; if (n > need) need = n;")
    lines.append('  printf("scratch %ld\\n", (long)need);')
    lines.append(
        f'  if (need > {SCRATCH}) {{ printf("scratch too small\\n"); return; }}'
    )
    lines.extend(w.prepare)
    for k, t in enumerate(model.inputs):
        lines.append(f"  memcpy({w.tensor(t)}, input_{k}, sizeof input_{k});")
    lines.append("}")
    lines.append("void bench_run(void) {")
    lines.append(f"  cmsis_nn_context ctx = {{scratch, {SCRATCH}}};")
    lines.append("  (void)ctx;")
    for call in w.calls:
        lines.append(f"  {call}")
        lines.append("  TICK();")
    lines.append("}")
    lines.append("void bench_outputs(void) {")
    for k, t in enumerate(model.outputs):
        tensor = model.tensors[t]
        n = int(np.prod(tensor.shape)) * tensor.dtype.itemsize  # type: ignore[union-attr]
        lines.append(f'  bench_hex("output", {k}, {w.tensor(t)}, {n});')
    lines.append("}")
    text = "\n".join(lines) + "\n"
    return ModelPart(
        {"cmsis_nn_model.c": text},
        include_dirs=[THIRD_PARTY / "CMSIS-NN/Include"],
        profiled={"cmsis_nn_model.c": "#define USMP_PROFILE 1\n" + text},
        libraries=[("cmsis_nn", cmsis_nn_sources())],
        steps=w.labels,
        scratch=".bss.scratch",
    )
