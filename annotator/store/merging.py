"""Merging session files in SQLite: ATTACH each file and combine with INSERT ... SELECT.

Memory stays flat in the number and size of the files: no row is held in Python. The rules are
those of annotator.people.merge (which calls this): nothing is lost and the order of the files does
not matter, so every choice between rows is by their content, never by which file came first.
A chunk is known across files by (golden id, rank); each file's local chunk ids are mapped to
the new file's through a temporary table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from annotator.errors import SessionError
from annotator.store import bulk

MERGED_TABLES = ("goldens", "chunks", "judges", "verdicts", "labels", "gold_labels",
                 "label_conflicts", "splits", "events")
"""The tables a merge fills: their secondary indexes are built after the rows."""

_VERDICT_COLUMNS = ("judge", "verdict", "reason", "p_relevant", "error", "raw_reply", "tokens_in",
                    "tokens_out", "latency_ms", "request_sha256", "repetition", "confidence_note",
                    "requests", "grade", "tokens_cached", "unstable", "batch_id", "epoch")
"""A call's columns besides its chunk and its time: two calls alike in all of them are one."""
_PROBE_CALL_COLUMNS = ("judge", "verdict", "reason", "p_relevant", "error", "raw_reply",
                       "tokens_in", "tokens_out", "latency_ms", "request_sha256")
_LABEL_COLUMNS = ("answer", "blind_verdict", "shown_verdict", "judge", "action", "note",
                  "decision_ms", "reason_wrong", "created_at", "updated_at", "grade", "guideline")
"""A label's stored columns besides its person and chunk."""
_LABEL_ORDER = "json_array(verdict, blind_verdict, shown_verdict, judge, action, note, " \
    "decision_ms, unsure, reason_wrong, created_at, updated_at, grade)"
"""Two labels alike but for their content rank by this: the columns as they were before an answer
was one column (verdict and unsure are generated from it), so a merge picks as it always has."""
_ANSWER_FLAGS = ("verdict", "unsure")
"""The columns generated from ``answer`` that the orders read."""
_GOLDEN_COLUMNS = ("user_input", "reference", "response", "metadata", "content_sha256",
                   "created_at")


def attach(conn: sqlite3.Connection, paths: Sequence[Path]) -> None:
    """Attach the files to merge as s0, s1, ... (outside any transaction; only read)."""
    for i, path in enumerate(paths):
        conn.execute(f"ATTACH DATABASE ? AS s{i}", [str(path)])


def detach(conn: sqlite3.Connection, count: int) -> None:
    """Detach the attached files and drop the merge's temporary tables."""
    for table in ("all_goldens", "chunk_map", "all_judges", "label_people", "all_labels",
                  "label_groups",
                  "shared_labels", "all_splits", "all_guidelines",
                  "all_settings", "all_events", "distinct_events", "ordered_events",
                  "all_probes", "probe_map", "all_checks", "check_map"):
        conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
    for i in range(count):
        conn.execute(f"DETACH DATABASE s{i}")


def newest_verdicts(conn: sqlite3.Connection) -> None:
    """Each epoch's newest verdict (what makes an epoch the latest) read again from the
    verdicts, in one pass over them (after a merge or an import)."""
    conn.executemany("UPDATE epochs SET last_id = ? WHERE judge = ? AND epoch = ?", [
        (newest, judge, epoch) for judge, epoch, newest in conn.execute(
            "SELECT judge, epoch, max(id) FROM verdicts WHERE error IS NULL "
            "AND epoch IS NOT NULL GROUP BY judge, epoch").fetchall()])


def merge_into(conn: sqlite3.Connection, names: Sequence[str]) -> int:
    """Fill the new session behind ``conn`` (migrated, holding no goldens) from the attached
    files, inside the caller's transaction; return how many chunks had different gold labels.
    Raises SessionError, naming the files, where two files cannot both stand."""
    merge = _Merge(conn, len(names), list(names))
    indexes = bulk.drop_indexes(conn, MERGED_TABLES)
    merge.run()
    bulk.build_indexes(conn, indexes)
    return merge.gold_conflicts()


