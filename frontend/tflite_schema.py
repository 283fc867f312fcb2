"""The generated classes of the ``tflite`` package, a module at a time.

``import tflite`` runs the package's ``__init__``, which imports every one
of its ~190 generated modules (``from tflite.X import *`` each: 0.05 CPU s,
a quarter of the import step of MobileNetV2), where reading a model needs a
dozen: the tables of the model, its tensors and operators, and the options
of the operator kinds it has. ``schema_class`` imports the one module a
class is in; the package itself, when nothing imported it yet, is set up
without running its ``__init__`` (``_DeferredPackage``), and that runs in
full the first time code reads a name of the package not loaded this way:
``tflite.<name>`` reads as after ``import tflite`` in every case.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any

__all__ = ["schema_class"]

_PACKAGE = "tflite"


def schema_class(name: str) -> Any:
    """The class ``tflite.<name>`` (of module ``tflite/<name>.py``)."""
    if _PACKAGE not in sys.modules:
        _defer_package_init()
    return getattr(importlib.import_module(f"{_PACKAGE}.{name}"), name)


class _DeferredPackage(ModuleType):
    """The ``tflite`` package before its ``__init__`` ran.

    Its ``__init__`` is one ``from tflite.X import *`` per generated module
    ``X``, which binds ``tflite.X`` to the class ``X`` (not the module) and
    ``tflite.XStart``... to the module's functions. A module imported on
    its own binds its class here the same way; reading any other name runs
    the ``__init__`` (after which this is a plain module)."""

    def __setattr__(self, name: str, value: Any) -> None:
        # the import system binds ``tflite.X`` to the submodule it loaded
        if isinstance(value, ModuleType) and value.__name__ == f"{_PACKAGE}.{name}":
            value = getattr(value, name, value)
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> Any:
        _run_package_init(self)
        return getattr(self, name)


def _defer_package_init() -> None:
    spec = importlib.util.find_spec(_PACKAGE)
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    package.__class__ = _DeferredPackage
    sys.modules[_PACKAGE] = package


def _run_package_init(package: ModuleType) -> None:
    package.__class__ = ModuleType
    spec = package.__spec__
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(package)
