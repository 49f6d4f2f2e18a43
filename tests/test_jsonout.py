"""The JSON writer: the same document as json.dumps when parsed, indented as indent=2 where no
array is long, and long arrays an item per line."""

from __future__ import annotations

import io
import json
import random
from typing import Any

from annotator.jsonout import LONG, Each, plain, write_json


def written(data: Any) -> str:
    out = io.StringIO()
    write_json(data, out)
    return out.getvalue()


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.choice(["int", "float", "str", "none", "bool"] + ["list", "dict"] * (depth < 4))
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 3, LONG + 7]))]
    if kind == "dict":
        return {rng.choice(["a", "é", "x\"y", "[b]", "🙂", "1"]) + str(i): random_value(rng, depth + 1)
                for i in range(rng.choice([0, 1, 4]))}
    return {"int": rng.randint(-10**12, 10**12), "float": rng.random() * 1e6 - 5e5,
            "str": rng.choice(["", "plain", "ü\u202e\n\t\"", "=1+1", "\u0000"]), "none": None,
            "bool": rng.random() < 0.5}[kind]


def test_every_document_parses_back_to_itself_and_short_ones_match_indent_2() -> None:
    rng = random.Random(5)
    for _ in range(300):
        data = {"top": random_value(rng), "rows": random_value(rng)}
        text = written(data)
        assert json.loads(text) == data
        if LONG + 7 not in _list_lengths(data):
            assert text == json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _list_lengths(value: Any) -> set[int]:
    if isinstance(value, list):
        return {len(value)}.union(*(_list_lengths(v) for v in value))
    if isinstance(value, dict):
        return set().union(*(_list_lengths(v) for v in value.values()))
    return set()


def test_a_long_array_is_an_item_per_line_under_an_indented_top() -> None:
    rows = [{"golden_id": f"g{i}", "human": 0.5, "verdicts": [1, 0]} for i in range(LONG + 1)]
    lines = written({"session": "s.db", "goldens": {"rows": rows}}).splitlines()
    assert lines[:4] == ['{', '  "session": "s.db",', '  "goldens": {', '    "rows": [']
    assert lines[4] == '      {"golden_id": "g0", "human": 0.5, "verdicts": [1, 0]},'
    assert len(lines) == 4 + len(rows) + 3


def test_an_each_is_written_as_the_list_it_makes() -> None:
    for n in (0, 3, LONG + 2):
        data = {"rows": Each(list(range(n)), lambda i: {"i": i, "twice": [i, i]}), "n": n}
        assert json.loads(written(data)) == plain(data) == {
            "rows": [{"i": i, "twice": [i, i]} for i in range(n)], "n": n}
