"""The device part of a model's C interface (TVM's device API, seed 000).

A model whose entry calls device hooks (``tir.device_contexts``, see
``passes/aot_device_hooks.py``) has, in ``tvmgen_<m>.h``::

    typedef struct tvmgen_m_devices {
      void* accel; /* device_context_accel, passed to its hooks */
    } TVMDevices_m;

    int32_t TVMDeviceAccelActivate(void* device_context_accel);
    int32_t TVMDeviceAccelOpen(void* device_context_accel);
    int32_t TVMDeviceAccelClose(void* device_context_accel);
    int32_t TVMDeviceAccelDeactivate(void* device_context_accel);

and ``run`` takes ``TVMDevices_m* devices`` last (TVM's
``tvmgen_<m>_run(inputs, outputs, devices)``). The application implements
the hooks; the library calls them (activate first, open/close around each
call on the device, deactivate last).
"""

from __future__ import annotations

from typing import Protocol

from usmp.dialects.tir import DEVICE_HOOKS, DeviceHookOp


class ModelInterface(Protocol):
    """What this module reads of ``usmp.lowering.metadata.ModelInterface``."""

    @property
    def devices(self) -> tuple[str, ...]: ...

    def typedef(self, what: str) -> str: ...

    def symbol(self, what: str) -> str: ...


def hook_names(device: str) -> list[str]:
    """TVM's hook functions of ``device``, in call order."""
    return [DeviceHookOp(h, device).c_function for h in DEVICE_HOOKS]


def hook_prototypes(m: ModelInterface) -> list[str]:
    """The prototypes of every hook the library calls."""
    return [
        f"int32_t {name}(void* {DeviceHookOp.device_context(d)});"
        for d in m.devices
        for name in hook_names(d)
    ]


def devices_declarations(m: ModelInterface) -> list[str]:
    """The header's ``TVMDevices_<m>`` struct and hook prototypes (none
    without devices)."""
    if not m.devices:
        return []
    fields = [
        f"void* {d}; /* {DeviceHookOp.device_context(d)}, passed to its hooks */"
        for d in m.devices
    ]
    return [
        "/* The context of each device the model runs operators on, passed to",
        " * that device's hooks. */",
        f"typedef struct {m.symbol('devices')} {{",
        *(f"  {f}" for f in fields),
        f"}} {m.typedef('Devices')};",
        "",
        "/**",
        " * Device hooks (TVM's device API), implemented by the application;",
        " * run calls TVMDevice<D>Activate for every device first,",
        " * TVMDevice<D>Open / TVMDevice<D>Close around each operator on the",
        " * device, and TVMDevice<D>Deactivate for every device last.",
        " */",
        *hook_prototypes(m),
        "",
    ]


def devices_parameter(m: ModelInterface) -> list[str]:
    """``run``'s devices parameter (none without devices)."""
    return [f"{m.typedef('Devices')}* devices"] if m.devices else []


def devices_arguments(m: ModelInterface, devices: str = "devices") -> list[str]:
    """The entry's context arguments, from ``run``'s ``devices``."""
    return [f"{devices}->{d}" for d in m.devices]


def hook_stubs(m: ModelInterface, record: str = "") -> list[str]:
    """Definitions of the hooks for an application that has no device (a
    test harness, the kit's example): each returns 0, after ``record``
    (a C statement with ``NAME`` replaced by the hook's name) if given."""
    lines: list[str] = []
    for d in m.devices:
        for name in hook_names(d):
            context = DeviceHookOp.device_context(d)
            body = f"  {record.replace('NAME', name)}\n" if record else ""
            lines += [
                f"int32_t {name}(void* {context}) {{",
                *([body.rstrip("\n")] if body else []),
                f"  (void){context};",
                "  return 0;",
                "}",
            ]
    return lines


def stub_devices(m: ModelInterface) -> tuple[list[str], list[str]]:
    """For an application without devices (a test harness): the definitions
    of a ``TVMDevices_<m>`` variable ``devices`` (null contexts) and of
    every hook (returning 0), and ``run``'s extra argument (none without
    devices)."""
    if not m.devices:
        return [], []
    contexts = ", ".join("0" for _ in m.devices)
    definitions = [
        f"static {m.typedef('Devices')} devices = {{ {contexts} }};",
        *hook_stubs(m),
        "",
    ]
    return definitions, ["&devices"]
