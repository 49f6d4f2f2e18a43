"""Merging session files over the same goldens into one team file.

Nothing any file holds is lost and the order of the files does not matter: merging A with B
gives the same file as B with A, and merging a file in again changes nothing. Where one person
labelled a chunk differently in two files, the newest label is in force and every version is
kept and reported as a conflict; different people's labels are never a conflict.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotator.errors import SessionError
from annotator.files import new_session_file
from annotator.store.session import Session

Row = dict[str, Any]


def _key(row: Row, *leave_out: str) -> str:
    """A canonical text form of a row, for sets and a deterministic order.

    Rows of one table list their columns in the same order in every file (one schema), so
    the repr of their values is canonical, and much cheaper than JSON.
    """
    return repr(tuple(v for k, v in row.items() if k not in leave_out))


@dataclass(frozen=True, slots=True)
class LabelConflict:
    """One person's different labels on one chunk, in the files merged."""

    annotator: str
    golden_id: str
    rank: int
    versions: list[tuple[int | None, str | None, str]]
    """(verdict, note, when) of every version, oldest first; the last is in force."""


@dataclass(slots=True)
class MergeSummary:
    """What a merge put together."""

    sources: list[str]
    goldens: int = 0
    judges: list[str] = field(default_factory=list)
    annotators: list[str] = field(default_factory=list)
    labels: int = 0
    conflicts: list[LabelConflict] = field(default_factory=list)
    gold_conflicts: int = 0


def merge_sessions(paths: Sequence[str | Path], output: str | Path) -> MergeSummary:
    """Merge session files into a new one; on any error the new file is not left behind."""
    out = Path(output)
    if out.exists():
        raise SessionError(f"{out} already exists; merge into a new file (it may be one of "
                           "the files you merge, under a new name).")
    tables: list[dict[str, list[Row]]] = []
    read: set[str] = set()
    for path in paths:
        with Session(path, create=False) as session:
            # A golden's chunks are the same in every file holding it (its content hash
            # covers them, and a mismatch stops the merge), so read them once.
            tables.append(session.portable_rows(known_goldens=read))
        read.update(row["id"] for row in tables[-1]["goldens"])
    names = [str(p) for p in paths]
    merged, summary = _merge(tables, names)
    with new_session_file(out), Session(out) as session:
        session.load_rows(merged)
    return summary


def _merge(sources: list[dict[str, list[Row]]], names: list[str]
           ) -> tuple[dict[str, list[Row]], MergeSummary]:
    summary = MergeSummary(names)
    every = {table: [(name, row) for name, tables in zip(names, sources, strict=True)
                     for row in tables[table]] for table in sources[0]}
    goldens = _goldens(every["goldens"])
    summary.goldens = len(goldens)
    judges = _judges(every["judges"])
    summary.judges = sorted(row["name"] for row in judges)
    position = {row["id"]: row["position"] for row in goldens}
    chunks = sorted({_key(row): row for _, row in every["chunks"]}.values(),
                    key=lambda row: (position[row["golden_id"]], row["rank"]))
    labels, conflicts = _labels(every["labels"], every["label_conflicts"])
    summary.labels = sum(row["verdict"] is not None for row in labels)
    summary.annotators = sorted({row["annotator"] for row in labels})
    summary.conflicts = _report(conflicts, labels)
    gold, summary.gold_conflicts = _gold(every["gold_labels"])
    merged = {
        "goldens": goldens,
        "chunks": chunks,
        "judges": judges,
        "verdicts": _calls(every["verdicts"]),
        "labels": labels,
        "gold_labels": gold,
        "label_conflicts": conflicts,
        "splits": _splits(every["splits"]),
        "settings": _settings(every["settings"]),
        "events": _events(sources),
    }
    return merged, summary


