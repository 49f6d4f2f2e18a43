"""JSON written for people and at speed: indented at the top, long arrays an item per line.

``json.dumps(indent=2)`` runs the pure-Python encoder, a third of a large report's time. Here
the document's structure is indented as ``indent=2`` would, and each array longer than
``LONG`` items is written an item per line by the C encoder: the same JSON when parsed, still
readable at the top, and a 100,000-golden array costs what the C encoder costs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, Generic, TypeVar

T = TypeVar("T")

LONG = 50
"""Arrays longer than this are written an item per line, each item on one line."""

_compact = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode


class Each(Generic[T]):
    """An array whose items are made as they are written (``make`` of each of ``items``): a
    large table is never held twice, once as objects and once as JSON-ready dicts."""

    def __init__(self, items: Sequence[T], make: Callable[[T], Any]) -> None:
        self.items = items
        self.make = make

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Any]:
        return (self.make(item) for item in self.items)


def plain(data: Any) -> Any:
    """The same data with every ``Each`` made into a list (for json.dumps and for tests)."""
    if isinstance(data, dict):
        return {key: plain(value) for key, value in data.items()}
    if isinstance(data, list | tuple | Each):
        return [plain(value) for value in data]
    return data


def write_json(data: Any, out: IO[str]) -> None:
    """Write ``data`` as an indented JSON document (with a final newline)."""
    _write(data, out, 0)
    out.write("\n")


def _write(value: Any, out: IO[str], level: int) -> None:
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(value, dict) and value:
        out.write("{")
        for i, (key, item) in enumerate(value.items()):
            out.write(("," if i else "") + "\n" + inner + _compact(str(key)) + ": ")
            _write(item, out, level + 1)
        out.write("\n" + pad + "}")
    elif isinstance(value, list | tuple | Each) and len(value) > LONG:
        out.write("[")
        for i, item in enumerate(value):  # item by item: the array's text is never whole
            out.write(("," if i else "") + "\n" + inner + _compact(item))
        out.write("\n" + pad + "]")
    elif isinstance(value, list | tuple | Each) and len(value):
        out.write("[")
        for i, item in enumerate(value):
            out.write(("," if i else "") + "\n" + inner)
            _write(item, out, level + 1)
        out.write("\n" + pad + "]")
    else:
        out.write("[]" if isinstance(value, Each) else _compact(value))
