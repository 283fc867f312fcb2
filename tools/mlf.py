"""A ``usmp-compile`` output directory as a Model Library Format archive.

TVM's Model Library Format (MLF, ``python/tvm/micro/model_library_format.py``,
metadata version 7 in TVM 0.19) is the ``.tar`` that ``tvmc compile
--output-format mlf`` writes::

    ./metadata.json                 {"version": 7, "modules": {NAME: {...}}}
    ./codegen/host/src/*.c          the C library
    ./codegen/host/include/*.h      its interface headers
    ./parameters/NAME.params        TVM's parameter dictionary (binary)
    ./src/NAME.relay.mlir           the model as imported (usmp's relay MLIR;
                                    TVM writes its Relay text as src/NAME.relay)

plus usmp's own files (``memory/`` with the plan and its pictures, and any
other file ``usmp-compile`` wrote). The parameters are linked into the C
(TVM's AOT ``link-params``, usmp's constant pools), so ``NAME.params`` is a
valid, empty parameter dictionary, as TVM's is for linked parameters. There
is no ``runtime/`` (TVM's standalone C runtime): the library needs none.

A module's entry follows TVM's schema: ``model_name``, ``export_datetime``,
``memory.functions.main`` (one entry for device 1 with the workspace,
constant and I/O bytes and the inputs and outputs by name with their size and
dtype), ``memory.functions.operator_functions`` (each operator function's own
workspace: 0 for usmp's operators, which need no scratch), ``target``,
``executors`` and ``style``; usmp adds ``usmp`` (the C interface, pools and
plan summary, and the tvmc options it was given).

The archive is the same, byte for byte, for the same input: entries sorted,
owner root, and one timestamp (``SOURCE_DATE_EPOCH`` if set, else the
model file's modification time) for the entries and ``export_datetime``.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import struct
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MLF_VERSION = 7
CPU_DEVICE = 1  # DLPack's kDLCPU, the device type of TVM's c target
PARAMS_LIST_MAGIC = 0xF7E58D4F05049CB7  # TVM's kTVMNDArrayListMagic

_DTYPES = {
    "int8_t": "int8",
    "uint8_t": "uint8",
    "int16_t": "int16",
    "uint16_t": "uint16",
    "int32_t": "int32",
    "uint32_t": "uint32",
    "int64_t": "int64",
    "uint64_t": "uint64",
    "float": "float32",
    "double": "float64",
    "bool": "bool",
}


def empty_params() -> bytes:
    """TVM's ``save_param_dict({})``: magic, reserved, no names, no arrays."""
    return struct.pack("<QQQQ", PARAMS_LIST_MAGIC, 0, 0, 0)


def source_epoch(model: Path) -> int:
    """The archive's one timestamp (reproducible builds' convention)."""
    text = os.environ.get("SOURCE_DATE_EPOCH", "")
    if text.isascii() and text.isdigit():
        return int(text)
    return int(model.stat().st_mtime)


