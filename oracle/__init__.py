"""Reference semantics (oracles) every stage of usmp-opt is checked against.

* ``quantization``: TFLite/gemmlowp integer arithmetic (requantisation,
  rounding divisions), bit-exact with TFLite Micro's reference kernels.
* ``kernels``: one numpy function per relay operator of
  ``docs/relay-ops.md``; ``tflite_kernels``: the TFLite-specific operators;
  ``tflite_activations``: TFLite Micro's int8/int16 LOGISTIC and TANH (also
  the int16 gate activations of its integer LSTM).
* ``relay_interpreter``: ``evaluate(module, inputs)`` runs relay-level IR.
* ``values``: xDSL attributes/types <-> numpy arrays and dtypes.
* ``tir_interpreter``: runs tir-level IR (memrefs, pools).

Importing the package loads none of them.
"""
