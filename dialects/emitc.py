"""emitc: xDSL's emitc dialect (placeholder until convert-to-emitc lands)."""

from xdsl.dialects.emitc import EmitC

__all__ = ["EmitC"]
