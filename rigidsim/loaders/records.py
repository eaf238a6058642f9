"""The plain records the MJCF reader collects and the compiler stages (mesh, assemble) pass along."""

from __future__ import annotations


class Rec:
    """A plain record: attributes set by keyword."""

    def __init__(self, **kw):
        self.__dict__.update(kw)
