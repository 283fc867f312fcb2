"""``ProfileError``, apart from ``profile_table``: ``usmp-compile`` catches
it on every run, and reads a profile table (a parser, its regexes and
dataclasses) only with ``--profile-data``."""

from __future__ import annotations


class ProfileError(Exception):
    """A malformed profile table: ``file:line: error: ...``."""