def _goldens(rows: list[tuple[str, Row]]) -> list[Row]:
    """One row per golden id (content must agree), ordered by earliest position, then id."""
    by_id: dict[str, tuple[str, Row]] = {}
    first: dict[str, tuple[int, str]] = {}
    for name, row in rows:
        seen = by_id.get(row["id"])
        if seen is not None and seen[1]["content_sha256"] != row["content_sha256"]:
            raise SessionError(
                f"Golden '{row['id']}' differs between {seen[0]} and {name} (question, answers, "
                "chunks or metadata). Merge only sessions over the same goldens.")
        if seen is None or row["created_at"] < seen[1]["created_at"]:
            by_id[row["id"]] = (name, row)
        first[row["id"]] = min(first.get(row["id"], (row["position"], row["id"])),
                               (row["position"], row["id"]))
    order = sorted(by_id, key=lambda golden_id: first[golden_id])
    return [{**by_id[golden_id][1], "position": position}
            for position, golden_id in enumerate(order, 1)]


def _judges(rows: list[tuple[str, Row]]) -> list[Row]:
    """One definition per judge name; an imported placeholder gives way to a real one."""
    by_name: dict[str, tuple[str, Row]] = {}
    for name, row in sorted(rows, key=lambda item: _key(item[1])):
        seen = by_name.get(row["name"])
        if seen is None or seen[1]["prompt_id"] == "imported":
            by_name[row["name"]] = (name, row)
        elif row["prompt_id"] != "imported" and _key(seen[1], "created_at") != _key(
                row, "created_at"):
            raise SessionError(
                f"Judge '{row['name']}' has other settings in {name} than in {seen[0]}; rename "
                "one of them before merging.")
    return [row for _, row in sorted(by_name.values(), key=lambda item: item[1]["name"])]


def _calls(rows: list[tuple[str, Row]]) -> list[Row]:
    """Every distinct judge call once (the same import in two files is one call), oldest first,
    so the newest verdict stays the one in force."""
    calls: dict[str, Row] = {}
    for _, row in rows:
        key = _key(row, "created_at")
        if key not in calls or row["created_at"] < calls[key]["created_at"]:
            calls[key] = row
    return sorted(calls.values(), key=lambda row: (row["created_at"], _key(row)))


def _labels(rows: list[tuple[str, Row]], kept: list[tuple[str, Row]]
            ) -> tuple[list[Row], list[Row]]:
    """The label in force per person and chunk (the newest), and every conflicting version."""
    groups: dict[tuple[str, tuple[str, int]], list[Row]] = {}
    for _, row in rows:
        groups.setdefault((row["annotator"], tuple(row["chunk"])), []).append(row)

    def version(row: Row) -> Row:
        return {"annotator": row["annotator"], "chunk": tuple(row["chunk"]),
                "verdict": row["verdict"], "note": row["note"], "updated_at": row["updated_at"]}

    labels = []
    conflicts = {_key(v): v for v in (version(row) for _, row in kept)}
    for versions in groups.values():
        newest = max(versions, key=lambda row: (row["updated_at"], _key(row)))
        labels.append(newest)
        if len({(row["verdict"], row["note"]) for row in versions}) > 1:
            for row in versions:
                conflicts[_key(version(row))] = version(row)
    return (sorted(labels, key=lambda row: (row["annotator"], row["chunk"])),
            sorted(conflicts.values(), key=_key))


def _report(conflicts: list[Row], labels: list[Row]) -> list[LabelConflict]:
    in_force = {(row["annotator"], tuple(row["chunk"])): row for row in labels}
    grouped: dict[tuple[str, tuple[str, int]], set[tuple[Any, ...]]] = {}
    for row in conflicts:
        grouped.setdefault((row["annotator"], tuple(row["chunk"])), set()).add(
            (row["verdict"], row["note"], row["updated_at"]))
    out = []
    for (annotator, (golden_id, rank)), versions in sorted(grouped.items()):
        label = in_force[(annotator, (golden_id, rank))]
        versions.add((label["verdict"], label["note"], label["updated_at"]))
        out.append(LabelConflict(annotator, golden_id, rank,
                                 sorted(versions, key=lambda v: (v[2], json.dumps(v)))))
    return out


