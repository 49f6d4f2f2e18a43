"""GrowingTable against Textual's own DataTable: the same rows, order, lines and screen."""

from __future__ import annotations

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable

from annotator.tui.widgets.growing_table import GrowingTable


class Twins(App[None]):
    """A GrowingTable beside a DataTable, given the same rows."""

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield GrowingTable(id="ours", cursor_type="row", zebra_stripes=True)
            yield DataTable(id="theirs", cursor_type="row", zebra_stripes=True)

    def tables(self) -> tuple[DataTable[object], DataTable[object]]:
        return self.query_one("#ours", DataTable), self.query_one("#theirs", DataTable)

    def each(self, name: str, *args: object, **kwargs: object) -> None:
        for table in self.tables():
            getattr(table, name)(*args, **kwargs)


def same(app: Twins) -> None:
    ours, theirs = app.tables()
    assert [row.key for row in ours.ordered_rows] == [row.key for row in theirs.ordered_rows]
    assert ours._y_offsets == theirs._y_offsets
    assert ours.virtual_size == theirs.virtual_size
    assert ours.cursor_coordinate == theirs.cursor_coordinate
    lines = [[table.render_line(y).text for y in range(table.size.height)]
             for table in (ours, theirs)]
    assert lines[0] == lines[1] and any("row " in line for line in lines[0])


async def test_a_growing_table_shows_what_a_datatable_shows_while_filled_a_page_at_a_time(
        ) -> None:
    app = Twins()
    async with app.run_test(size=(120, 30)) as pilot:
        app.each("add_columns", "#", "golden", "state")
        for page in range(4):
            for i in range(page * 40, page * 40 + 40):
                # Markup is read as markup in both.
                app.each("add_row", str(i + 1), f"[b]row {i}", "pending", key=f"g{i}")
            await pilot.pause()  # a refresh between pages, as the queue screen's fill has
            same(app)
        app.each("move_cursor", row=150)
        await pilot.pause()
        same(app)
        assert app.tables()[0].get_row_at(150)[1] == "[b]row 150"
        app.each("action_page_up")
        await pilot.pause()
        same(app)
        app.each("clear")  # a new filter: the table starts over
        for i in range(0, 160, 3):
            app.each("add_row", str(i + 1), f"[b]row {i}", "decided", key=f"g{i}")
        await pilot.pause()
        same(app)
        assert app.tables()[0].row_count == 54


async def test_a_growing_table_refuses_what_would_break_its_order() -> None:
    app = Twins()
    async with app.run_test() as pilot:
        ours = app.tables()[0]
        ours.add_columns("a")
        ours.add_row("x", key="x")
        await pilot.pause()
        with pytest.raises(ValueError, match="one-line rows"):
            ours.add_row("y", height=None)
        with pytest.raises(NotImplementedError):
            ours.sort("a")
        with pytest.raises(NotImplementedError):
            ours.remove_row("x")
        assert [row.key.value for row in ours.ordered_rows] == ["x"]


async def test_a_row_drawn_before_its_widths_were_measured_is_drawn_again_after() -> None:
    # The queue screen painted the cursor's row while its page arrived, before the table
    # measured the page's widths (on idle): the row kept the header's narrow widths.
    app = Twins()
    async with app.run_test(size=(120, 10)) as pilot:
        ours = app.tables()[0]
        ours.add_columns("#", "golden", "state")
        await pilot.pause()
        ours.add_row("1", "savings-min-balance", "pending", key="a")
        assert "savings-min-balance" not in ours.render_line(1).text  # drawn too early
        await ours._on_idle(events.Idle())  # the widths measured, nothing else changed
        assert "savings-min-balance pending" in " ".join(ours.render_line(1).text.split())
