"""The TFLite frontend of usmp-opt: ``.tflite`` flatbuffers to relay MLIR.

* ``tflite_verify``: bounds checks of the flatbuffer before anything is read;
* ``tflite_reader``: a typed view of the flatbuffer (``tflite`` package),
  with the decoded indices, sizes and quantisation checked;
* ``tflite_import``: ``import_tflite(path) -> ModuleOp`` (``@main`` in relay);
* ``tflite_ops``: one converter per supported builtin operator;
* ``quantization``: TFLite's prepare-time requantisation arithmetic;
* ``builder``: the emission state the converters share;
* ``printing``: printing weights inline (hex), out of line or elided.
"""
