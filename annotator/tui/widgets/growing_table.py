"""A DataTable that grows at the bottom, a page at a time, without slowing as it grows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import TextType
from textual.widgets import DataTable
from textual.widgets.data_table import CellType, Row, RowKey


class GrowingTable(DataTable[Any]):
    """A DataTable of one-line rows, appended or cleared, never sorted or removed one by one.

    DataTable rebuilds its row order and its line-to-row map over every row whenever a row is
    added, on the next refresh; filled a page at a time, 100,000 rows cost it a rebuild of up to
    100,000 entries per page, and the fill grew as n^1.2. Here both are extended by the rows
    added since they were last read (and start over on a clear), so a fill costs its rows.
    """

    def __init__(self, **kwargs: Any) -> None:
        # Before DataTable's own __init__, which reads the line map.
        self._in_order: list[Row] = []
        self._lines: list[tuple[RowKey, int]] = []
        super().__init__(**kwargs)

    def _caught_up(self) -> None:
        """Extend the order and the lines by the rows added since they were last read."""
        key_at = self._row_locations.get_key
        for index in range(len(self._in_order), self.row_count):
            row = self.rows[key_at(index)]  # type: ignore[index]
            self._in_order.append(row)
            self._lines.append((row.key, 0))

    @property
    def ordered_rows(self) -> list[Row]:
        """The rows, in the order they were added (which is how they appear)."""
        self._caught_up()
        return self._in_order

    @property
    def _y_offsets(self) -> list[tuple[RowKey, int]]:
        self._caught_up()
        return self._lines

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        widths = [column.content_width for column in self.columns.values()]
        super()._update_dimensions(new_rows)
        if widths != [column.content_width for column in self.columns.values()]:
            # DataTable keys its drawn lines by an update count that wider columns do not
            # change: a row drawn before its page's widths were measured (the cursor's row,
            # painted while the page arrived) would keep the header's narrow widths.
            self._update_count += 1

    def add_row(self, *cells: CellType, height: int | None = 1, key: str | None = None,
                label: TextType | None = None) -> RowKey:
        """Add a one-line row at the bottom."""
        if height != 1:
            raise ValueError("A GrowingTable holds one-line rows only.")
        return super().add_row(*cells, height=height, key=key, label=label)

    def clear(self, columns: bool = False) -> GrowingTable:
        """Remove every row (and with ``columns``, every column)."""
        super().clear(columns)
        self._in_order.clear()
        self._lines.clear()
        return self

    def remove_row(self, row_key: RowKey | str) -> None:
        """Not offered: the order kept here holds only while rows are appended."""
        raise NotImplementedError("A GrowingTable only grows or is cleared.")

    def sort(self, *columns: Any, key: Any = None, reverse: bool = False) -> GrowingTable:
        """Not offered: the order kept here holds only while rows are appended."""
        raise NotImplementedError("A GrowingTable keeps the order its rows came in.")
