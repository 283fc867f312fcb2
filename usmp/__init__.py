"""usmp-opt: an xDSL-based ahead-of-time compiler that plans every tensor of a
tiny neural network into statically sized memory pools and emits C99.

The import package is ``usmp``; its sub-packages live in the repository's
top-level folders (``dialects/`` is ``usmp.dialects``, ``passes/`` is
``usmp.passes``, and so on; see ``pyproject.toml``).
"""