def _gold(rows: list[tuple[str, Row]]) -> tuple[list[Row], int]:
    """The newest gold label per chunk, and how many chunks had different gold verdicts."""
    groups: dict[tuple[str, int], list[Row]] = {}
    for _, row in rows:
        groups.setdefault(tuple(row["chunk"]), []).append(row)
    differing = sum(len({row["verdict"] for row in group}) > 1 for group in groups.values())
    return ([max(group, key=lambda row: (row["decided_at"], _key(row)))
             for _, group in sorted(groups.items())], differing)


def _one_each(rows: list[tuple[str, Row]], key: str, value: str,
              refuse: Callable[[Row, str, Row, str], str | None]) -> list[Row]:
    """One row per ``key``, the same whichever file comes first; ``refuse`` names why two
    files' rows with different ``value`` cannot both stand (None: keep one)."""
    kept: dict[Any, tuple[str, Row]] = {}
    for name, row in sorted(rows, key=lambda item: _key(item[1])):
        seen = kept.get(row[key])
        if (seen is not None and seen[1][value] != row[value]
                and (why := refuse(seen[1], seen[0], row, name)) is not None):
            raise SessionError(why)
        kept.setdefault(row[key], (name, row))
    return [row for _, row in sorted(kept.values(), key=lambda item: item[1][key])]


def _settings(rows: list[tuple[str, Row]]) -> list[Row]:
    """One value per setting: a judge's price from any file, and the random sample only when
    every file drew the same one."""
    def refuse(first: Row, first_file: str, row: Row, file: str) -> str | None:
        if row["key"] != "random_sample":
            return None
        return (f"{first_file} and {file} hold different random samples of goldens (annotate "
                "--sample); merging them would make neither sample random. Merge files labelled "
                "on the same --sample and --seed.")
    return _one_each(rows, "key", "value", refuse)


def _splits(rows: list[tuple[str, Row]]) -> list[Row]:
    """One split per golden; a golden that is dev in one file and test in another is an error."""
    def refuse(first: Row, first_file: str, row: Row, file: str) -> str:
        return (f"Golden '{row['golden_id']}' is in the {first['split']} split in {first_file} "
                f"but in the {row['split']} split in {file}. Merge the files without one of "
                "their splits, or split the merged file again with 'annotator split --replace'.")
    return _one_each(rows, "golden_id", "split", refuse)


def _events(sources: list[dict[str, list[Row]]]) -> list[Row]:
    """Every distinct event once, in time order, each undo pointing at the event it undoes."""
    events: dict[str, Row] = {}
    undoes: dict[str, str] = {}
    place: dict[str, int] = {}
    for tables in sources:
        keys: list[str] = []
        for position, row in enumerate(tables["events"]):
            base = {k: v for k, v in row.items() if k != "undoes"}
            target = None if row["undoes"] is None else keys[row["undoes"]]
            key = _key({**base, "undoes": target})
            keys.append(key)
            events[key] = base
            place[key] = min(place.get(key, position), position)
            if target is not None:
                undoes[key] = target
    # Within one millisecond, an undo sorts after what it undoes and events keep the order of
    # the log they came from (the earliest position over the files: the same whatever their
    # order), so a person's latest decision stays the latest.
    order = sorted(events, key=lambda key: (events[key]["at"], key in undoes, place[key], key))
    index = {key: i for i, key in enumerate(order)}
    out, undone = [], set()
    for key in order:
        target = undoes.get(key)
        # Two files may each hold a different undo of one decision: the first keeps the link.
        link = index[target] if target is not None and target not in undone else None
        if link is not None:
            undone.add(target)
        out.append({**events[key], "undoes": link})
    return out
