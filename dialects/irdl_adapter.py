"""The one place usmp reaches into xDSL's private API.

``relay_props`` declares an operator's property once, with a helper that is
both the IRDL property definition and the typed Python accessor's kind
(``ints_prop(default=(1, 1))``). xDSL (0.74) has no public hook for that:
``prop_def`` returns an instance of the private ``_PropertyFieldDef``, and
``OpDef.from_pyrdl`` recognises a property field by that class. So the typed
definition subclasses it, here and nowhere else.

When xDSL changes that class (renamed, moved, another constructor),
``tests/test_irdl_adapter.py`` fails naming it; this module is what to fix.
"""

from __future__ import annotations

from xdsl.ir import Attribute
from xdsl.irdl.attributes import IRDLAttrConstraint
from xdsl.irdl.operations import (
    PropertyDef,
    _PropertyFieldDef,
)

PRIVATE_BASE = _PropertyFieldDef
"""xDSL's private class of a property field (what ``prop_def`` returns)."""


class PropertyField(_PropertyFieldDef):
    """A property field of an IRDL op definition, as ``prop_def(constr,
    default)`` makes it, that subclasses can extend with their own data."""

    def __init__(self, constr: IRDLAttrConstraint, default: Attribute | None):
        super().__init__(PropertyDef, constr, None, default)
