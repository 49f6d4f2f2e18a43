"""The calibration set and RAGAS annotation exports: what they hold, from a real team file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotator.cli import cli
from annotator.exports import RAGAS_METRIC, RAGAS_PROMPT, ragas_annotation
from annotator.formats import read_goldens
from annotator.stats.metrics import context_precision
from annotator.store.session import Session
from tests.conftest import banking_file, golden, second_opinion, write_lines


def team_file(tmp_path: Path) -> tuple[Path, dict[str, int]]:
    """Banking with bob disagreeing on two chunks, one adjudicated, and a split."""
    path = banking_file(tmp_path / "team.db")
    with Session(path) as s:
        ids, goldens = s.chunk_ids(), s.golden_ids()
        settled, open_ = ids[goldens[0]][2], ids[goldens[0]][3]
        second_opinion(s, "bob", {settled, open_})
        s.set_gold(settled, 1, "carol", "the fee [b]is[/b] part of the answer")
        s.set_splits({g: "dev" if i < 4 else "test" for i, g in enumerate(goldens)}, 3,
                     replace=False)
    return path, {"settled": settled, "open": open_}


def test_the_calibration_set_holds_truth_judges_people_and_split(tmp_path: Path) -> None:
    path, _ = team_file(tmp_path)
    out = tmp_path / "cal.jsonl"
    result = CliRunner().invoke(cli, ["export", str(path), "-f", "calibration", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "Wrote 16 goldens" in result.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    first = records[0]
    assert first["split"] == "dev" and records[-1]["split"] == "test"
    assert first["truth_source"] == ["agreed", "agreed", "gold", None, "agreed"]
    assert first["truth"][2] == 1 and first["truth"][3] is None  # still disputed: no truth
    assert first["gold_decided_by"][2] == "carol"
    assert set(first["human_labels"]) == {"bob", "sample-reviewer"}
    judged = first["judges"]["sample-judge"]
    assert all(v["verdict"] in (0, 1) and v["reason"] for v in judged)
    assert first["context_precision"]["truth"] is None  # a chunk without truth
    second = records[1]
    assert second["context_precision"]["truth"] == context_precision(second["truth"])
    assert second["context_precision"]["sample-judge"] == context_precision(
        [v["verdict"] for v in second["judges"]["sample-judge"]])
    # One person named: their labels are the truth, every chunk of theirs covered.
    alone = CliRunner().invoke(cli, ["export", str(path), "-f", "calibration", "-a", "bob"])
    bob = json.loads(alone.output.splitlines()[0])
    assert bob["truth"] == bob["human_labels"]["bob"] and set(bob["truth_source"]) == {"bob"}


def test_the_ragas_annotation_has_one_sample_per_chunk_corrected_where_people_differ(
        tmp_path: Path) -> None:
    path, chunks = team_file(tmp_path)
    with Session(path) as s:
        data, _ = ragas_annotation(s, "sample-judge")
        verdicts = s.verdicts("sample-judge")
        truth_of = {c: label.verdict for c, label in s.labels("sample-reviewer").items()}
        truth_of[chunks["settled"]] = 1
        del truth_of[chunks["open"]]
        texts = {c.id: c.text for g in s.goldens() for c in g.chunks}
    [samples] = data.values()
    assert list(data) == [RAGAS_METRIC["reference"]]
    assert len(samples) == 79  # every chunk but the one still disputed
    by_context = {sample["prompts"][RAGAS_PROMPT]["prompt_input"]["context"]: sample
                  for sample in samples}
    for chunk_id, right in truth_of.items():
        sample = by_context[texts[chunk_id]]
        prompt = sample["prompts"][RAGAS_PROMPT]
        assert prompt["prompt_output"]["verdict"] == verdicts[chunk_id].verdict
        assert sample["metric_output"] == right and sample["is_accepted"] is True
        if right == verdicts[chunk_id].verdict:
            assert prompt["edited_output"] is None
        else:
            assert prompt["edited_output"]["verdict"] == right
    # The adjudicator's note is the reason of a corrected output; an agreed one keeps the judge's.
    note = "the fee [b]is[/b] part of the answer"
    edited = [s["prompts"][RAGAS_PROMPT]["edited_output"] for s in samples]
    reasons = {e["reason"] for e in edited if e is not None}
    settled = by_context[texts[chunks["settled"]]]["prompts"][RAGAS_PROMPT]
    assert verdicts[chunks["settled"]].verdict == 0  # the judge was wrong where it was settled
    assert settled["edited_output"] == {"reason": note, "verdict": 1}
    assert "A reviewer found this context useful in arriving at the given answer." in reasons


def test_goldens_without_the_answer_are_left_out_of_the_ragas_file(tmp_path: Path) -> None:
    source = write_lines(tmp_path / "g.jsonl", [
        golden(id="a", reference=None, response="r", judge="j",
               judge_verdicts=[{"verdict": 1}, {"verdict": 0}, {"verdict": 0}],
               human_labels={"p": [1, 1, 0]})])
    with Session(tmp_path / "s.db") as s:
        s.import_goldens(read_goldens(source), path=str(source))
        assert ragas_annotation(s, "j") == ({RAGAS_METRIC["reference"]: []}, 0)
        [samples] = ragas_annotation(s, "j", against="response")[0].values()
    assert len(samples) == 3 and samples[1]["prompts"][RAGAS_PROMPT]["edited_output"]["verdict"] == 1
    assert samples[0]["metric_input"]["response"] == "r"


def test_exports_read_a_page_of_goldens_at_a_time_and_give_the_same_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from annotator import exports

    path, _ = team_file(tmp_path)  # two people, gold labels, notes: every kind of truth
    with Session(path) as session:
        whole = (list(exports.calibration_records(session)),
                 ragas_annotation(session, "sample-judge"))
        monkeypatch.setattr(exports, "PAGE", 3)  # 16 goldens: six pages, the last one short
        paged = (list(exports.calibration_records(session)),
                 ragas_annotation(session, "sample-judge"))
    assert paged == whole and len(whole[0]) == 16


def test_a_file_is_made_whole_or_not_at_all(tmp_path: Path) -> None:
    from annotator.files import made_whole

    target = tmp_path / "out.txt"
    target.write_text("old")

    def stopped_half_way() -> None:
        with made_whole(target) as part:
            part.write_text("half")
            raise RuntimeError("stopped")

    with pytest.raises(RuntimeError):
        stopped_half_way()
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with made_whole(target) as part:
        part.write_text("new")
    assert target.read_text() == "new" and len(list(tmp_path.iterdir())) == 1
    with made_whole(tmp_path / "none.txt") as part:
        part.unlink()  # a block that removes its file makes none
    assert not (tmp_path / "none.txt").exists()
    def never_over() -> None:
        with made_whole(target, overwrite=False) as part:
            part.write_text("never")

    with pytest.raises(FileExistsError):
        never_over()
    assert target.read_text() == "new" and len(list(tmp_path.iterdir())) == 1


def test_output_onto_a_device_or_a_named_pipe_is_written_in_place(tmp_path: Path) -> None:
    import os
    import threading

    db = banking_file(tmp_path / "banking.db")
    link = tmp_path / "null"
    link.symlink_to(os.devnull)  # were it renamed over, only this link would be replaced
    done = CliRunner().invoke(cli, ["export", str(db), "--format", "jsonl", "-o", str(link)])
    assert done.exit_code == 0, done.output
    assert link.is_symlink() and Path(os.readlink(link)) == Path(os.devnull)
    assert Path(os.devnull).is_char_device()
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    done = CliRunner().invoke(cli, ["report", str(db), "--format", "json", "-o", str(pipe),
                                    "--bootstrap", "0"])
    reader.join(timeout=120)
    assert done.exit_code == 0, done.output
    assert json.loads(got[0])["agreement"]["n"] == 80
    assert pipe.is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["banking.db", "null", "pipe"]
