"""numpy, imported where it is first used rather than where it is named.

The modules the annotation screen imports (its review, the agreement formulas, the chunk
columns) also hold the whole-session numpy paths. Importing numpy costs about a fifth of the
screen's start, and the first paint needs none of it: the summary divides plain counts. Those
modules name ``np`` from here, so numpy loads when a path first reaches into it (the queue,
the stats screen, a report), not on import. Modules off that path import numpy as usual.

``import numpy.typing`` or ``from numpy import ...`` in those modules would load it at once:
keep such names under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any


class _OnUse:
    """Stands for a module; imports it at the first attribute asked for and keeps each one."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(importlib.import_module(self._name), attribute)
        # Kept on the instance, so the next lookup never reaches __getattr__: as fast as a
        # module's own attribute.
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


if TYPE_CHECKING:
    import numpy as np
else:
    np = _OnUse("numpy")

__all__ = ["np"]
