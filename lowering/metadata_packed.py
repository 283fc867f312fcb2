"""TVM's packed entry point (executor option ``interface-api=packed``).

With ``aot-lower-main{interface_api=packed}`` the library also has

    int32_t tvmgen_<m>_run_model(TVMValue* args, int* type_codes, int num_args,
                                 TVMValue* out_ret_value, int* out_ret_tcode,
                                 void* resource_handle);

TVM's packed run function: ``args`` holds one ``DLTensor`` handle (type code
``kTVMDLTensorHandle``) per input, then per output (unless they live in the
workspace), then per pool the application provides, in the order of the
``TVMWorkspaces_<m>``/``TVMParameters_<m>`` members. It returns -1 when the
count, a type code, or a tensor's rank, element type or shape is not the
model's (nothing is run), else what the entry function returns (0, or the
first failing packed operator's status). The struct API (``tvmgen_<m>_run``)
stays, so applications written for it keep working.
"""

from __future__ import annotations

from usmp.dialects import tir
from usmp.lowering.convert_to_emitc_packed import RUNTIME_HEADER, dl_data_type
from usmp.lowering.metadata import (
    ModelInterface,
    Pool,
    Tensor,
    c_text,
    pool_variable,
)


def is_packed(m: ModelInterface) -> bool:
    attr = m.main.attributes.get(tir.INTERFACE_API)
    return getattr(attr, "data", "c") == "packed"


def _signature(m: ModelInterface) -> str:
    return (
        f"int32_t {m.symbol('run_model')}(TVMValue* args, int* type_codes, "
        "int num_args, TVMValue* out_ret_value, int* out_ret_tcode, "
        "void* resource_handle)"
    )


def _arguments(m: ModelInterface) -> list[Tensor | Pool]:
    io: list[Tensor | Pool] = [] if m.io_in_workspace else [*m.inputs, *m.outputs]
    return [*io, *m.user_pools(True), *m.user_pools(False)]


def header_lines(m: ModelInterface) -> list[str]:
    """The declaration of ``run_model`` for the interface header."""
    if not is_packed(m):
        return []
    described = ", ".join(c_text(a.name) for a in _arguments(m))
    return [
        "/**",
        " * TVM's packed entry (interface-api packed): args[k] is a DLTensor*",
        " * (type code kTVMDLTensorHandle) for each of, in order: "
        + (described or "nothing")
        + (
            f"; then the context (kTVMOpaqueHandle) of device {', '.join(m.devices)}"
            if m.devices
            else ""
        )
        + ".",
        " * Returns -1 if the arguments are not the model's (nothing runs),",
        " * else what run returns.",
        " */",
        f"{_signature(m)};",
        "",
    ]


def header_include(m: ModelInterface) -> list[str]:
    return [f"#include <{RUNTIME_HEADER}>"] if is_packed(m) else []


def source_lines(m: ModelInterface) -> list[str]:
    """The definition of ``run_model`` (after the library's pools)."""
    if not is_packed(m):
        return []
    arguments = _arguments(m)
    n = len(arguments)
    checks = [f"num_args != {n + len(m.devices)}"]
    checks += [f"type_codes[{k}] != kTVMDLTensorHandle" for k in range(n)]
    checks += [  # device contexts: a handle, or NULL
        f"(type_codes[{k}] != kTVMOpaqueHandle && type_codes[{k}] != kTVMNullptr)"
        for k in range(n, n + len(m.devices))
    ]
    lines = [
        f"{_signature(m)} {{",
        "  (void)out_ret_value;",
        "  (void)out_ret_tcode;",
        "  (void)resource_handle;",
        f"  if ({' || '.join(checks)}) {{",
        "    return -1;",
        "  }",
    ]
    data: dict[tuple[bool, str], str] = {}
    for k, a in enumerate(arguments):
        t = f"t{k}"
        lines.append(f"  const DLTensor* {t} = (const DLTensor*)args[{k}].v_handle;")
        if isinstance(a, Tensor):
            shape = list(a.type.get_shape())
            code, bits = dl_data_type(a.type.get_element_type())
            ctype = f"{a.c_element}*"
        else:
            shape, code, bits = [a.size], 1, 8
            ctype = "uint8_t*" if a.writable else "const uint8_t*"
        conds = [
            f"{t} == NULL",
            f"{t}->ndim != {len(shape)}",
            f"{t}->dtype.code != {code}",
            f"{t}->dtype.bits != {bits}",
            f"{t}->dtype.lanes != 1",
            *(f"{t}->shape[{d}] != {n}" for d, n in enumerate(shape)),
        ]
        lines += [f"  if ({' || '.join(conds)}) {{", "    return -1;", "  }"]
        pointer = f"(char*){t}->data + {t}->byte_offset"
        data[isinstance(a, Tensor), a.name] = f"({ctype})({pointer})"
    io = [] if m.io_in_workspace else [*m.inputs, *m.outputs]
    call = [data[True, t.name] for t in io]
    call += [data[False, p.name] if p.user else pool_variable(m, p) for p in m.pools]
    call += [f"args[{k}].v_handle" for k in range(n, n + len(m.devices))]
    if m.main.function_type.outputs.data:
        lines.append(f"  return {m.entry}({', '.join(call)});")
    else:
        lines += [f"  {m.entry}({', '.join(call)});", "  return 0;"]
    lines += ["}", ""]
    return lines
