"""What the lowering may use on the CPU it compiles for (``-mcpu``).

``lower-ops{mcpu=cortex-m4}`` (``usmp-compile --target "c -mcpu=cortex-m4"``,
TVM's spelling) selects kernels for that CPU; the default (``""``) and any
CPU not listed here get the portable C. Features:

* ``dsp``: the Armv7E-M / Armv8-M DSP extension (ACLE ``__ARM_FEATURE_DSP``):
  16-bit SIMD multiply-accumulate (``smlad``), byte-pair sign extension
  (``sxtb16``/``sxtab16``), ``smmulr``, ``ssat``. The C then calls
  ``usmp_smlad`` & co. (``lowering/dsp.py``), which are the instructions
  where the C compiler targets them and portable C elsewhere, so the same
  library still builds and runs (bit for bit) on any host.

A CPU name may carry gcc's feature suffixes; ``+nodsp`` turns the extension
off (``cortex-m33+nodsp``).
"""

from __future__ import annotations

from dataclasses import dataclass

DSP_CPUS = (
    "cortex-m4",
    "cortex-m7",
    "cortex-m33",
    "cortex-m35p",
    "cortex-m52",
    "cortex-m55",
    "cortex-m85",
)
"""Cortex-M CPUs with the DSP extension (Armv7E-M, Armv8-M Mainline with
DSP, Armv8.1-M)."""


@dataclass(frozen=True)
class TargetFeatures:
    """The features of one ``-mcpu`` the lowering uses."""

    mcpu: str = ""
    dsp: bool = False
    """Arm's DSP extension (module note)."""

    @staticmethod
    def of(mcpu: str) -> TargetFeatures:
        """The features of ``mcpu`` (``cortex-m4``, ``cortex-m33+nodsp``,
        ...; unknown or empty: none)."""
        name, *extensions = mcpu.strip().lower().split("+")
        dsp = name in DSP_CPUS and "nodsp" not in extensions
        return TargetFeatures(mcpu, dsp)


PORTABLE = TargetFeatures()
"""No target features: the portable C."""
