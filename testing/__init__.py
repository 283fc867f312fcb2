"""Validation helpers — not part of the compiler.

Used by the tests, the benchmarks and ``python -m usmp.testing.compare_tflm``
to check what the compiler produces; nothing under ``usmp.dialects``,
``usmp.passes``, ``usmp.lowering`` or the ``usmp-*`` commands imports them.

* ``run_c``: build the generated C with gcc (sanitizers optional) and run it.
* ``tflm_reference``: run a model in the ``tflite-micro`` interpreter, every
  tensor or only the outputs.
* ``fuzz_graphs`` / ``fuzz_run``: random valid relay graphs and the pipeline
  run that checks them (``benchmarks/fuzz.py``, ``tests/test_fuzz_pipeline.py``).
* ``shared_models``: where ``../shared/models`` is and which models compile.
"""
