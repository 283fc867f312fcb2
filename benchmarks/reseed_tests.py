#!/usr/bin/env python3
"""Re-run tests with every seeded NumPy generator re-seeded.

    python benchmarks/reseed_tests.py OFFSET [pytest arguments ...]
    python benchmarks/reseed_tests.py 7 tests/test_import_tflite_*.py

The comparison tests (ours against TFLite Micro, LiteRT or the oracle) draw
their weights and inputs from ``numpy.random.default_rng(seed)`` with fixed
seeds, so they check one draw each. This runs pytest in this process (no
xdist) with ``default_rng(seed)`` replaced by ``default_rng(seed * 1000003
+ OFFSET)``: the same tests on other weights and inputs. A rare mismatch
(a rounding tie, an accumulator path) shows up here long before a user
meets it: two of them did (16x8 convolutions without a bias, hybrid
asymmetric quantisation). A failure names the test; reproduce it with the
same OFFSET. Exit status: pytest's.
"""

from __future__ import annotations

import sys

import numpy as np


def main() -> int:
    if len(sys.argv) < 2 or not sys.argv[1].lstrip("-").isdigit():
        print(__doc__)
        return 2
    offset = int(sys.argv[1])
    original = np.random.default_rng

    def reseeded(seed=None, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if isinstance(seed, int | np.integer):
            seed = int(seed) * 1000003 + offset
        return original(seed, *args, **kwargs)

    np.random.default_rng = reseeded  # type: ignore[assignment]
    import pytest

    return pytest.main(["-q", "-p", "no:cacheprovider", "-n", "0", *sys.argv[2:]])


if __name__ == "__main__":
    sys.exit(main())