class _Merge:
    """The statements of one merge, table by table."""

    def __init__(self, conn: sqlite3.Connection, files: int, names: list[str]) -> None:
        self.conn = conn
        self.files = files
        self.names = names

    def every(self, table: str, columns: str) -> str:
        """A table's rows from every file, each with its file's number as ``src``."""
        return " UNION ALL ".join(f"SELECT {i} AS src, {columns} FROM s{i}.{table}"
                                  for i in range(self.files))

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(sql, params).fetchone()

    def clash(self, table: str, key: str, content: str, where: str = "1"
              ) -> tuple[Any, int, int] | None:
        """The first ``key`` of a merge table whose ``content`` differs between two files
        (rows ``a`` and ``b`` meeting ``where``), with the two files' numbers; None when none
        does."""
        found: tuple[Any, int, int] | None = self.one(
            f"""SELECT a.{key}, min(a.src, b.src), max(a.src, b.src)
                FROM {table} a JOIN {table} b ON b.{key} = a.{key} AND b.{content} > a.{content}
                WHERE {where} ORDER BY a.{key} LIMIT 1""")
        return found

    def run(self) -> None:
        self.goldens()
        self.chunks()
        self.judges()
        self.examples()
        self.verdicts()
        self.epochs()
        self.labels()
        self.gold()
        self.splits()
        self.settings()
        self.events()
        self.probes()
        self.checks()
        self.guidelines()

    def guidelines(self) -> None:
        """Every version of the guidelines once; a version whose text differs between two files
        stops the merge (their labels would claim one version for two texts)."""
        self.conn.execute(f"CREATE TEMP TABLE all_guidelines AS "
                          f"{self.every('guidelines', '*')}")
        if (clash := self.clash("all_guidelines", "version", "sha256")) is not None:
            version, first, second = clash
            raise SessionError(
                f"Version {version} of the guidelines differs between {self.names[first]} and "
                f"{self.names[second]}: their labels were made under different texts. Merge "
                "sessions whose guidelines were set in one place (set them once, then copy the "
                "file to each person).")
        self.conn.execute("""INSERT INTO guidelines(version, text, sha256, source, set_by, set_at)
                             SELECT version, text, sha256, source, set_by, min(set_at)
                             FROM all_guidelines GROUP BY version""")
        self.conn.execute(f"""INSERT INTO guideline_reads(annotator, version, read_at)
                              SELECT annotator, max(version), max(read_at) FROM (
                                {self.every('guideline_reads', '*')}) GROUP BY annotator""")

    def goldens(self) -> None:
        """One row per golden id (content must agree), ordered by earliest position, then id."""
        self.conn.execute(f"CREATE TEMP TABLE all_goldens AS "
                          f"{self.every('goldens', 'id, position, ' + ', '.join(_GOLDEN_COLUMNS))}")
        self.conn.execute("CREATE INDEX temp.all_goldens_id ON all_goldens(id, created_at)")
        if (clash := self.clash("all_goldens", "id", "content_sha256")) is not None:
            golden_id, first, second = clash
            raise SessionError(
                f"Golden '{golden_id}' differs between {self.names[first]} and "
                f"{self.names[second]} (question, answers, chunks or metadata). Merge only "
                "sessions over the same goldens.")
        columns = ", ".join(_GOLDEN_COLUMNS)
        # The bare columns of a min() aggregate come from the row holding the minimum: the
        # earliest import of the golden (every copy has the same content).
        self.conn.execute(
            f"""INSERT INTO goldens(id, position, {columns})
                SELECT id, row_number() OVER (ORDER BY first, id), {columns} FROM (
                  SELECT g.id, min(g.created_at) AS created_at,
                         {', '.join(f'g.{c}' for c in _GOLDEN_COLUMNS if c != 'created_at')},
                         (SELECT min(x.position) FROM all_goldens x WHERE x.id = g.id) AS first
                  FROM all_goldens g GROUP BY g.id)""")

    def chunks(self) -> None:
        """Every golden's chunks once (a golden's chunks are the same in every file holding it:
        its content hash covers them), numbered by golden position then rank; and each file's
        chunk ids mapped to the new ones."""
        self.conn.execute("CREATE TEMP TABLE all_chunks(golden_id TEXT, rank INTEGER, text TEXT, "
                          "doc_id TEXT, score REAL, PRIMARY KEY (golden_id, rank))")
        for i in range(self.files):
            self.conn.execute(f"""INSERT INTO all_chunks
                                  SELECT c.golden_id, c.rank, c.text, c.doc_id, c.score
                                  FROM s{i}.chunks c WHERE NOT EXISTS (
                                    SELECT 1 FROM all_chunks k WHERE k.golden_id = c.golden_id)""")
        self.conn.execute(
            """INSERT INTO chunks(id, golden_id, rank, text, doc_id, score)
               SELECT row_number() OVER (ORDER BY g.position, c.rank), c.golden_id, c.rank, c.text,
                      c.doc_id, c.score
               FROM all_chunks c JOIN goldens g ON g.id = c.golden_id
               ORDER BY g.position, c.rank""")
        self.conn.execute("DROP TABLE all_chunks")
        self.conn.execute("CREATE TEMP TABLE chunk_map(src INTEGER, old INTEGER, new INTEGER, "
                          "PRIMARY KEY (src, old)) WITHOUT ROWID")
        for i in range(self.files):
            self.conn.execute(f"""INSERT INTO chunk_map SELECT {i}, o.id, n.id FROM s{i}.chunks o
                                  JOIN chunks n ON n.golden_id = o.golden_id AND n.rank = o.rank""")

    def mapped(self, table: str, columns: Sequence[str], where: str = "1") -> str:
        """A chunk table's rows from every file (those meeting ``where``, which may name the
        file as {i}), its chunk id mapped to the new file's."""
        listed = ", ".join(f"t.{c}" for c in columns)
        return " UNION ALL ".join(
            f"SELECT {i} AS src, m.new AS chunk_id, {listed} FROM s{i}.{table} t "
            f"JOIN chunk_map m ON m.src = {i} AND m.old = t.chunk_id "
            f"WHERE {where.format(i=i)}" for i in range(self.files))

    def judges(self) -> None:
        """One definition per judge name; an imported placeholder gives way to a real one; two
        real ones with different settings stop the merge."""
        settings = "json_array(model, base_url, prompt_id, prompt_sha256, parameters, prompt_text)"
        self.conn.execute(f"CREATE TEMP TABLE all_judges AS "
                          f"{self.every('judges', f'*, {settings} AS setup')}")
        if (clash := self.clash("all_judges", "name", "setup",
                                "a.prompt_id <> 'imported' AND b.prompt_id <> 'imported'")
                ) is not None:
            name, first, second = clash
            raise SessionError(
                f"Judge '{name}' has other settings in {self.names[second]} than in "
                f"{self.names[first]}; rename one of them before merging.")
        self.conn.execute(
            """INSERT INTO judges(name, model, base_url, prompt_id, prompt_sha256, parameters,
                                  prompt_text, created_at)
               SELECT name, model, base_url, prompt_id, prompt_sha256, parameters, prompt_text,
                      created_at
               FROM (SELECT *, row_number() OVER (PARTITION BY name ORDER BY
                               prompt_id = 'imported', created_at, setup) AS choice
                     FROM all_judges) WHERE choice = 1 ORDER BY name""")

    def examples(self) -> None:
        """The chunks each judge learned from: a judge's examples are part of its settings (its
        prompt's hash), so every file with that judge holds the same ones."""
        self.conn.execute(
            f"""INSERT OR IGNORE INTO judge_examples(judge, position, golden_id, rank, verdict)
                SELECT judge, position, golden_id, rank, verdict FROM (
                  {self.every('judge_examples', 'judge, position, golden_id, rank, verdict')})
                ORDER BY judge, position""")

    def verdicts(self) -> None:
        """Every distinct judge call once (the same import in two files is one call, at its
        earliest time), oldest first, so the newest verdict stays the one in force."""
        columns = ", ".join(_VERDICT_COLUMNS)
        self.conn.execute(
            f"""INSERT INTO verdicts(chunk_id, {columns}, created_at)
                SELECT chunk_id, {columns}, min(created_at) AS at
                FROM ({self.mapped('verdicts', (*_VERDICT_COLUMNS, 'created_at'))})
                GROUP BY chunk_id, {columns}
                ORDER BY at, chunk_id, {columns}""")

    def epochs(self) -> None:
        """Every judge epoch once (what served it is the same in every file: it is part of the
        epoch's hash), first seen at its earliest time; the newest verdict of each as merged."""
        self.conn.execute(
            f"""INSERT INTO epochs(judge, epoch, model, fingerprint, endpoint, first_at)
                SELECT judge, epoch, model, fingerprint, endpoint, min(first_at) FROM (
                  {self.every('epochs', 'judge, epoch, model, fingerprint, endpoint, first_at')})
                GROUP BY judge, epoch ORDER BY judge, epoch""")
        newest_verdicts(self.conn)

    def checks(self) -> None:
        """Every attention check once by (source, golden id), as first kept (a snapshot); each
        person's answer on a check chunk, the newest where files differ."""
        self.conn.execute(f"CREATE TEMP TABLE all_checks AS "
                          f"{self.every('checks', 'id, source, golden_id, record, created_at')}")
        self.conn.execute(
            """INSERT INTO checks(source, golden_id, record, created_at)
               SELECT source, golden_id, record, created_at FROM (
                 SELECT *, row_number() OVER (PARTITION BY source, golden_id
                   ORDER BY created_at, record) AS choice FROM all_checks)
               WHERE choice = 1 ORDER BY created_at, source, golden_id""")
        self.conn.execute(
            """CREATE TEMP TABLE check_map AS SELECT a.src, a.id AS old, n.id AS new
               FROM all_checks a JOIN checks n ON n.source = a.source
                AND n.golden_id = a.golden_id""")
        columns = "annotator, rank, truth, answer, shown_verdict, note, answered_at"
        read = f"{columns}, verdict, unsure"
        answers = " UNION ALL ".join(
            f"SELECT m.new AS check_id, {', '.join(f't.{c}' for c in read.split(', '))} "
            f"FROM s{i}.check_answers t JOIN check_map m ON m.src = {i} AND m.old = t.check_id"
            for i in range(self.files))
        self.conn.execute(
            f"""INSERT INTO check_answers(check_id, {columns})
                SELECT check_id, {columns} FROM (
                  SELECT *, row_number() OVER (PARTITION BY annotator, check_id, rank
                    ORDER BY answered_at DESC, json_array(verdict, unsure, note) DESC) AS choice
                  FROM ({answers}))
                WHERE choice = 1 ORDER BY check_id, annotator, rank""")

    def probes(self) -> None:
        """Every probe once by (golden, kind, number): files that made it with the same seed
        hold the same text, and two texts for one probe stop the merge; then every distinct
        call on a probe, oldest first."""
        self.conn.execute(f"CREATE TEMP TABLE all_probes AS "
                          f"{self.every('probes', 'id, golden_id, kind, number, text, created_at')}")
        clash = self.one("""SELECT a.golden_id, a.kind, a.number, min(a.src, b.src),
                                   max(a.src, b.src) FROM all_probes a
                            JOIN all_probes b ON b.golden_id = a.golden_id AND b.kind = a.kind
                             AND b.number = a.number AND b.text > a.text
                            ORDER BY a.golden_id, a.kind, a.number LIMIT 1""")
        if clash is not None:
            golden_id, kind, number, first, second = clash
            raise SessionError(
                f"Probe {kind} {number} of golden '{golden_id}' differs between "
                f"{self.names[first]} and {self.names[second]} (made with another --seed); "
                "merge without probes by making them in one file only.")
        self.conn.execute(
            """INSERT INTO probes(golden_id, kind, number, text, created_at)
               SELECT p.golden_id, p.kind, p.number, p.text, min(p.created_at)
               FROM all_probes p JOIN goldens g ON g.id = p.golden_id
               GROUP BY p.golden_id, p.kind, p.number ORDER BY g.position, p.kind, p.number""")
        self.conn.execute(
            """CREATE TEMP TABLE probe_map AS SELECT a.src, a.id AS old, n.id AS new
               FROM all_probes a JOIN probes n ON n.golden_id = a.golden_id
                AND n.kind = a.kind AND n.number = a.number""")
        columns = ", ".join(_PROBE_CALL_COLUMNS)
        listed = ", ".join(f"t.{c}" for c in _PROBE_CALL_COLUMNS)
        calls = " UNION ALL ".join(
            f"SELECT m.new AS probe_id, {listed}, t.created_at FROM s{i}.probe_calls t "
            f"JOIN probe_map m ON m.src = {i} AND m.old = t.probe_id" for i in range(self.files))
        self.conn.execute(
            f"""INSERT INTO probe_calls(probe_id, {columns}, created_at)
                SELECT probe_id, {columns}, min(created_at) AS at FROM ({calls})
                GROUP BY probe_id, {columns} ORDER BY at, probe_id, {columns}""")

    def labels(self) -> None:
        """The label in force per person and chunk (the newest), and every version of a label
        one person gave differently, with the conflicts the files kept already."""
        # Most people's labels are in one file only: those go in as they are. Of the others,
        # labels in one file only go in as they are too, and only the rest are ranked (the
        # newest wins, ties broken by content, whichever file came first).
        people = " UNION ALL ".join(f"SELECT DISTINCT {i} AS src, annotator FROM s{i}.labels"
                                    for i in range(self.files))
        self.conn.execute(f"""CREATE TEMP TABLE label_people AS
                              SELECT annotator, min(src) AS src, count(*) AS files
                              FROM ({people}) GROUP BY annotator""")
        self.conn.execute(
            f"CREATE TEMP TABLE all_labels AS "
            f"""{self.mapped('labels', ('annotator', *_LABEL_COLUMNS, *_ANSWER_FLAGS),
                             "t.annotator IN (SELECT annotator FROM label_people "
                             "WHERE files > 1)")}""")
        columns = ", ".join(_LABEL_COLUMNS)
        alone = self.mapped("labels", ("annotator", *_LABEL_COLUMNS),
                            "t.annotator IN (SELECT annotator FROM label_people "
                            "WHERE files = 1 AND src = {i})")
        # A group's bare columns are its one row when it has one.
        self.conn.execute(f"""CREATE TEMP TABLE label_groups AS
                              SELECT annotator, chunk_id, count(*) AS copies, {columns}
                              FROM all_labels GROUP BY annotator, chunk_id""")
        self.conn.execute("""CREATE TEMP TABLE shared_labels AS SELECT * FROM all_labels
                             WHERE (annotator, chunk_id) IN (
                               SELECT annotator, chunk_id FROM label_groups WHERE copies > 1)""")
        self.conn.execute(
            f"""INSERT INTO labels(annotator, chunk_id, {columns})
                SELECT annotator, chunk_id, {columns} FROM (
                  SELECT annotator, chunk_id, {columns} FROM ({alone})
                  UNION ALL
                  SELECT annotator, chunk_id, {columns} FROM label_groups WHERE copies = 1
                  UNION ALL
                  SELECT annotator, chunk_id, {columns} FROM (
                    SELECT *, row_number() OVER (PARTITION BY annotator, chunk_id ORDER BY
                      updated_at DESC, {_LABEL_ORDER} DESC) AS choice FROM shared_labels)
                  WHERE choice = 1)
                ORDER BY annotator, chunk_id""")
        # A version is (answer, note): unsure and pending both hold no verdict.
        version = "annotator, chunk_id, answer, verdict, unsure, note, updated_at"
        self.conn.execute(
            f"""INSERT INTO label_conflicts(annotator, chunk_id, answer, note, updated_at)
                SELECT annotator, chunk_id, answer, note, updated_at FROM (
                  SELECT DISTINCT {version} FROM (
                    SELECT {', '.join(f'l.{c}' for c in version.split(', '))}
                    FROM shared_labels l JOIN (
                      SELECT annotator, chunk_id FROM shared_labels GROUP BY annotator, chunk_id
                      HAVING count(DISTINCT json_array(answer, note)) > 1) d
                    ON d.annotator = l.annotator AND d.chunk_id = l.chunk_id
                    UNION ALL SELECT {version} FROM (
                      {self.mapped('label_conflicts', ('annotator', 'answer', *_ANSWER_FLAGS,
                                                       'note', 'updated_at'))})))
                ORDER BY annotator, chunk_id, updated_at, json_array(verdict, unsure, note)""")

    def gold(self) -> None:
        """The newest gold label per chunk."""
        columns = ("verdict", "decided_by", "note", "decided_at")
        self.conn.execute(
            f"""INSERT INTO gold_labels(chunk_id, {', '.join(columns)})
                SELECT chunk_id, {', '.join(columns)} FROM (
                  SELECT *, row_number() OVER (PARTITION BY chunk_id ORDER BY decided_at DESC,
                    json_array({', '.join(columns)}) DESC) AS choice
                  FROM ({self.mapped('gold_labels', columns)}))
                WHERE choice = 1 ORDER BY chunk_id""")

    def gold_conflicts(self) -> int:
        """How many chunks had different gold verdicts in the files."""
        return int(self.one(
            f"""SELECT count(*) FROM (SELECT chunk_id FROM
                  ({self.mapped('gold_labels', ('verdict',))})
                GROUP BY chunk_id HAVING count(DISTINCT verdict) > 1)""")[0])

    def splits(self) -> None:
        """One split per golden; a golden that is dev in one file and test in another stops it."""
        self.conn.execute(f"CREATE TEMP TABLE all_splits AS "
                          f"{self.every('splits', 'golden_id, split, seed, created_at')}")
        clash = self.one("""SELECT a.golden_id, a.split, a.src, b.split, b.src FROM all_splits a
                            JOIN all_splits b ON b.golden_id = a.golden_id AND b.split > a.split
                            ORDER BY a.golden_id LIMIT 1""")
        if clash is not None:
            golden_id, first, first_src, second, second_src = clash
            raise SessionError(
                f"Golden '{golden_id}' is in the {first} split in {self.names[first_src]} but in "
                f"the {second} split in {self.names[second_src]}. Merge the files without one of "
                "their splits, or split the merged file again with 'annotator split --replace'.")
        self.conn.execute(
            """INSERT INTO splits(golden_id, split, seed, created_at)
               SELECT golden_id, split, seed, created_at FROM (
                 SELECT *, row_number() OVER (PARTITION BY golden_id ORDER BY
                   json_array(split, seed, created_at)) AS choice FROM all_splits)
               WHERE choice = 1 ORDER BY golden_id""")

    def settings(self) -> None:
        """One value per setting: a judge's price from any file, and the random sample only
        when every file drew the same one. Not the file's identity, nor a running judge's lease."""
        self.conn.execute(
            f"""CREATE TEMP TABLE all_settings AS SELECT * FROM ({self.every('settings', 'key, value')})
                WHERE key <> 'session_id' AND key NOT LIKE 'lease:%'""")
        clash = self.one("""SELECT a.src, b.src FROM all_settings a JOIN all_settings b
                            ON b.key = a.key AND b.value > a.value
                            WHERE a.key = 'random_sample' LIMIT 1""")
        if clash is not None:
            first, second = sorted(clash)
            raise SessionError(
                f"{self.names[first]} and {self.names[second]} hold different random samples of "
                "goldens (annotate --sample); merging them would make neither sample random. "
                "Merge files labelled on the same --sample and --seed.")
        self.conn.execute("""INSERT INTO settings(key, value)
                             SELECT key, min(value) FROM all_settings GROUP BY key ORDER BY key""")

    def events(self) -> None:
        """Every distinct event once, in time order, each undo pointing at the event it undoes.

        An event is known by its content, an undo also by the content of what it undoes. Within
        one millisecond an undo sorts after what it undoes and events keep the order of the log
        they came from (the earliest place over the files: the same whatever their order).
        """
        parts = []
        for i in range(self.files):
            parts.append(
                f"""SELECT e.id, {i} AS src, e.at, e.annotator, e.kind,
                           (SELECT m.new FROM chunk_map m WHERE m.src = {i} AND m.old = e.chunk_id)
                             AS chunk_id, e.golden_id, e.payload, e.undoes,
                           row_number() OVER (ORDER BY e.id) - 1 AS place
                    FROM s{i}.events e""")
        self.conn.execute(f"CREATE TEMP TABLE all_events AS {' UNION ALL '.join(parts)}")
        self.conn.execute("CREATE INDEX temp.all_events_id ON all_events(src, id)")
        identity = "json_array(e.at, e.annotator, e.kind, e.chunk_id, e.golden_id, e.payload)"
        target = "json_array(t.at, t.annotator, t.kind, t.chunk_id, t.golden_id, t.payload)"
        self.conn.execute(
            f"""CREATE TEMP TABLE distinct_events AS
                SELECT at, annotator, kind, chunk_id, golden_id, payload, ident, target,
                       min(place) AS place FROM (
                  SELECT e.*, {identity} AS ident,
                         CASE WHEN t.id IS NULL THEN NULL ELSE {target} END AS target
                  FROM all_events e LEFT JOIN all_events t ON t.src = e.src AND t.id = e.undoes)
                GROUP BY ident, target""")
        offset = int(self.one("SELECT coalesce(max(id), 0) FROM events")[0])
        self.conn.execute(
            f"""CREATE TEMP TABLE ordered_events AS
                SELECT {offset} + row_number() OVER (ORDER BY at, target IS NOT NULL, place, ident,
                                                     target) AS id, * FROM distinct_events""")
        self.conn.execute("CREATE INDEX temp.ordered_events_ident ON ordered_events(ident) "
                          "WHERE target IS NULL")
        # Two files may each hold a different undo of one decision: the first keeps the link.
        self.conn.execute(
            """INSERT INTO events(id, at, annotator, kind, chunk_id, golden_id, payload, undoes)
               SELECT o.id, o.at, o.annotator, o.kind, o.chunk_id, o.golden_id, o.payload,
                      CASE WHEN o.target IS NOT NULL AND o.first_undo = 1 THEN
                        (SELECT d.id FROM ordered_events d
                         WHERE d.ident = o.target AND d.target IS NULL) END
               FROM (SELECT *, row_number() OVER (PARTITION BY target ORDER BY id) AS first_undo
                     FROM ordered_events) o ORDER BY o.id""")