def mlf_metadata(
    usmp: dict[str, Any], targets: list[str], epoch: int, extra: dict[str, Any]
) -> dict[str, Any]:
    """TVM's MLF ``metadata.json`` for one module, from usmp-compile's."""
    name = usmp["model_name"]
    interface = usmp.get("c_interface") or {}
    memory = usmp.get("memory") or {}
    pools = memory.get("pools", [])
    main = {
        "device": CPU_DEVICE,
        "workspace_size_bytes": sum(
            p["size"] for p in pools if p["kind"] == "workspace"
        ),
        "constants_size_bytes": sum(
            p["size"] for p in pools if p["kind"] == "constant"
        ),
        "io_size_bytes": sum(
            t["bytes"]
            for t in [*interface.get("inputs", []), *interface.get("outputs", [])]
        ),
        "inputs": _tensors(usmp, "inputs"),
        "outputs": _tensors(usmp, "outputs"),
    }
    main_function = memory.get("model")
    scratch: dict[str, int] = {}
    for step in memory.get("steps", []):
        scratch.setdefault(step, 0)
    workspace_pools = {p["name"] for p in pools if p["kind"] == "workspace"}
    for buffer in memory.get("buffers", []):
        if buffer.get("pool") in workspace_pools and buffer.get("function") not in (
            None,
            main_function,
        ):
            function = buffer["function"]
            scratch[function] = scratch.get(function, 0) + buffer["size"]
    operators = [
        {
            "function_name": function,
            "workspace": [{"device": CPU_DEVICE, "workspace_size_bytes": size}],
        }
        for function, size in scratch.items()
    ]
    when = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    module = {
        "model_name": name,
        "export_datetime": when.strftime("%Y-%m-%d %H:%M:%SZ"),
        "memory": {"functions": {"main": [main], "operator_functions": operators}},
        "target": targets,
        "executors": ["aot"],
        "style": "full-model",
        "usmp": {
            "algorithm": usmp.get("algorithm"),
            "memory_summary": usmp.get("memory_summary"),
            "pools": [
                {k: p.get(k) for k in ("name", "kind", "size", "lower_bound")}
                for p in pools
            ],
            "c_interface": interface,
            **extra,
        },
    }
    return {"version": MLF_VERSION, "modules": {name: module}}


def _tensors(usmp: dict[str, Any], which: str) -> dict[str, dict[str, Any]]:
    """Inputs or outputs by the model's tensor name (TVM's Relay parameter
    names), each with its size in bytes and dtype."""
    interface = (usmp.get("c_interface") or {}).get(which, [])
    model = (usmp.get("model") or {}).get(which, [])
    if len(model) != len(interface):
        model = interface
    return {
        str(m["name"]): {"size": t["bytes"], "dtype": _DTYPES.get(t["c_type"], "")}
        for m, t in zip(model, interface, strict=True)
    }


def write_mlf(
    library: Path,
    tar_path: Path,
    targets: list[str],
    epoch: int,
    extra: dict[str, Any],
) -> list[str]:
    """Pack ``library`` (a usmp-compile output directory) as an MLF archive
    at ``tar_path`` (written whole, then renamed into place); its members."""
    usmp = json.loads((library / "metadata.json").read_text())
    name = usmp["model_name"]
    files: dict[str, bytes] = {}
    for relative in usmp["files"]:
        if relative == "metadata.json" or relative.startswith("ir/"):
            continue
        member = relative
        if relative.startswith("src/") and relative.endswith(".relay.mlir"):
            member = f"src/{name}.relay.mlir"
        files[member] = (library / relative).read_bytes()
    metadata = mlf_metadata(usmp, targets, epoch, extra)
    files["metadata.json"] = (
        json.dumps(metadata, indent=2, sort_keys=True) + "\n"
    ).encode()
    files[f"parameters/{name}.params"] = empty_params()
    tar_path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=tar_path.parent, prefix=f".{tar_path.name}.")
    try:
        with (
            os.fdopen(fd, "wb") as stream,
            tarfile.open(fileobj=stream, mode="w", format=tarfile.GNU_FORMAT) as tar,
        ):
            for member, data in _entries(files):
                info = tarfile.TarInfo(member)
                info.mtime = epoch
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
                if data is None:
                    info.type = tarfile.DIRTYPE
                    info.mode = 0o755
                    tar.addfile(info)
                else:
                    info.size = len(data)
                    info.mode = 0o644
                    tar.addfile(info, io.BytesIO(data))
        os.replace(temporary, tar_path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return sorted(files)


def _entries(files: dict[str, bytes]) -> Iterator[tuple[str, bytes | None]]:
    """``./`` and every folder before its files, as TVM's ``tar.add`` of the
    export folder lists them (``./codegen``, ``./codegen/host``, ...)."""
    folders = {"."}
    for member in files:
        parts = member.split("/")[:-1]
        folders.update("./" + "/".join(parts[: i + 1]) for i in range(len(parts)))
    entries: dict[str, bytes | None] = dict.fromkeys(folders)
    entries.update({f"./{m}": d for m, d in files.items()})
    for member in sorted(entries):
        yield member, entries[member]
