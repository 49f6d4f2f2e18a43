"""Hostile structures fed to every reader of untrusted JSON and text: a sentence and exit 2 (or a
clean import), never a traceback. Each case is a valid export with one node replaced by
something hostile: nesting thousands deep (as JSON, or as a JSON string inside a field), a lone
surrogate, a number of thousands of digits, a value of the wrong type at any level."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotator.cli import cli
from annotator.untrusted import MAX_LINE_BYTES, UnsafeJson, parse_json, storable

FIXTURES = Path(__file__).parent / "fixtures"
EXPORTS = ["openinference-spans.json", "mlflow-traces.json", "langfuse-observations.json",
           "langfuse-trace.json", "phoenix-spans.jsonl", "mlflow-search-traces.jsonl"]

DEEP = "[" * 5000 + "]" * 5000
POISON = {"@DEEP@": DEEP, "@DEEPSTR@": json.dumps(DEEP), "@SURROGATE@": '"\\ud800 x"',
          "@HUGE@": "9" * 5000, "@DEEPOBJ@": '{"a":' * 3000 + "1" + "}" * 3000}
"""Raw JSON put where a placeholder string was: what json.dumps cannot write itself."""

hostile: st.SearchStrategy[Any] = st.one_of(
    st.sampled_from(sorted(POISON)),
    st.sampled_from([[], [[1]], {}, {"a": []}, 5, -1, 1.5, None, True, "", "x"]),
    st.text(max_size=20),
)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, child in value.items():
            out += _nodes(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value[:4]):
            out += _nodes(child, (*path, i))
    return out


def _replaced(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    document = copy.deepcopy(document)
    node = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return document


def _write(path: Path, documents: list[Any], lines: bool) -> None:
    text = ("\n".join(json.dumps(d) for d in documents) if lines
            else json.dumps(documents[0]))
    for placeholder, raw in POISON.items():
        text = text.replace(json.dumps(placeholder), raw)
    path.write_text(text, encoding="utf-8")


def _sentence_or_clean(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        repr(result.exception), result.output[-500:])
    assert result.exit_code in (0, 1, 2), result.output[-500:]
    if result.exit_code == 2:
        last = result.output.strip().splitlines()[-1]
        assert last.startswith("Error: ") and len(last) < 2000


@pytest.mark.parametrize("export", EXPORTS)
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_tracer_importer_answers_hostile_exports_with_a_sentence(
        tmp_path: Path, export: str, data: st.DataObject) -> None:
    text = (FIXTURES / export).read_text(encoding="utf-8")
    lines = export.endswith(".jsonl")
    documents = [json.loads(x) for x in text.splitlines() if x.strip()] if lines else [json.loads(text)]
    which = data.draw(st.integers(0, len(documents) - 1))
    path = data.draw(st.sampled_from(_nodes(documents[which])[1:]))
    documents[which] = _replaced(documents[which], path, data.draw(hostile))
    source = tmp_path / f"hostile-{export}"
    _write(source, documents, lines)
    session = tmp_path / "h.db"
    session.unlink(missing_ok=True)
    _sentence_or_clean(["import", str(source), "--session", str(session)])


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=hostile, field=st.sampled_from(["_id", "text", "title"]),
       where=st.sampled_from(["queries", "corpus"]))
def test_import_trec_answers_hostile_json_lines_with_a_sentence(
        tmp_path: Path, value: Any, field: str, where: str) -> None:
    good = {"_id": "q1", "text": "what is a savings account", "title": "t"}
    hostile_line = json.dumps({**good, field: value})
    for placeholder, raw in POISON.items():
        hostile_line = hostile_line.replace(json.dumps(placeholder), raw)
    queries = tmp_path / "queries.jsonl"
    corpus = tmp_path / "corpus.jsonl"
    queries.write_text(hostile_line if where == "queries" else json.dumps(good), encoding="utf-8")
    corpus.write_text(hostile_line.replace("q1", "d1") if where == "corpus" else
                      json.dumps({"_id": "d1", "text": "a doc"}), encoding="utf-8")
    pool = tmp_path / "pool.txt"
    pool.write_text("q1 0 d1\n", encoding="utf-8")
    session = tmp_path / "t.db"
    session.unlink(missing_ok=True)
    _sentence_or_clean(["import-trec", str(session), "--queries", str(queries), "--pool",
                        str(pool), "--corpus", str(corpus)])


def test_a_file_with_no_line_break_stops_at_the_line_limit(tmp_path: Path) -> None:
    endless = tmp_path / "queries.tsv"
    with endless.open("wb") as out:  # a stand-in for /dev/zero, as big as the limit allows
        out.truncate(MAX_LINE_BYTES + 10)
    pool = tmp_path / "pool.txt"
    pool.write_text("q1 0 d1\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["import-trec", str(tmp_path / "t.db"), "--queries",
                                      str(endless), "--pool", str(pool)])
    assert result.exit_code == 2 and "not a text file of this kind" in result.output
    assert not (tmp_path / "t.db").exists()
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_bytes(endless.read_bytes())
    result = CliRunner().invoke(cli, ["import", str(goldens), "--session", str(tmp_path / "g.db")])
    assert result.exit_code == 2 and "line 1" in result.output
    assert not (tmp_path / "g.db").exists()


@given(st.text())
def test_storable_text_always_encodes_and_keeps_every_real_character(text: str) -> None:
    made = storable(text)
    made.encode("utf-8")
    assert len(made) == len(text)
    assert all(a == b for a, b in zip(made, text, strict=True) if not 0xD800 <= ord(a) <= 0xDFFF)


@pytest.mark.parametrize("raw", [DEEP, POISON["@DEEPOBJ@"], "[" + "9" * 5000 + "]",
                                 '["\\udc00"]', '{"a": 1, "a": 2}', "[NaN]"])
def test_parse_json_refuses_what_a_session_cannot_hold(raw: str) -> None:
    with pytest.raises(UnsafeJson):
        parse_json(raw)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_goldens_file_answers_hostile_structures_with_a_sentence(
        tmp_path: Path, data: st.DataObject) -> None:
    lines = (Path(__file__).parent.parent / "sample_sessions" / "team" / "banking.jsonl"
             ).read_text(encoding="utf-8").splitlines()[:3]
    documents = [json.loads(line) for line in lines]
    which = data.draw(st.integers(0, len(documents) - 1))
    path = data.draw(st.sampled_from(_nodes(documents[which])[1:]))
    documents[which] = _replaced(documents[which], path, data.draw(hostile))
    source = tmp_path / "hostile.jsonl"
    _write(source, documents, lines=True)
    session = tmp_path / "g.db"
    session.unlink(missing_ok=True)
    _sentence_or_clean(["import", str(source), "--session", str(session)])


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    """A session whose judge's requests went out as a file, and an engine's results for them."""
    from tests.fake_openai import FakeOpenAI
    from tests.offline_engine import run as engine

    folder = tmp_path_factory.mktemp("results")
    db, requests, results = folder / "s.db", folder / "requests.jsonl", folder / "results.jsonl"
    goldens = Path(__file__).parent.parent / "sample_sessions" / "banking.jsonl"
    assert CliRunner().invoke(cli, ["import", str(goldens), "--session", str(db)]).exit_code == 0
    with FakeOpenAI() as server:
        done = CliRunner().invoke(cli, ["judge", str(db), "--model", "m", "--name", "offline",
                                        "--export-requests", str(requests), "--limit", "6"],
                                  env={"OPENAI_API_KEY": "sk-test",
                                       "OPENAI_BASE_URL": server.base_url})
        assert done.exit_code == 0, done.output
        engine(str(requests), str(results), server)
    return db, [json.loads(line) for line in results.read_text().splitlines()]


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_import_results_answers_hostile_result_lines_with_a_sentence(
        tmp_path: Path, exported: tuple[Path, list[Any]], data: st.DataObject) -> None:
    import shutil

    db, results = exported
    which = data.draw(st.integers(0, len(results) - 1))
    path = data.draw(st.sampled_from(_nodes(results[which])[1:]))
    lines = [*results[:which], _replaced(results[which], path, data.draw(hostile)),
             *results[which + 1:]]
    source = tmp_path / "results.jsonl"
    _write(source, lines, lines=True)
    copy_of = tmp_path / "copy.db"
    copy_of.unlink(missing_ok=True)
    shutil.copy(db, copy_of)
    _sentence_or_clean(["import-results", str(copy_of), str(source)])


def test_the_depth_walk_equals_a_recursive_count_on_random_values() -> None:
    import random

    from annotator.untrusted import _depth

    def reference(value: object) -> int:
        if isinstance(value, dict):
            return 1 + max((reference(v) for v in value.values()), default=0)
        if isinstance(value, list):
            return 1 + max((reference(v) for v in value), default=0)
        return 0

    rng = random.Random(5)

    def made(level: int) -> object:
        kind = rng.random()
        if level > 12 or kind < 0.3:
            return rng.choice([1, "x", None, 2.5, True])
        if kind < 0.65:
            return [made(level + 1) for _ in range(rng.randint(0, 4))]
        return {f"k{i}": made(level + 1) for i in range(rng.randint(0, 4))}

    for _ in range(300):
        value = made(0)
        assert _depth(value) == reference(value)


def test_a_one_line_json_file_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    from annotator.formats import reading

    calls: list[int] = []
    parse = parse_json  # as reading imported it

    def counted(text: str, **kwargs: Any) -> Any:
        calls.append(len(text))
        return parse(text, **kwargs)

    monkeypatch.setattr(reading, "parse_json", counted)
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"user_input": "q", "reference": "r", "retrieved_contexts":
                                ["a " * 1000]}) + "\n", encoding="utf-8")
    assert len(list(reading.read_goldens(path))) == 1
    assert len(calls) == 1
