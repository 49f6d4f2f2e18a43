"""Session: the one facade over a session, and the only module that writes SQL.

A session is one SQLite file (WAL mode, foreign keys on), or one PostgreSQL database (a URL;
store/postgres.py speaks the same SQL there), holding the goldens, every judge's verdicts,
every annotator's labels and an append-only event log. Every write happens in a ``BEGIN
IMMEDIATE`` transaction (on PostgreSQL, one holding the session's write lock) that is committed
before the method returns, so two people (two processes, or hosts) can label the same session
at once and a decision is stored when a caller sees it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import operator
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from annotator.errors import NotHeld, NotSaved, ReadStopped, SessionError
from annotator.files import made_whole, new_session_file
from annotator.models import (
    DESIGNS,
    GOLD_FIELDS,
    GOLDENS_SUFFIXES,
    MARK_FIELDS,
    Action,
    CheckRecord,
    Chunk,
    Golden,
    GoldenRecord,
    GoldLabel,
    Guideline,
    ImportSummary,
    Judge,
    JudgeVerdict,
    Label,
    MergeFacts,
    Price,
    Probe,
    ReviewTotals,
    Scale,
    StoredVerdict,
    Undone,
    is_candidate,
)
from annotator.place import is_url, place_name, shown
from annotator.redact import scrub, scrubbed
from annotator.store import bulk, epochs, merging, schema, versions
from annotator.store.importer import Importer
from annotator.store.rows import columns, field_names
from annotator.untrusted import storable
from annotator.verdict import Answer, checked, from_stored, kind_of, word_of_state

if TYPE_CHECKING:
    import numpy as np
    from sqlite_utils import Database

    from annotator.columns import ChunkFrame, JudgeColumns, LabelColumns
    from annotator.store import postgres

BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process's write to finish before giving up."""

_LABEL_COLUMNS = columns(Label)
CHECK_ANSWER_COLUMNS = ("truth", "answer", "unsure", "shown_verdict", "note", "answered_at",
                        "distractor")
"""A person's answer on one rank of a check, as the session JSONL carries it."""
_CHECK_ANSWER_SELECT = ", ".join("verdict AS answer" if c == "answer" else c
                                 for c in CHECK_ANSWER_COLUMNS)
"""CHECK_ANSWER_COLUMNS read from the table: files carry the answer as a verdict and a flag."""


def _marks(label: Label) -> dict[str, Any] | None:
    """A label's MARK_FIELDS that are set (reason_wrong only when marked); None for a label a
    goldens file brought in, which holds no mark of a person's beyond its answer (its times
    are the import's, and an import stamps them anew)."""
    if (label.action == "import" and not label.reason_wrong and label.judge is None
            and label.grade is None):
        return None
    out = {key: getattr(label, key) for key in MARK_FIELDS}
    out["reason_wrong"] = bool(label.reason_wrong) or None
    return {key: value for key, value in out.items() if value is not None}


def _gold_fields(gold: GoldLabel) -> dict[str, Any]:
    """A gold label's GOLD_FIELDS that are set."""
    return {key: value for key in GOLD_FIELDS if (value := getattr(gold, key)) is not None}
_DECISION_FIELDS: dict[str, Any] = {
    "answer": None, "action": None, "blind_verdict": None, "shown_verdict": None, "judge": None,
    "decision_ms": None, "reason_wrong": 0, "grade": None, "guideline": None}
"""The label fields a decision sets and an undo restores, with their value on a pending chunk
(a note is not a decision); an event keeps them as its decision's before and after (the answer
as its kind's word: verdict.word_of_state reads it, and events written before the word)."""

ANSWERED = "(l.answer IS NOT NULL)"
"""A label (as ``l``) the person has answered: a verdict, or unsure. Progress counts these."""


_JUDGE_REST = "model, base_url, prompt_id, prompt_sha256, parameters, created_at, prompt_text"
"""A judges row but its name, as rename_judge copies it."""
TRUST_FIELDS = frozenset({
    "truth", "confidence", "alpha", "delta", "threshold", "dev_chunks", "dev_kept",
    "test_chunks", "test_kept", "test_agreement", "test_low", "test_high"})

ALIGN_RUN_FIELDS = frozenset({
    "incumbent_kappa", "best_candidate", "test_chunks", "test_kappa", "incumbent_test_kappa",
    "test_difference", "test_low", "test_high", "outcome", "registered_as", "prompt_path",
    "calls", "tokens_in", "tokens_out", "cost", "finished_at"})
ALIGN_CANDIDATE_FIELDS = frozenset({
    "reply", "rationale", "prompt", "error", "validation_kappa", "validation_agreement",
    "validation_chunks", "calls", "tokens_in", "tokens_out"})


def _scrubbed_call(call: dict[str, Any]) -> dict[str, Any]:
    """A call with any secret a server echoed hidden in its error and reply, and any lone
    surrogate in its text (a model may reply one) made storable: every path that stores calls,
    a live run, a batch's results and an imported results file, passes here."""
    texts = {key: value for key in ("error", "raw_reply", "reason")
             if isinstance(value := call.get(key), str) and value}
    if not texts:
        return call
    return {**call, **{key: storable(scrub(value)) for key, value in texts.items()}}


def now() -> str:
    """The current UTC time as an ISO 8601 string with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


_PROBE_CALL_COLUMNS = ("verdict", "reason", "p_relevant", "error", "raw_reply", "tokens_in",
                       "tokens_out", "latency_ms", "request_sha256")
"""What a call on a probe keeps (see record_probe_calls)."""


def damaged(error: BaseException, path: Path | None = None) -> str | None:
    """A sentence for SQLite finding a session file corrupt at any point of a command (a damaged
    page is met only when read), naming ``path`` or else the files this process opened; None
    for other errors."""
    if not isinstance(error, sqlite3.DatabaseError):
        return None
    text = str(error).lower()
    if "malformed" not in text and "corrupt" not in text and "not a database" not in text:
        return None
    names = str(path) if path else " or ".join(sorted(map(str, Session.opened))) or "a session file"
    return (f"{names} is damaged ({error}): a part of the file cannot be read. Restore it from a "
            "copy (or a merge of its people's files); 'sqlite3 FILE .recover' can save what is "
            "left of it into a new file.")


def read_only_place(path: Path) -> str | None:
    """What makes a session's place take no writes: the file itself, or its folder (where
    SQLite must create the -wal and -shm files); None when both take writes."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.exists() and not os.access(path, os.W_OK):
        return f"the file {path}"
    if not os.access(folder, os.W_OK):
        return f"the folder {folder.resolve()}"
    return None


def exists(place: str | Path) -> bool:
    """Whether a session is there: a file, or a database a session was laid out in."""
    if not is_url(place):
        return Path(place).exists()
    from annotator.store import postgres

    return not postgres.is_empty(str(place))


@contextmanager
def new_session(place: str | Path, keep: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """Around making a session: if the block fails, what it made is gone again unless
    ``keep()`` says it holds work (files.new_session_file for a file; a database it laid out
    is emptied again), and a session that existed before is never touched."""
    if not is_url(place):
        with new_session_file(place, keep):
            yield
        return
    from annotator.store import postgres

    empty = postgres.is_empty(str(place))
    try:
        yield
    except BaseException:
        if empty and not keep():
            postgres.empty_again(str(place))
        raise


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that never writes. With a -wal file beside it SQLite reads the log as
    usual; with none (a place that takes no writes, so no writer can start one) the file is
    read as it stands (``immutable``): nothing can change it meanwhile."""
    uri = path.resolve().as_uri()
    if Path(f"{path}-wal").exists():
        return sqlite3.connect(f"{uri}?mode=ro", uri=True)
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True)


class Session:
    """One session file. Open it, use it, close it (or use it as a context manager)."""

    opened: set[Path] = set()  # noqa: RUF012  (one set for the process, on purpose)
    """Every session file this process opened, for a sentence when one is found damaged."""
    upgrading: Callable[[str], None] | None = None
    """Told before a file written by an older release is upgraded (the CLI says so: on a
    million labels it takes seconds, once)."""

    def __init__(self, path: str | Path, *, create: bool = True,
                 busy_timeout: float = BUSY_TIMEOUT_S, reads_only: bool = False) -> None:
        """Open (or with ``create``, make) a session file. A command that ``reads_only`` still
        opens a file in a read-only place (a read-only folder, file or disk), for reading."""
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._wrote = False
        self._depth = 0
        self._last_event: Any = None
        self._definitions: dict[str, tuple[str | None, dict[str, Any]]] = {}
        """Judge name -> (configured model, its definition as store/epochs.py hashes it)."""
        self._epochs_known: dict[tuple[str, str | None, str | None], str] = {}
        self._chosen_epochs: dict[str, str] = {}
        """Judge name -> the epoch read as its verdicts (``epochs_read``; others: the latest)."""
        self.dialect = "sqlite"
        """Which store holds the session: "sqlite" (a file) or "postgresql" (a database)."""
        if is_url(path):
            self._open_postgres(str(path), create)
            return
        exists = self.path.exists()
        if not create and not exists:
            raise SessionError(
                f"There is no session file at {self.path}. Create one with "
                f"'annotator import GOLDENS.jsonl --session {self.path}'."
            )
        place = read_only_place(self.path)
        self.read_only = place is not None and reads_only and exists
        """Opened for reading only, because the place it is in takes no writes."""
        if place is not None and not self.read_only:
            if not exists:
                raise SessionError(f"{place} is read-only, so the session {self.path} cannot "
                                   "be created there. Give a path in a writable folder.")
            raise SessionError(
                f"{place} is read-only, so {self.path} cannot be written there (SQLite keeps "
                "a -wal file beside the session). Work on a copy in a writable folder: "
                f"'annotator copy {self.path} NEW.db'; commands that only read (report, "
                "judges, info, export) work on it where it is.")
        try:
            conn = _connect_read_only(self.path) if self.read_only else sqlite3.connect(
                str(self.path), timeout=busy_timeout)
            try:
                self._check_ours(conn, create)
            except SessionError:
                conn.close()
                raise
            self.conn: sqlite3.Connection | postgres.Connection = conn
            Session.opened.add(self.path)
            conn.execute("PRAGMA foreign_keys = ON")
            if not self.read_only and conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = wal")
            applied = self._applied(conn)
            if not applied:  # a new file: the whole schema at once (store/schema.py)
                with self._write():
                    schema.create(conn)
            elif applied != set(versions.NAMES) and self.read_only:
                raise SessionError(
                    f"{self.path} was written by an older cp-annotator and needs an upgrade, "
                    f"which writes to it, but {place} is read-only. Copy it to a writable "
                    f"place ('annotator copy {self.path} NEW.db') and open the copy.")
            elif applied != set(versions.NAMES):
                from annotator.store.migrations import migrations

                if Session.upgrading is not None:
                    Session.upgrading(self.where)
                with self._write():
                    migrations.apply(self.db)
        except sqlite3.DatabaseError as error:
            sentence = damaged(error, self.path)
            if sentence is not None and "not a database" not in str(error):
                raise SessionError(sentence) from None
            if isinstance(error, sqlite3.OperationalError) and _storage_failure(error):
                raise self._not_saved(error) from None
            if self.path.suffix.lower() in GOLDENS_SUFFIXES:
                raise SessionError(
                    f"{self.path} is a goldens file, not a session. Import it with 'annotator "
                    f"import {self.path} --session S.db' and give S.db here, or open it with "
                    f"'annotator annotate {self.path}'.") from None
            raise SessionError(
                f"{self.path} is not a session file this tool can open ({error}). A session file "
                "is made by 'annotator import'."
            ) from None

    def _open_postgres(self, url: str, create: bool) -> None:
        """Open (or with ``create``, lay out) a session in a PostgreSQL database: the same
        checks as a file's, one sentence each, nothing written before they pass."""
        from annotator.store import postgres

        self.path = Path(shown(url))  # no password in it; sentences name ``where``
        self._url = url
        self.read_only = False
        self.dialect = "postgresql"
        conn = postgres.Connection(url, connect_timeout=min(self.busy_timeout, 10),
                                   busy_timeout=self.busy_timeout)
        self.conn = conn
        try:
            tables = conn.tables()
            if not tables and not create:
                raise SessionError(f"{self.where} holds no session yet. Make one with "
                                   f"'annotator import GOLDENS.jsonl --session URL' or "
                                   f"'annotator copy S.db URL'.")
            if not tables:
                with self._write():
                    schema.create(conn, postgres.schema_statements())
                return
            if schema.MIGRATIONS_TABLE not in tables:  # sqlite-utils' name, on both stores
                shown_tables = ", ".join(tables[:8]) + (
                    f" and {len(tables) - 8} more" if len(tables) > 8 else "")
                raise SessionError(
                    f"{self.where} is a PostgreSQL database of another application (its tables: "
                    f"{shown_tables}), not a cp-annotator session; it was left as it is. Give "
                    "an empty database of its own.")
            applied = self._applied(conn)
            if newer := sorted(applied - set(versions.NAMES)):
                raise SessionError(
                    f"{self.where} was written by a newer cp-annotator (its schema has "
                    f"{', '.join(newer)}, which this version does not know); it was left as it "
                    "is. Upgrade: pip install --upgrade cp-annotator.")
            if applied != set(versions.NAMES):
                from annotator.store import transfer

                if Session.upgrading is not None:
                    Session.upgrading(self.where)
                with self._write():
                    transfer.relay(self, postgres.schema_statements())
        except BaseException:
            conn.close()
            raise

    @staticmethod
    def _applied(conn: sqlite3.Connection | postgres.Connection) -> set[str]:
        """The migrations the file has had (none for a new file). The table itself is read
        (NOT INDEXED): its few rows are the first page a damaged file shows on."""
        try:
            return {row[0] for row in conn.execute(
                "SELECT name FROM _sqlite_migrations NOT INDEXED WHERE migration_set = ?",
                [versions.MIGRATION_SET])}
        except sqlite3.OperationalError:  # no such table: a new file
            return set()

    @cached_property
    def db(self) -> Database:
        """The file through sqlite-utils (migrations, and the tests' schema checks); imported on
        first use, since reading and writing go through ``conn``."""
        import sqlite_utils

        return sqlite_utils.Database(self.sqlite)

    @property
    def sqlite(self) -> sqlite3.Connection:
        """The file's own connection, for what only SQLite has (its backup API, ATTACH,
        sqlite-utils); a PostgreSQL session reaches those through a file copy instead."""
        if not isinstance(self.conn, sqlite3.Connection):
            raise SessionError(f"{self.where} is a PostgreSQL session; this works on a session "
                               f"file: 'annotator copy {self.where} S.db' makes one.")
        return self.conn

    @property
    def place(self) -> Path | str:
        """What opens the session again (a URL with its password: never to be printed)."""
        return self._url if self.dialect == "postgresql" else self.path

    @property
    def name(self) -> str:
        """A short name for titles: the file's name, or the database's."""
        return place_name(self.place)

    @property
    def where(self) -> str:
        """The session's place as it may be printed: a file's path, or a URL without its
        password."""
        return shown(self._url) if self.dialect == "postgresql" else str(self.path)

    @property
    def closed(self) -> bool:
        """Whether the session was closed."""
        if isinstance(self.conn, sqlite3.Connection):
            try:
                self.conn.total_changes  # noqa: B018  (raises on a closed connection)
            except sqlite3.ProgrammingError:
                return True
            return False
        return self.conn.closed

    def _check_ours(self, conn: sqlite3.Connection, create: bool) -> None:
        """Refuse, before anything is written, a SQLite file that is not a session (another
        tool's database), and an empty file unless this command creates sessions."""
        tables = sorted(row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
        if not tables:
            if create:
                return
            raise SessionError(f"{self.path} is empty, not a session yet. Make one with "
                               f"'annotator import GOLDENS.jsonl --session {self.path}'.")
        if "_sqlite_migrations" in tables:
            applied = self._applied(conn)
            if applied:
                if newer := sorted(applied - set(versions.NAMES)):
                    raise SessionError(
                        f"{self.path} was written by a newer cp-annotator (its schema has "
                        f"{', '.join(newer)}, which this version does not know); it was left as "
                        "it is. Upgrade: pip install --upgrade cp-annotator.")
                return
        shown = ", ".join(tables[:8]) + (f" and {len(tables) - 8} more" if len(tables) > 8 else "")
        raise SessionError(f"{self.path} is a SQLite database but not a cp-annotator session "
                           f"(its tables: {shown}); it was left as it is. A session file is made "
                           "by 'annotator import GOLDENS.jsonl --session NEW.db'.")

    # -- plumbing -------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the file; after writes, fold the write-ahead log into it first, so a plain copy
        of the file taken afterwards holds everything (another connection still open may keep
        part of the log: 'annotator copy' is the safe copy)."""
        if self._wrote and self.dialect == "sqlite":
            # Busy with another connection: its own close checkpoints instead.
            with contextlib.suppress(sqlite3.OperationalError):
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.close()

    def copy_to(self, target: str | Path,
                advance: Callable[[str, int], None] | None = None) -> dict[str, int] | None:
        """Write a consistent copy of the session, its log included, to a new file (SQLite's
        backup API: safe while others use the session) or an empty PostgreSQL database; the
        copy appears whole or not at all. Between stores, each table's rows are counted on both
        sides (store/transfer.py): those counts are returned."""
        if self.dialect == "postgresql" or is_url(target):
            return self._transfer(target, advance)
        self._backup(Path(target))
        return None

    def _transfer(self, target: str | Path, advance: Callable[[str, int], None] | None
                  ) -> dict[str, int]:
        from annotator.store import transfer

        if is_url(target):
            if exists(target):
                raise SessionError(f"{shown(target)} already holds tables; copy into an empty "
                                   "database ('createdb NAME' makes one).")
            with new_session(target), Session(target) as out:
                return transfer.copy_rows(self, out, advance)
        path = Path(target)
        if path.exists():
            raise SessionError(f"{path} already exists; copy to a new file, or remove it first.")
        try:
            with made_whole(path, overwrite=False) as tmp, Session(tmp) as out:
                return transfer.copy_rows(self, out, advance)
        except FileExistsError:  # it appeared meanwhile: never overwritten
            raise SessionError(f"{path} already exists; copy to a new file, or remove it "
                               "first.") from None

    def ids_after_copy(self) -> None:
        """After rows came with their ids: PostgreSQL's id sequences move past them (SQLite
        takes the next id from the rows themselves)."""
        if not isinstance(self.conn, sqlite3.Connection):
            self.conn.reset_sequences()

    def _backup(self, target: Path) -> None:
        taken = SessionError(f"{target} already exists; copy to a new file, or remove it first.")
        if target.exists():
            raise taken
        try:
            with made_whole(target, overwrite=False) as tmp:
                out = sqlite3.connect(tmp)
                try:
                    self.sqlite.backup(out)
                    out.execute("PRAGMA journal_mode = WAL")
                finally:
                    out.close()
        except FileExistsError:  # it appeared meanwhile: never overwritten
            raise taken from None

    def another(self) -> Session:
        """A second connection to the same file, for a worker thread (a sqlite3 connection
        stays in the thread that opened it)."""
        return Session(self.place, create=False, busy_timeout=self.busy_timeout)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self, *, immediate: bool = True) -> Iterator[None]:
        """One write transaction that takes the write lock at once (no deadlock on upgrade);
        not ``immediate`` for a merge, whose attached files must only be read (an IMMEDIATE
        transaction would lock every one of them for writing).

        A write the file cannot take (busy past the timeout, a full disk, a read-only file, an
        I/O error) is rolled back and raised as NotSaved, a sentence saying which and what to do.
        """
        conn = self.conn
        self._wrote = True
        if self._depth:  # inside transaction(): one transaction for everything in it
            yield
            return
        try:
            conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        except sqlite3.OperationalError as error:
            raise self._not_saved(error) from None
        try:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            conn.execute("COMMIT")
        except BaseException as error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(error, sqlite3.OperationalError) and _storage_failure(error):
                raise self._not_saved(error) from None
            raise

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads inside see the session as it was when the block began, whatever others write
        meanwhile (a read transaction: SQLite's in WAL mode, PostgreSQL's REPEATABLE READ)."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """Everything written inside is one transaction: all of it is stored, or none (an
        import of a results file)."""
        return self._write()

    def _not_saved(self, error: sqlite3.OperationalError) -> Exception:
        text = str(error).lower()
        busy = "locked" in text or "busy" in text
        if busy:
            why = (f"is busy: another command has been writing to it for over "
                   f"{self.busy_timeout:g} s (a long import?)")
            then = "Try again in a moment."
        elif "full" in text:
            why = "is on a full disk"
            then = "Free some space on that disk and try again."
        elif "readonly" in text or "read-only" in text:
            why = "is read-only (the file, or its folder, which must hold its -wal file)"
            then = "Make both writable, or work on a copy ('annotator copy')."
        elif "disk i/o" in text:
            why = "could not be written (a disk I/O error: is its disk full?)"
            then = "Check the disk, then try again."
        else:
            return error
        return NotSaved(f"{self.where} {why}, so nothing was saved. {then}", busy=busy)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        cursor = self.conn.execute(sql, params)
        cursor.row_factory = sqlite3.Row
        return cursor.fetchall()

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def _setting(self, key: str) -> Any:
        """A setting's value decoded from JSON, or None when it was never set."""
        value = self._scalar("SELECT value FROM settings WHERE key = ?", [key])
        return None if value is None else json.loads(value)

    def _set_setting(self, key: str, value: Any) -> None:
        """Store a setting as JSON (inside the caller's write transaction)."""
        self.conn.execute(
            "INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
            "value = excluded.value", [key, json.dumps(value)])

    def _event(
        self,
        kind: str,
        *,
        annotator: str | None = None,
        chunk_id: int | None = None,
        golden_id: str | None = None,
        payload: dict[str, Any] | None = None,
        undoes: int | None = None,
    ) -> None:
        sql = ("INSERT INTO events(at, annotator, kind, chunk_id, golden_id, payload, undoes) "
               "VALUES (?, ?, ?, ?, ?, ?, ?)")
        values = (now(), annotator, kind, chunk_id, golden_id,
                  json.dumps(payload or {}, ensure_ascii=False), undoes)
        # On PostgreSQL the event goes with the transaction's next statement, or its COMMIT
        # (one round trip less a key); its id is known once that has run.
        self._last_event = (self.conn.execute(sql, values) if isinstance(
            self.conn, sqlite3.Connection) else self.conn.defer(sql, values))

    @property
    def last_event_id(self) -> int:
        """The id of the event this connection wrote last (see ``review_totals``), once its
        transaction is committed."""
        return 0 if self._last_event is None else int(self._last_event.lastrowid or 0)

    # -- reading --------------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """A random id given to the session when its file was created."""
        return str(self._scalar("SELECT value FROM settings WHERE key = 'session_id'"))

    def count_goldens(self) -> int:
        """How many goldens the session holds."""
        return int(self._scalar("SELECT count(*) FROM goldens"))

    def count_chunks(self) -> int:
        """How many chunks the session holds."""
        return int(self._scalar("SELECT count(*) FROM chunks"))

    def golden_ids(self) -> list[str]:
        """Every golden id, in import order."""
        return [row[0] for row in self.conn.execute("SELECT id FROM goldens ORDER BY position")]

    def content_hashes(self) -> dict[str, str]:
        """Golden id -> the sha256 of its content (question, answers, chunks, metadata)."""
        return dict(self.conn.execute("SELECT id, content_sha256 FROM goldens"))

    def source_fingerprint(self, path: str) -> dict[str, Any] | None:
        """What a goldens file opened with 'annotate FILE' looked like when last checked."""
        value = self._setting(f"source:{path}")
        return None if value is None else dict(value)

    def set_source_fingerprint(self, path: str, fingerprint: dict[str, Any]) -> None:
        """Remember a goldens file's size, modification time and sha256."""
        with self._write():
            self._set_setting(f"source:{path}", fingerprint)

    def chunk_counts(self) -> dict[str, int]:
        """Golden id -> number of chunks, for every golden."""
        rows = self.conn.execute("SELECT golden_id, count(*) FROM chunks GROUP BY golden_id")
        return dict(rows)

    def chunk_ids(self) -> dict[str, list[int]]:
        """Golden id -> its chunk ids in rank order, for every golden, in import order (no text)."""
        out: dict[str, list[int]] = {}
        rows = self.conn.execute(
            "SELECT c.golden_id, c.id FROM goldens g JOIN chunks c ON c.golden_id = g.id "
            "ORDER BY g.position, c.rank")
        for golden_id, chunk_id in rows:
            out.setdefault(golden_id, []).append(chunk_id)
        return out

    def questions(self) -> dict[str, str]:
        """Golden id -> its question."""
        return dict(self.conn.execute("SELECT id, user_input FROM goldens"))

    def chunk_texts(self, chunk_ids: Sequence[int]) -> Iterator[tuple[int, str, str]]:
        """(chunk id, its golden's id, its text) for the given chunks, in no set order, read
        as they are used (a million chunks' texts are never held at once)."""
        yield from self.conn.execute(
            "SELECT id, golden_id, text FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            [json.dumps(list(chunk_ids))])

    def metadata_values(self, key: str) -> dict[str, Any]:
        """Golden id -> its metadata value under ``key`` (goldens without one are left out)."""
        path = '$."' + key.replace('"', '""') + '"'
        rows = self.conn.execute(
            "SELECT id, json_extract(metadata, ?) AS value FROM goldens "
            "WHERE json_type(metadata, ?) IS NOT NULL ORDER BY position", [path, path])
        return dict(rows)

    def golden(self, golden_id: str) -> Golden:
        """One golden with its ranked chunks."""
        goldens = self.goldens([golden_id])
        if not goldens:
            raise SessionError(f"The session has no golden with the id '{golden_id}'.")
        return goldens[0]

    def goldens(self, golden_ids: Sequence[str] | None = None) -> list[Golden]:
        """The given goldens (or all of them) with their chunks, in import order."""
        if golden_ids is None:
            where, params = "", []
        else:
            if not golden_ids:
                return []
            where = f"WHERE g.id IN ({','.join('?' * len(golden_ids))})"
            params = list(golden_ids)
        rows = self._rows(
            f"""SELECT g.id AS golden_id, g.position, g.user_input, g.reference, g.response,
                       g.metadata, c.id AS chunk_id, c.rank, c.text, c.doc_id, c.score
                FROM goldens g JOIN chunks c ON c.golden_id = g.id {where}
                ORDER BY g.position, c.rank""",
            params,
        )
        out: list[Golden] = []
        chunks: list[Chunk] = []
        for index, row in enumerate(rows):
            chunks.append(Chunk(row["chunk_id"], row["golden_id"], row["rank"], row["text"],
                                row["doc_id"], row["score"]))
            last = index + 1 == len(rows) or rows[index + 1]["golden_id"] != row["golden_id"]
            if last:
                out.append(Golden(
                    id=row["golden_id"], position=row["position"], user_input=row["user_input"],
                    reference=row["reference"], response=row["response"],
                    metadata=json.loads(row["metadata"]), chunks=tuple(chunks),
                ))
                chunks = []
        return out

    def judges(self) -> list[Judge]:
        """Every judge defined in the session, by name."""
        return [
            Judge(**{name: row[name] for name in field_names(Judge)}
                  | {"parameters": json.loads(row["parameters"])})
            for row in self._rows(f"SELECT {columns(Judge)} FROM judges ORDER BY name")
        ]

    def annotators(self) -> list[str]:
        """Everyone with at least one label or note in the session."""
        return [row[0] for row in
                self.conn.execute("SELECT DISTINCT annotator FROM labels ORDER BY annotator")]

    def verdicts(self, judge: str, golden_ids: Sequence[str] | None = None
                 ) -> dict[int, StoredVerdict]:
        """Chunk id -> the judge's verdict in force: its latest one that is not an error."""
        where, params = self._golden_filter(golden_ids)
        # For a few goldens, walk their chunks and look each verdict up (CROSS JOIN fixes that
        # loop order in SQLite); for all of them, scan the judge's verdicts. SQLite takes the
        # bare columns from the row holding max(v.id): the latest verdict.
        join = ("chunks c CROSS JOIN verdicts v ON v.chunk_id = c.id" if golden_ids is not None
                else "verdicts v JOIN chunks c ON c.id = v.chunk_id")
        rows = self.conn.execute(
            f"""SELECT {columns(StoredVerdict, "v")}, max(v.id)
                FROM {join}
                WHERE v.judge = ? AND v.error IS NULL AND v.repetition = 1 AND v.epoch IS ?
                      {where}
                GROUP BY v.chunk_id""",
            [judge, self.epoch_in_use(judge), *params],
        )
        return {row[0]: StoredVerdict(*row[:-1]) for row in rows}

    def labels(self, annotator: str, golden_ids: Sequence[str] | None = None) -> dict[int, Label]:
        """Chunk id -> this annotator's label (decided or note-only)."""
        where, params = self._golden_filter(golden_ids)
        # Plain tuples in Label's field order (rows.columns): a session-wide read builds
        # 100,000s of labels.
        rows = self.conn.execute(
            f"""SELECT {_LABEL_COLUMNS} FROM labels
                WHERE annotator = ? AND chunk_id IN (SELECT c.id FROM chunks c WHERE TRUE {where})""",
            [annotator, *params],
        )
        return {row[0]: Label.of_row(row) for row in rows}

    # -- whole-session columns (annotator.columns): one query each, no object per row --------

    def chunk_frame(self, golden_ids: Sequence[str] | None = None) -> ChunkFrame:
        """Every chunk id with its golden's index and its rank, in import order then rank; or
        only those of the given goldens, in the order given."""
        from annotator.store import arrays

        return arrays.chunk_frame(self, golden_ids)

    def judge_columns(self, judge: str, frame: ChunkFrame, *, whole: bool = True,
                      relevant_from: int | None = None) -> JudgeColumns:
        """The judge's verdicts in force (as ``verdicts``) aligned to the frame (``whole``:
        the frame holds every golden, so nothing is filtered; ``relevant_from``: graded
        verdicts read through this threshold instead of the one they were stored with)."""
        from annotator.store import arrays

        return arrays.judge_columns(self, judge, frame, whole, relevant_from)

    def label_columns(self, annotator: str, frame: ChunkFrame, *, whole: bool = True,
                      relevant_from: int | None = None) -> LabelColumns:
        """The annotator's labels (as ``labels``) aligned to the frame (``whole`` and
        ``relevant_from`` as in ``judge_columns``)."""
        from annotator.store import arrays

        return arrays.label_columns(self, annotator, frame, whole, relevant_from)

    def chunk_columns(self, judges: Sequence[str], annotators: Sequence[str]
                      ) -> dict[str, list[Any]]:
        """Every chunk in golden then rank order as columns (name -> one value a chunk):
        golden_id, rank, question, chunk, doc_id, score; each judge's ``verdict:``,
        ``reason:`` and ``p_relevant:`` NAME (its verdict in force); each person's ``label:``
        NAME (their answer) and ``note:`` NAME (None across a golden without a note): one query
        each, no object per chunk."""
        from annotator.store import arrays

        return arrays.chunk_columns(self, judges, annotators)

    def stop_when(self, stop: Callable[[], bool], every: int = 10_000) -> None:
        """Give up any read of this connection once ``stop()`` holds (asked every ``every``
        SQLite steps): it raises ReadStopped. For a worker's connection, so the screen that
        started it can close at once, whatever the read is doing."""
        if self.dialect == "sqlite":  # PostgreSQL's reads are not stopped midway
            self.sqlite.set_progress_handler(lambda: int(stop()), every)

    def review_totals(self, annotator: str, judge: str | None) -> ReviewTotals:
        """Chunks and this person's decisions per golden, and their (label, verdict) pair
        counts against the judge, read in one snapshot with the newest event in it; ReadStopped
        when ``stop_when`` stopped it."""
        conn = self.conn
        conn.execute("BEGIN")
        try:
            event_id = int(self._scalar("SELECT coalesce(max(id), 0) FROM events"))
            chunks = self.chunk_counts()
            decided = self.label_counts(annotator)
            pairs: dict[tuple[int, int], int] = {}
            if judge is not None:
                pairs = {(h, j): n for h, j, n in conn.execute(
                    """SELECT l.verdict, v.verdict, count(*) FROM labels l
                       JOIN (SELECT chunk_id, verdict, max(id) FROM verdicts
                             WHERE judge = ? AND error IS NULL AND repetition = 1
                                   AND epoch IS ?
                             GROUP BY chunk_id) v ON v.chunk_id = l.chunk_id
                       WHERE l.annotator = ? AND l.verdict IS NOT NULL GROUP BY 1, 2""",
                    [judge, self.epoch_in_use(judge), annotator])}
        except sqlite3.OperationalError as error:
            if "interrupted" in str(error):
                raise ReadStopped("The totals were not read: the screen closed first.") from None
            raise
        finally:
            conn.execute("COMMIT")
        return ReviewTotals(chunks, decided, pairs, event_id)

    def gold_column(self, frame: ChunkFrame) -> np.ndarray:
        """The adjudicated gold label of each chunk of the frame (MISSING where none)."""
        from annotator.store import arrays

        return arrays.gold_column(self, frame)

    @staticmethod
    def _golden_filter(golden_ids: Sequence[str] | None) -> tuple[str, list[str]]:
        if golden_ids is None:
            return "", []
        return f"AND c.golden_id IN ({','.join('?' * len(golden_ids))})", list(golden_ids)

    def label_counts(self, annotator: str) -> dict[str, int]:
        """Golden id -> how many of its chunks this annotator has answered (unsure counts)."""
        rows = self.conn.execute(
            f"""SELECT c.golden_id, count(*) FROM labels l JOIN chunks c ON c.id = l.chunk_id
                WHERE l.annotator = ? AND {ANSWERED} GROUP BY c.golden_id""",
            [annotator],
        )
        return dict(rows)

    def progress(self, annotator: str, golden_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Golden id -> (its chunks, how many this annotator has answered), for a few goldens."""
        marks = ",".join("?" * len(golden_ids))
        rows = self.conn.execute(
            f"""SELECT c.golden_id, count(*), count(CASE WHEN {ANSWERED} THEN 1 END) FROM chunks c
                LEFT JOIN labels l ON l.chunk_id = c.id AND l.annotator = ?
                WHERE c.golden_id IN ({marks}) GROUP BY c.golden_id""",
            [annotator, *golden_ids])
        return {golden_id: (chunks, decided) for golden_id, chunks, decided in rows}

    def others_progress(self, annotator: str, golden_ids: Sequence[str]
                        ) -> dict[str, dict[str, int]]:
        """Golden id -> everyone else's name -> how many of its chunks they have decided (how
        far others are, never what they said), for a few goldens."""
        out: dict[str, dict[str, int]] = {}
        rows = self.conn.execute(
            f"""SELECT c.golden_id, l.annotator, count(*) FROM labels l
                JOIN chunks c ON c.id = l.chunk_id
                WHERE c.golden_id IN ({",".join("?" * len(golden_ids))}) AND l.annotator <> ?
                  AND {ANSWERED}
                GROUP BY c.golden_id, l.annotator ORDER BY l.annotator""",
            [*golden_ids, annotator])
        for golden_id, person, decided in rows:
            out.setdefault(golden_id, {})[person] = decided
        return out

    def last_decided_golden(self, annotator: str) -> str | None:
        """The golden of this person's latest decision still in force, if any."""
        golden_id = self._scalar(
            """SELECT e.golden_id FROM events e WHERE e.annotator = ? AND e.kind = 'decide'
                 AND NOT EXISTS (SELECT 1 FROM events u WHERE u.undoes = e.id)
               ORDER BY e.id DESC LIMIT 1""",
            [annotator],
        )
        return None if golden_id is None else str(golden_id)

    def position(self, annotator: str) -> tuple[str, int] | None:
        """Where this person was on the annotation screen when they last left it: (golden id,
        rank), or None before their first visit."""
        value = self._setting(f"position:{annotator}")
        return None if value is None else (str(value[0]), int(value[1]))

    def set_position(self, annotator: str, golden_id: str, rank: int) -> None:
        """Remember the golden and chunk this person is on, to reopen there."""
        with self._write():
            self._set_setting(f"position:{annotator}", [golden_id, rank])

    def events(self, annotator: str | None = None) -> list[dict[str, Any]]:
        """The event log (optionally one person's), oldest first, payloads decoded."""
        sql = "SELECT * FROM events"
        params: list[Any] = []
        if annotator is not None:
            sql += " WHERE annotator = ?"
            params.append(annotator)
        return [{**dict(row), "payload": json.loads(row["payload"])}
                for row in self._rows(sql + " ORDER BY id", params)]

    # -- annotating -----------------------------------------------------------------------------

    def decide(
        self,
        annotator: str,
        chunk_id: int,
        verdict: Answer,
        action: Action | None,
        *,
        judge: str | None = None,
        shown_verdict: int | None = None,
        blind_verdict: int | None = None,
        decision_ms: float | None = None,
        reason_wrong: bool = False,
        note: str | None = None,
        grade: int | None = None,
        per_golden: int | None = None,
        lease_s: float = 0.0,
    ) -> Label:
        """Record one person's decision on one chunk, with its event, and commit it.

        ``verdict`` may be UNSURE, which needs a note saying why (given here, saved with it).
        ``reason_wrong`` marks the judge's reason wrong on an accepted verdict; ``grade`` is
        the grade ``verdict`` was read from, on a graded session. A note given
        here replaces the chunk's comment in the same transaction. A blind answer is kept once
        given: a later decision on the same chunk leaves it alone. Under a quota of
        ``per_golden`` people, the person must hold the chunk's golden (NotHeld, nothing
        written, when it lapsed and others filled it): the decision renews the lease for
        ``lease_s``, and the one completing the golden keeps it theirs for good, in the same
        transaction.
        """
        kind = kind_of(verdict, "a label")
        if kind.needs_note and not (note or "").strip():
            raise SessionError(f"An {kind.word} answer needs a note saying what is unclear.")
        if kind.verdict is None:  # no verdict: nothing accepted or flipped, nothing blind
            action, blind_verdict = None, None
        if reason_wrong and action != "accept":
            raise SessionError("Only an accepted verdict can have its reason marked wrong.")
        with self._write():
            golden_id, before = self._chunk_and_label(annotator, chunk_id)
            stamp = now()
            if per_golden is not None and not self._hold(golden_id, annotator, per_golden,
                                                         lease_s, stamp):
                raise NotHeld(f"{golden_id} is no longer yours: it has its {per_golden} "
                              "people now.")
            if before is not None and before["blind_verdict"] is not None:
                blind_verdict = before["blind_verdict"]
            if note is None and before is not None:
                note = before["note"]
            # The guidelines the person had been shown, read inside the write (a version set
            # since, which their screen shows before their next golden, is not yet theirs).
            # The row as stored comes back at once (one round trip less on PostgreSQL).
            [after] = self._rows(
                f"""INSERT INTO labels(annotator, chunk_id, answer, blind_verdict, shown_verdict,
                                      judge, action, decision_ms, reason_wrong, note, grade,
                                      created_at, updated_at, guideline)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                           (SELECT version FROM guideline_reads WHERE annotator = ?))
                   ON CONFLICT(annotator, chunk_id) DO UPDATE SET
                     answer = excluded.answer, blind_verdict = excluded.blind_verdict,
                     shown_verdict = excluded.shown_verdict, judge = excluded.judge,
                     action = excluded.action, decision_ms = excluded.decision_ms,
                     reason_wrong = excluded.reason_wrong, note = excluded.note,
                     grade = excluded.grade, updated_at = excluded.updated_at,
                     guideline = excluded.guideline
                   RETURNING {_LABEL_COLUMNS}""",
                (annotator, chunk_id, kind.word, blind_verdict, shown_verdict,
                 judge, action, decision_ms, int(reason_wrong), note or None, grade, stamp,
                 stamp, annotator),
            )
            if per_golden is not None and self._completed(golden_id, annotator):
                self.conn.execute("UPDATE claims SET done_at = ?, expires_at = NULL "
                                  "WHERE golden_id = ? AND annotator = ? AND done_at IS NULL",
                                  (stamp, golden_id, annotator))
            self._event(
                "decide", annotator=annotator, chunk_id=chunk_id, golden_id=golden_id,
                payload={"before": _decision_state(before), "after": _decision_state(after)},
            )
        return Label.of_row(after)

    def undo(self, annotator: str) -> Undone | None:
        """Revert this person's latest decision not yet undone; say what changed (None: nothing)."""
        with self._write():
            row = self.conn.execute(
                """SELECT e.id, e.chunk_id, e.payload FROM events e
                   WHERE e.annotator = ? AND e.kind = 'decide'
                     AND NOT EXISTS (SELECT 1 FROM events u WHERE u.undoes = e.id)
                   ORDER BY e.id DESC LIMIT 1""",
                [annotator],
            ).fetchone()
            if row is None:
                return None
            event_id, chunk_id, payload = row
            decision = json.loads(payload)
            before = decision["before"]
            # Nothing decided before: back to pending (keeping any note). Events written before
            # a field existed lack it: its default is what the label held then.
            restored = {f: (before or {}).get(f, default) for f, default in _DECISION_FIELDS.items()}
            restored["answer"] = None if before is None else word_of_state(before)
            self.conn.execute(
                f"UPDATE labels SET {', '.join(f'{f} = ?' for f in restored)}, "
                "updated_at = ? WHERE annotator = ? AND chunk_id = ?",
                (*restored.values(), now(), annotator, chunk_id),
            )
            golden_id = self.golden_id_of(chunk_id)
            self._event("undo", annotator=annotator, chunk_id=chunk_id, golden_id=golden_id,
                        undoes=event_id)
        return Undone(chunk_id=int(chunk_id), golden_id=golden_id,
                      undone=_answer(decision["after"]), restored=_answer(before))

    def set_note(self, annotator: str, chunk_id: int, note: str | None) -> None:
        """Set (or clear, with None or "") this person's comment on a chunk, and commit it."""
        note = note or None
        with self._write():
            stamp = now()
            self.conn.execute(
                """INSERT INTO labels(annotator, chunk_id, note, created_at, updated_at)
                   VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT(annotator, chunk_id) DO UPDATE SET
                     note = excluded.note, updated_at = excluded.updated_at""",
                (annotator, chunk_id, note, stamp, stamp),
            )
            self._event("comment", annotator=annotator, chunk_id=chunk_id,
                        golden_id=self.golden_id_of(chunk_id), payload={"note": note})

    # -- guidelines -----------------------------------------------------------------------------

    def set_guidelines(self, text: str, *, source: str | None, by: str | None) -> tuple[int, bool]:
        """Store ``text`` whole as the next version of the team's guidelines; return the version
        in force and whether it is new (the same text as the latest version stores nothing)."""
        sha = hashlib.sha256(text.encode()).hexdigest()
        with self._write():
            latest = self.conn.execute(
                "SELECT version, sha256 FROM guidelines ORDER BY version DESC LIMIT 1").fetchone()
            if latest is not None and latest[1] == sha:
                return int(latest[0]), False
            version = 1 if latest is None else int(latest[0]) + 1
            self.conn.execute("INSERT INTO guidelines(version, text, sha256, source, set_by, "
                              "set_at) VALUES (?, ?, ?, ?, ?, ?)",
                              (version, text, sha, source, by, now()))
            self._event("guidelines_set", annotator=by, payload={"version": version,
                                                                   "sha256": sha})
        return version, True

    def guideline(self, version: int | None = None) -> Guideline | None:
        """A version of the guidelines (by default the one in force); None when there is none."""
        sql = f"SELECT {columns(Guideline)} FROM guidelines"
        rows = (self._rows(sql + " WHERE version = ?", [version]) if version is not None
                else self._rows(sql + " ORDER BY version DESC LIMIT 1"))
        return Guideline(*rows[0]) if rows else None

    def guidelines(self) -> list[Guideline]:
        """Every version of the guidelines, oldest first."""
        return [Guideline(*row) for row in
                self._rows(f"SELECT {columns(Guideline)} FROM guidelines ORDER BY version")]

    def guideline_in_force(self) -> int | None:
        """The newest version of the guidelines, the one screens show (None: there are none)."""
        value = self._scalar("SELECT max(version) FROM guidelines")
        return None if value is None else int(value)

    def guidelines_read(self, annotator: str) -> int:
        """The newest version of the guidelines this person has been shown (0: none)."""
        return int(self._scalar("SELECT coalesce(max(version), 0) FROM guideline_reads "
                                "WHERE annotator = ?", [annotator]))

    def read_guidelines(self, annotator: str, version: int) -> None:
        """Record that this person was shown this version of the guidelines: their decisions
        from now on record it (never an older one than they had seen)."""
        with self._write():
            self.conn.execute(
                """INSERT INTO guideline_reads(annotator, version, read_at) VALUES (?, ?, ?)
                   ON CONFLICT(annotator) DO UPDATE SET version = excluded.version,
                     read_at = excluded.read_at
                   WHERE excluded.version > guideline_reads.version""",
                (annotator, version, now()))
            self._event("guidelines_read", annotator=annotator, payload={"version": version})

    def guideline_counts(self) -> dict[int | None, int]:
        """Answered labels by the version of the guidelines they were made under."""
        return {row[0]: int(row[1]) for row in self.conn.execute(
            f"SELECT guideline, count(*) FROM labels l WHERE {ANSWERED} GROUP BY guideline")}

    # -- assignment: each golden to at most K people (people/assignment.py) ----------------------

    def claim(self, golden_id: str, annotator: str, per_golden: int, lease_s: float) -> bool:
        """Give this person the golden for ``lease_s`` seconds (kept for good once they complete
        it) when fewer than ``per_golden`` others hold or completed it; their unfinished claims
        on other goldens are let go. False: the golden is full. Counted inside the write, which
        no other writer shares, so no golden is ever held by more than ``per_golden``."""
        with self._write():
            self.conn.execute("DELETE FROM claims WHERE annotator = ? AND golden_id != ? "
                              "AND done_at IS NULL", (annotator, golden_id))
            return self._hold(golden_id, annotator, per_golden, lease_s, now())

    def _hold(self, golden_id: str, annotator: str, per_golden: int, lease_s: float,
              stamp: str) -> bool:
        """Inside a write: keep, renew or take this person's claim on the golden (see claim)."""
        mine = self.conn.execute("SELECT done_at, expires_at FROM claims "
                                 "WHERE golden_id = ? AND annotator = ?",
                                 (golden_id, annotator)).fetchone()
        if mine is not None and mine[0] is not None:
            return True
        if mine is None or mine[1] <= stamp:  # none, or lapsed: a place must be free
            held = self.conn.execute(
                f"SELECT count(*) FROM claims WHERE golden_id = ? AND annotator != ? "
                f"AND {_LIVE_CLAIM}", (golden_id, annotator, stamp)).fetchone()[0]
            if held >= per_golden:
                return False
        done = self._completed(golden_id, annotator)
        self.conn.execute(
            """INSERT INTO claims(golden_id, annotator, claimed_at, expires_at, done_at)
               VALUES (?, ?, ?, ?, ?)
               ON CONFLICT(golden_id, annotator) DO UPDATE SET
                 expires_at = excluded.expires_at, done_at = excluded.done_at""",
            (golden_id, annotator, stamp, None if done else _later(stamp, lease_s),
             stamp if done else None))
        return True

    def _completed(self, golden_id: str, annotator: str) -> bool:
        """Whether this person has answered every chunk of the golden."""
        chunks, answered = self.conn.execute(
            """SELECT count(*), count(l.answer) FROM chunks c LEFT JOIN labels l
               ON l.chunk_id = c.id AND l.annotator = ? WHERE c.golden_id = ?""",
            (annotator, golden_id)).fetchone()
        return bool(chunks) and answered == chunks

    def claim_completed(self) -> int:
        """Count, as done claims, the goldens people completed before any quota (so turning on
        --per-golden midway never sends a golden to more people than it asks); how many were
        added. Idempotent."""
        with self._write():
            return self.conn.execute(
                f"""INSERT OR IGNORE INTO claims(golden_id, annotator, claimed_at, done_at)
                    SELECT c.golden_id, l.annotator, min(l.updated_at), max(l.updated_at)
                    FROM labels l JOIN chunks c ON c.id = l.chunk_id WHERE {ANSWERED}
                    GROUP BY c.golden_id, l.annotator
                    HAVING count(*) = (SELECT count(*) FROM chunks x
                                       WHERE x.golden_id = c.golden_id)""").rowcount

    def full_goldens(self, annotator: str, per_golden: int) -> set[str]:
        """The goldens ``per_golden`` other people hold now or have completed."""
        return {row[0] for row in self.conn.execute(
            f"SELECT golden_id FROM claims WHERE annotator != ? AND {_LIVE_CLAIM} "
            "GROUP BY golden_id HAVING count(*) >= ?", (annotator, now(), per_golden))}

    def release_claims(self, annotator: str) -> int:
        """Let go of this person's unfinished claims (their screen closed); how many."""
        with self._write():
            return self.conn.execute("DELETE FROM claims WHERE annotator = ? AND done_at IS NULL",
                                     [annotator]).rowcount

    def claim_counts(self) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
        """(done, held now) per golden and per person, over the claims in force."""
        per_golden: dict[str, tuple[int, int]] = {}
        per_person: dict[str, tuple[int, int]] = {}
        for golden_id, annotator, done in self.conn.execute(
                f"SELECT golden_id, annotator, done_at IS NOT NULL FROM claims "
                f"WHERE {_LIVE_CLAIM}", [now()]):
            for key, table in ((golden_id, per_golden), (annotator, per_person)):
                d, h = table.get(key, (0, 0))
                table[key] = (d + 1, h) if done else (d, h + 1)
        return per_golden, per_person

    def _chunk_and_label(self, annotator: str, chunk_id: int) -> tuple[str, sqlite3.Row | None]:
        """A chunk's golden and this person's label on it (None: none yet), in one read (one
        round trip to a PostgreSQL server, for every key a person presses)."""
        rows = self._rows(
            f"""SELECT c.golden_id AS of_golden, {columns(Label, "l")} FROM chunks c
                LEFT JOIN labels l ON l.chunk_id = c.id AND l.annotator = ? WHERE c.id = ?""",
            (annotator, chunk_id))
        if not rows:
            raise SessionError(f"The session has no chunk with the id {chunk_id}.")
        return str(rows[0]["of_golden"]), rows[0] if rows[0]["annotator"] is not None else None

    def golden_id_of(self, chunk_id: int) -> str:
        """The id of the golden a chunk belongs to."""
        golden_id = self._scalar("SELECT golden_id FROM chunks WHERE id = ?", [chunk_id])
        if golden_id is None:
            raise SessionError(f"The session has no chunk with the id {chunk_id}.")
        return str(golden_id)

    # -- judges and verdicts --------------------------------------------------------------------

    def define_judge(self, judge: Judge, examples: Sequence[tuple[str, int, int]] = ()) -> None:
        """Store a judge's definition, or check it matches the one stored under its name;
        ``examples``: (golden id, rank, verdict) of each session chunk its prompt shows."""
        with self._write():
            self._define_judge(judge, examples)

    def judges_judged(self, *, candidates: bool = False) -> dict[str, bool]:
        """Judge name -> whether it holds any verdict (one index probe a judge: what choosing a
        default judge needs, where counting would scan every verdict). An align run's
        temporary candidates are left out unless ``candidates``: never a judge to choose."""
        return {name: bool(has) for name, has in self.conn.execute(
            """SELECT j.name, EXISTS(SELECT 1 FROM verdicts v WHERE v.judge = j.name
                                     AND v.error IS NULL AND v.repetition = 1)
               FROM judges j ORDER BY j.name""") if candidates or not is_candidate(name)}

    def judge_verdict_counts(self) -> dict[str, int]:
        """Judge name -> how many chunks carry its verdict in force (0 for a judge with none)."""
        return {name: int(self._scalar(
            "SELECT count(DISTINCT chunk_id) FROM verdicts WHERE judge = ? AND error IS NULL "
            "AND repetition = 1 AND epoch IS ?", [name, self.epoch_in_use(name)]))
            for (name,) in self.conn.execute("SELECT name FROM judges ORDER BY name").fetchall()}

    def forget_unused_judge(self, judge: str) -> bool:
        """Remove a judge that holds no verdict, with its failed calls and settings (a run that
        judged nothing leaves no judge behind); False, changing nothing, when it has verdicts
        or a label names it."""
        with self._write():
            used = self._scalar(
                "SELECT EXISTS(SELECT 1 FROM verdicts WHERE judge = ? AND error IS NULL) "
                "OR EXISTS(SELECT 1 FROM labels WHERE judge = ?)", [judge, judge])
            if used:
                return False
            self._delete_judge(judge)
        return True

    def remove_judge(self, judge: str, *, by: str | None = None) -> int:
        """Remove a judge with every call it made and its settings, logging the removal; the
        number of calls removed. Refused while people's labels were made reviewing it."""
        with self._write():
            reviewed = self._rows("SELECT annotator, count(*) AS n FROM labels WHERE judge = ? "
                                  "GROUP BY annotator ORDER BY annotator", [judge])
            if reviewed:
                who = ", ".join(f"{row['annotator']} ({row['n']})" for row in reviewed)
                raise SessionError(
                    f"Judge '{judge}' is not removed: people decided chunks while reviewing its "
                    f"verdicts ({who} labels), and the report compares those labels with what "
                    "it showed them. Keep it, or score another judge with --judge NAME.")
            calls = int(self._scalar("SELECT count(*) FROM verdicts WHERE judge = ?", [judge]))
            verdicts = int(self._scalar("SELECT count(*) FROM verdicts WHERE judge = ? AND "
                                        "error IS NULL", [judge]))
            self._delete_judge(judge)
            self._event("remove_judge", annotator=by,
                        payload={"judge": judge, "calls": calls, "verdicts": verdicts})
        return calls

    def rename_judge(self, old: str, new: str) -> None:
        """Give a judge another name, with every call, example, batch and label that names it
        (align registers its kept candidate so)."""
        with self._write():
            if self._scalar("SELECT 1 FROM judges WHERE name = ?", [new]):
                raise SessionError(f"A judge named '{new}' is already in {self.where}.")
            self.conn.execute(f"INSERT INTO judges SELECT ?, {_JUDGE_REST} FROM judges "
                              "WHERE name = ?", [new, old])
            for table in ("verdicts", "judge_examples", "batches", "batch_requests",
                          "probe_calls", "labels", "trust_thresholds", "epochs", "rechecks"):
                self.conn.execute(f"UPDATE {table} SET judge = ? WHERE judge = ?", [new, old])
            for prefix in ("transport:", "price:"):
                self.conn.execute("UPDATE settings SET key = ? WHERE key = ?",
                                  [prefix + new, prefix + old])
            self.conn.execute("DELETE FROM judges WHERE name = ?", [old])
            self._event("rename_judge", payload={"from": old, "to": new})
        self._forget_definition(old)

    # -- canary and re-checks (annotator.calibration.recheck) ----------------------------------------------

    def canary(self) -> tuple[list[int], dict[str, Any] | None]:
        """The frozen canary's chunk ids in their drawn order, and how it was chosen (None:
        not chosen yet)."""
        ids = [row[0] for row in self.conn.execute("SELECT chunk_id FROM canary ORDER BY position")]
        return ids, self._setting("canary") if ids else None

    def set_canary(self, chunk_ids: Sequence[int], how: dict[str, Any]) -> None:
        """Freeze the canary: these chunks, in this order, chosen as ``how`` says."""
        with self._write():
            if self._scalar("SELECT EXISTS(SELECT 1 FROM canary)"):
                raise SessionError(f"The canary of {self.where} is already chosen; it stays as "
                                   "it is, so every re-check asks the same chunks.")
            self.conn.executemany("INSERT INTO canary(chunk_id, position) VALUES (?, ?)",
                                  [(c, i) for i, c in enumerate(chunk_ids)])
            self._set_setting("canary", how)
            self._event("canary", payload={"chunks": len(chunk_ids), **how})

    def start_recheck(self, judge: str, epoch_before: str | None) -> int:
        """Open a re-check of a judge against its verdicts of ``epoch_before``; its id."""
        with self._write():
            return int(self.conn.execute(
                "INSERT INTO rechecks(judge, epoch_before, started_at) VALUES (?, ?, ?)",
                [judge, epoch_before, now()]).lastrowid or 0)

    def recheck_row(self, recheck_id: int) -> dict[str, Any]:
        """One re-check as stored (figures as the JSON text they are stored as)."""
        rows = self._rows("SELECT * FROM rechecks WHERE id = ?", [recheck_id])
        if not rows:
            raise SessionError(f"There is no re-check {recheck_id} in {self.where}.")
        return dict(rows[0])

    def open_recheck(self, judge: str) -> dict[str, Any] | None:
        """The judge's re-check that was started and never finished (an interrupted run), with
        how many canary chunks it has a verdict on."""
        rows = self._rows(
            "SELECT r.*, (SELECT count(DISTINCT chunk_id) FROM recheck_calls c WHERE "
            "c.recheck_id = r.id AND c.error IS NULL) AS answered FROM rechecks r "
            "WHERE r.judge = ? AND r.finished_at IS NULL ORDER BY r.id DESC LIMIT 1", [judge])
        return dict(rows[0]) if rows else None

    def finish_recheck(self, recheck_id: int, figures: dict[str, Any]) -> None:
        """Close a re-check with its figures (JSON)."""
        with self._write():
            self.conn.execute("UPDATE rechecks SET finished_at = ?, figures = ? WHERE id = ?",
                              [now(), json.dumps(figures, sort_keys=True), recheck_id])

    def rechecks(self, judge: str) -> list[dict[str, Any]]:
        """A judge's finished re-checks, oldest first, their figures read back."""
        return [dict(row) | {"figures": json.loads(row["figures"])} for row in self._rows(
            "SELECT * FROM rechecks WHERE judge = ? AND finished_at IS NOT NULL ORDER BY id",
            [judge])]

    def record_recheck_calls(self, recheck_id: int, judge: str,
                             calls: Sequence[dict[str, Any]]) -> None:
        """Store a re-check's calls in one transaction (as ``record_calls`` stores a run's),
        apart from the judge's verdicts: a re-check measures a judge, it never changes one."""
        at = now()
        with self._write():
            rows = self._with_epochs(judge, [_scrubbed_call(c) for c in calls])
            self.conn.executemany(
                f"INSERT INTO recheck_calls(recheck_id, {', '.join(_RECHECK_COLUMNS)}, "
                f"created_at) VALUES ({', '.join('?' * (len(_RECHECK_COLUMNS) + 2))})",
                [(recheck_id, *(c.get(k) for k in _RECHECK_COLUMNS), at) for c in rows])

    def recheck_verdicts(self, recheck_id: int) -> dict[int, int]:
        """Chunk id -> the re-check's verdict (its latest that is not an error)."""
        return {chunk: verdict for chunk, verdict, _ in self.conn.execute(
            "SELECT chunk_id, verdict, max(id) FROM recheck_calls WHERE recheck_id = ? "
            "AND error IS NULL GROUP BY chunk_id", [recheck_id])}

    def recheck_epochs(self, recheck_id: int) -> list[str]:
        """The epochs that served a re-check's verdicts, in the order they first did."""
        return [row[0] for row in self.conn.execute(
            "SELECT epoch FROM recheck_calls WHERE recheck_id = ? AND error IS NULL AND epoch "
            "IS NOT NULL GROUP BY epoch ORDER BY min(id)", [recheck_id])]

    # -- trust thresholds (annotator.calibration.trust) ---------------------------------------------------

    def record_trust(self, judge: str, **fields: Any) -> int:
        """Store a judge's fitted trust threshold (TRUST_FIELDS); the latest is in force."""
        unknown = set(fields) - TRUST_FIELDS
        if unknown:
            raise ValueError(f"trust_thresholds has no {', '.join(sorted(unknown))}")
        names = sorted(fields)
        with self._write():
            cursor = self.conn.execute(
                f"INSERT INTO trust_thresholds(judge, {', '.join(names)}, created_at) "
                f"VALUES (?, {', '.join('?' for _ in names)}, ?)",
                [judge, *(fields[n] for n in names), now()])
            return int(cursor.lastrowid or 0)

    def trust_threshold(self, judge: str) -> dict[str, Any] | None:
        """The judge's trust threshold in force (its latest fit), if one was fitted."""
        rows = self._rows("SELECT * FROM trust_thresholds WHERE judge = ? ORDER BY id DESC "
                          "LIMIT 1", [judge])
        return dict(rows[0]) if rows else None

    # -- align runs (annotator.align) ---------------------------------------------------------

    def start_align_run(self, judge: str, model: str, optimizer_model: str,
                        optimizer_url: str | None, settings: dict[str, Any],
                        train: Sequence[str], validation: Sequence[str]) -> int:
        """Record an align run's start: whose prompt, the optimizer, the dev goldens the
        optimizer may see (``train``) and those candidates are scored on; its id."""
        with self._write():
            cursor = self.conn.execute(
                "INSERT INTO align_runs(judge, model, optimizer_model, optimizer_url, settings, "
                "train, validation, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [judge, model, optimizer_model, optimizer_url, json.dumps(settings),
                 json.dumps(list(train)), json.dumps(list(validation)), now()])
            return int(cursor.lastrowid or 0)

    def update_align_run(self, run_id: int, **fields: Any) -> None:
        """Store figures of an align run as they come (ALIGN_RUN_FIELDS)."""
        self._update_align("align_runs", ALIGN_RUN_FIELDS, run_id, fields)

    def add_align_candidate(self, run_id: int, round_: int, number: int,
                            request: list[dict[str, str]], **fields: Any) -> int:
        """Record the optimizer's request for a candidate (and what is known of it); its id."""
        with self._write():
            cursor = self.conn.execute(
                "INSERT INTO align_candidates(run_id, round, number, request, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [run_id, round_, number, json.dumps(request, ensure_ascii=False), now()])
            candidate = int(cursor.lastrowid or 0)
        if fields:
            self.update_align_candidate(candidate, **fields)
        return candidate

    def update_align_candidate(self, candidate: int, **fields: Any) -> None:
        """Store what became of a candidate (ALIGN_CANDIDATE_FIELDS)."""
        self._update_align("align_candidates", ALIGN_CANDIDATE_FIELDS, candidate, fields)

    def _update_align(self, table: str, allowed: frozenset[str], row: int,
                      fields: dict[str, Any]) -> None:
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"{table} has no {', '.join(sorted(unknown))}")
        # A provider's error or reply may echo a key or a URL's password: never stored.
        fields = {k: storable(scrub(v)) if isinstance(v, str) else v for k, v in fields.items()}
        names = sorted(fields)
        with self._write():
            self.conn.execute(f"UPDATE {table} SET {', '.join(f'{n} = ?' for n in names)} "
                              "WHERE id = ?", [*(fields[n] for n in names), row])

    def align_runs(self) -> list[dict[str, Any]]:
        """Every align run, oldest first, as stored (settings, train and validation decoded)."""
        out = []
        for row in self._rows("SELECT * FROM align_runs ORDER BY id"):
            item = dict(row)
            for key in ("settings", "train", "validation"):
                item[key] = json.loads(item[key])
            out.append(item)
        return out

    def align_candidates(self, run_id: int) -> list[dict[str, Any]]:
        """An align run's candidates in the order they were asked for (request decoded)."""
        out = []
        for row in self._rows("SELECT * FROM align_candidates WHERE run_id = ? "
                              "ORDER BY round, number", [run_id]):
            item = dict(row)
            item["request"] = json.loads(item["request"])
            out.append(item)
        return out

    def _delete_judge(self, judge: str) -> None:
        self._forget_definition(judge)
        self.conn.execute("DELETE FROM verdicts WHERE judge = ?", [judge])
        self.conn.execute("DELETE FROM trust_thresholds WHERE judge = ?", [judge])
        self.conn.execute("DELETE FROM epochs WHERE judge = ?", [judge])
        self.conn.execute("DELETE FROM recheck_calls WHERE recheck_id IN "
                          "(SELECT id FROM rechecks WHERE judge = ?)", [judge])
        self.conn.execute("DELETE FROM rechecks WHERE judge = ?", [judge])
        self.conn.execute("DELETE FROM judges WHERE name = ?", [judge])
        self.conn.execute("DELETE FROM settings WHERE key IN (?, ?)",
                             [f"transport:{judge}", f"price:{judge}"])

    def _define_judge(self, judge: Judge, examples: Sequence[tuple[str, int, int]] = ()) -> None:
        existing = self._rows("SELECT * FROM judges WHERE name = ?", [judge.name])
        if existing:
            stored = existing[0]
            mine = (judge.model, judge.base_url, judge.prompt_id, judge.prompt_sha256,
                    judge.parameters)
            theirs = (stored["model"], stored["base_url"], stored["prompt_id"],
                      stored["prompt_sha256"], json.loads(stored["parameters"]))
            if judge.prompt_id != "imported" and mine != theirs:
                if mine[:3] == theirs[:3] and mine[4:] == theirs[4:]:  # only the template
                    what = (f"the prompt file behind '{judge.prompt_id}' has changed since"
                            if judge.prompt_id.startswith("file:") else
                            f"it was run with an earlier version of the '{judge.prompt_id}' "
                            "prompt (or other examples) than")
                    raise SessionError(
                        f"The judge '{judge.name}' is not run again: {what} its verdicts were "
                        f"stored, and they stay under that name. Give this run another --name "
                        f"(e.g. {judge.name}-2): an edited prompt is a different judge.")
                raise SessionError(
                    f"A judge named '{judge.name}' is already defined in this session with other "
                    f"settings (model {stored['model']!r}, prompt {stored['prompt_id']!r}, "
                    f"parameters {stored['parameters']}). Choose another --name for this judge."
                )
            return
        self.conn.execute(
            "INSERT INTO judges(name, model, base_url, prompt_id, prompt_sha256, parameters, "
            "prompt_text, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (judge.name, judge.model, judge.base_url, judge.prompt_id, judge.prompt_sha256,
             json.dumps(judge.parameters, sort_keys=True), judge.prompt_text, now()),
        )
        self.conn.executemany(
            "INSERT INTO judge_examples(judge, position, golden_id, rank, verdict) "
            "VALUES (?, ?, ?, ?, ?)",
            [(judge.name, i, *example) for i, example in enumerate(examples)])

    def judge_examples(self) -> dict[str, list[tuple[str, int, int]]]:
        """Judge name -> (golden id, rank, verdict) of each chunk it was shown as an example."""
        out: dict[str, list[tuple[str, int, int]]] = {}
        for judge, golden_id, rank, verdict in self.conn.execute(
                "SELECT judge, golden_id, rank, verdict FROM judge_examples "
                "ORDER BY judge, position"):
            out.setdefault(judge, []).append((golden_id, rank, verdict))
        return out

    def record_call(self, judge: str, chunk_id: int, *, verdict: int | None,
                    reason: str | None = None, p_relevant: float | None = None,
                    error: str | None = None, raw_reply: str | None = None,
                    tokens_in: int | None = None, tokens_out: int | None = None,
                    latency_ms: float | None = None, request_sha256: str | None = None,
                    repetition: int = 1, confidence_note: str | None = None,
                    requests: int | None = None, grade: int | None = None,
                    tokens_cached: int | None = None, unstable: bool | None = None) -> None:
        """Store one judge call the moment it ends: a verdict, or the error it met.

        ``confidence_note`` says why a verdict carries no P(relevant) although it was asked for;
        ``requests`` is how many HTTP requests the call sent; ``grade`` the graded score behind
        the verdict; ``tokens_cached`` the prompt tokens the provider's cache served;
        ``unstable`` that overlapping listwise windows disagreed on the chunk.
        """
        self.record_calls(judge, [{
            "chunk_id": chunk_id, "verdict": verdict, "reason": reason, "p_relevant": p_relevant,
            "error": error, "raw_reply": raw_reply, "tokens_in": tokens_in, "tokens_out": tokens_out,
            "latency_ms": latency_ms, "request_sha256": request_sha256, "repetition": repetition,
            "confidence_note": confidence_note, "requests": requests, "grade": grade,
            "tokens_cached": tokens_cached, "unstable": None if unstable is None else int(unstable)}])

    def record_calls(self, judge: str, calls: Sequence[dict[str, Any]]) -> None:
        """Store several calls in one transaction (a listwise request's verdicts: all or none);
        each dict holds record_call's keywords and a chunk_id."""
        with self._write():
            self._insert_calls(judge, calls)

    def _insert_calls(self, judge: str, calls: Sequence[dict[str, Any]]) -> None:
        at = now()
        defaults = {"repetition": 1}

        def row(call: dict[str, Any]) -> tuple[Any, ...]:
            try:
                return (judge, *_CALL_VALUES(call), at)  # every key there: one C call
            except KeyError:
                return (judge, *(call.get(c, defaults.get(c)) for c in _CALL_COLUMNS), at)

        calls = self._with_epochs(judge, [_scrubbed_call(c) for c in calls])
        self.conn.executemany(
            f"INSERT INTO verdicts(judge, {', '.join(_CALL_COLUMNS)}, created_at) "
            f"VALUES ({', '.join('?' * (len(_CALL_COLUMNS) + 2))})", [row(c) for c in calls])
        newest = next((c["epoch"] for c in reversed(calls) if c.get("error") is None), None)
        if newest is not None:
            self.conn.execute("UPDATE epochs SET last_id = last_insert_rowid() "
                              "WHERE judge = ? AND epoch = ?", [judge, newest])

    def _with_epochs(self, judge: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The calls, each given its epoch (from what its reply said served it; a verdict whose
        reply said nothing: the configured model's; a failure without a reply: none), every
        epoch among them stored."""
        seen: set[str] = set()
        for call in calls:
            said = call.get("served_model"), call.get("fingerprint")
            if call.get("error") is not None and said == (None, None):
                call["epoch"] = None
                continue
            epoch = call["epoch"] = self.epoch_for(judge, *said)
            if epoch not in seen:
                seen.add(epoch)
                self.conn.execute(
                    "INSERT OR IGNORE INTO epochs(judge, epoch, model, fingerprint, endpoint, "
                    "first_at) VALUES (?, ?, ?, ?, ?, ?)",
                    [judge, epoch, said[0] or self._definitions[judge][0], said[1],
                     call.get("endpoint"), now()])
        return calls

    # -- judge epochs (store/epochs.py): a judge's verdicts are read from one epoch ------------

    def epoch_for(self, judge: str, model: str | None, fingerprint: str | None) -> str:
        """The epoch of a reply to this judge saying ``model`` served it with ``fingerprint``
        (a reply naming no model: the judge's configured one)."""
        # Hashed once a (judge, model, fingerprint): a million batch results are three epochs.
        cached = self._epochs_known.get((judge, model, fingerprint))
        if cached is not None:
            return cached
        known = self._definitions.get(judge)
        if known is None:
            rows = self._rows("SELECT * FROM judges WHERE name = ?", [judge])
            if not rows:
                raise SessionError(f"There is no judge named '{judge}' in {self.where}.")
            examples = self.conn.execute("SELECT golden_id, rank, verdict FROM judge_examples "
                                         "WHERE judge = ? ORDER BY position", [judge]).fetchall()
            known = self._definitions[judge] = (rows[0]["model"],
                                                epochs.definition(dict(rows[0]), examples))
        configured, definition = known
        epoch = epochs.epoch_of(definition, model or configured, fingerprint)
        self._epochs_known[(judge, model, fingerprint)] = epoch
        return epoch

    def _forget_definition(self, judge: str) -> None:
        """Drop what was hashed of a judge that is removed or renamed."""
        self._definitions.pop(judge, None)
        self._epochs_known = {k: v for k, v in self._epochs_known.items() if k[0] != judge}

    def epoch_in_use(self, judge: str) -> str | None:
        """The epoch whose verdicts are the judge's verdicts in force: the chosen one
        (``epochs_read``), else the one holding its newest verdict (None: it has none)."""
        chosen = self._chosen_epochs.get(judge)
        if chosen is not None:
            return chosen
        latest: str | None = self._scalar("SELECT epoch FROM epochs WHERE judge = ? "
                                          "ORDER BY last_id DESC, first_at DESC LIMIT 1", [judge])
        return latest

    @contextmanager
    def epochs_read(self, chosen: dict[str, str | None]) -> Iterator[None]:
        """Read these judges' verdicts from these epochs (judge -> epoch; None: as before)
        while inside, then as before."""
        before = dict(self._chosen_epochs)
        self._chosen_epochs.update({j: e for j, e in chosen.items() if e is not None})
        try:
            yield
        finally:
            self._chosen_epochs = before

    def judge_epochs(self, judge: str | None = None, *,
                     counted: bool = True) -> list[dict[str, Any]]:
        """Every epoch (of one judge, or of all), oldest first a judge: judge, epoch, model and
        fingerprint as served, endpoint, first_at, last_id and last_at (its newest verdict's
        id and time; 0 and None for an epoch that served only re-checks) and, when
        ``counted``, chunks (how many hold a verdict of it: a pass over the judge's verdicts,
        about a second at a million)."""
        where, params = (" WHERE e.judge = ?", [judge]) if judge else ("", [])
        rows = [dict(row) for row in self._rows(
            "SELECT e.judge, e.epoch, e.model, e.fingerprint, e.endpoint, e.first_at, e.last_id, "
            "(SELECT created_at FROM verdicts WHERE id = e.last_id) AS last_at FROM epochs e"
            + where + " ORDER BY e.judge, e.last_id, e.first_at", params)]
        if counted:
            counts = {(j, e): n for j, e, n in self.conn.execute(
                "SELECT judge, epoch, count(DISTINCT chunk_id) FROM verdicts WHERE error IS NULL "
                "AND repetition = 1 AND epoch IS NOT NULL" + (" AND judge = ?" if judge else "")
                + " GROUP BY judge, epoch", params)}
            for row in rows:
                row["chunks"] = counts.get((row["judge"], row["epoch"]), 0)
        return rows

    # -- gullibility probes (annotator.scoring.probes): apart from chunks, so nothing else reads them --

    def probes(self) -> list[Probe]:
        """Every probe, by golden position, then kind and number."""
        return [Probe(*row) for row in self.conn.execute(
            """SELECT p.id, p.golden_id, p.kind, p.number, p.text FROM probes p
               JOIN goldens g ON g.id = p.golden_id ORDER BY g.position, p.kind, p.number""")]

    def add_probes(self, rows: Sequence[tuple[str, str, int, str]]) -> None:
        """Store new probes, (golden id, kind, number, text) each, in one transaction."""
        at = now()
        with self._write():
            self.conn.executemany(
                "INSERT INTO probes(golden_id, kind, number, text, created_at) "
                "VALUES (?, ?, ?, ?, ?)", [(*row, at) for row in rows])

    def record_probe_calls(self, judge: str, calls: Sequence[dict[str, Any]]) -> None:
        """Store calls on probes (record_calls' dicts, the probe's id as chunk_id)."""
        at = now()
        with self._write():
            self.conn.executemany(
                f"INSERT INTO probe_calls(judge, probe_id, {', '.join(_PROBE_CALL_COLUMNS)}, "
                f"created_at) VALUES ({', '.join('?' * (len(_PROBE_CALL_COLUMNS) + 3))})",
                [(judge, c["chunk_id"], *(c.get(k) for k in _PROBE_CALL_COLUMNS), at)
                 for c in calls])

    def probes_answered(self, judge: str) -> dict[int, set[str]]:
        """Probe id -> the requests (sha256) that gave this judge a verdict on it."""
        out: dict[int, set[str]] = {}
        for probe_id, sha in self.conn.execute(
                "SELECT probe_id, request_sha256 FROM probe_calls WHERE judge = ? AND "
                "error IS NULL", [judge]):
            out.setdefault(probe_id, set()).add(sha)
        return out

    def reason_marks(self, annotators: Sequence[str] | None = None) -> dict[str, tuple[int, int]]:
        """Judge -> (verdicts people accepted with its reason on screen, those whose reason
        they marked wrong), over everyone's labels or the annotators named."""
        where = (f"AND annotator IN ({','.join('?' * len(annotators))})"
                 if annotators is not None else "")
        rows = self.conn.execute(
            f"""SELECT judge, count(*), sum(reason_wrong) FROM labels
                WHERE action = 'accept' AND judge IS NOT NULL AND verdict IS NOT NULL {where}
                GROUP BY judge""", list(annotators or []))
        return {judge: (accepted, wrong) for judge, accepted, wrong in rows}

    # -- attention checks (annotator.scoring.checks): never labels, never in a statistic -------------

    def add_checks(self, source: str, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Keep these (golden id, record) checks from a source, once each (a check kept before
        stays as it was: its answers were given to it)."""
        with self._write():
            self.conn.executemany(
                "INSERT OR IGNORE INTO checks(source, golden_id, record, created_at) "
                "VALUES (?, ?, ?, ?)",
                [(source, golden_id, json.dumps(record, ensure_ascii=False), now())
                 for golden_id, record in items])

    def checks(self) -> list[tuple[int, str, str, dict[str, Any]]]:
        """Every check: (id, source, golden id, record), in the order they were added."""
        return [(row[0], row[1], row[2], json.loads(row[3])) for row in self.conn.execute(
            "SELECT id, source, golden_id, record FROM checks ORDER BY id")]

    def check_answers(self, annotator: str, check_id: int | None = None
                      ) -> dict[tuple[int, int], sqlite3.Row]:
        """(check id, rank) -> this person's answer row, on one check or every one (``word``:
        the answer's stored word; ``answer``: its verdict, as files carry it)."""
        where = "" if check_id is None else "AND check_id = ?"
        return {(row["check_id"], row["rank"]): row for row in self._rows(
            f"""SELECT check_id, rank, answer AS word, {_CHECK_ANSWER_SELECT}
                FROM check_answers WHERE annotator = ? {where}""",
            [annotator, *([] if check_id is None else [check_id])])}

    def answer_check(self, annotator: str, check_id: int, rank: int, *, truth: int | None,
                     answer: Answer, shown_verdict: int | None = None,
                     note: str | None = None) -> None:
        """Keep (or replace) a person's answer on one chunk of a check, apart from labels."""
        word = kind_of(answer).word
        with self._write():
            self.conn.execute(
                """INSERT INTO check_answers(annotator, check_id, rank, truth, answer,
                                             shown_verdict, note, answered_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(annotator, check_id, rank) DO UPDATE SET
                     answer = excluded.answer,
                     shown_verdict = excluded.shown_verdict,
                     note = coalesce(excluded.note, check_answers.note),
                     answered_at = excluded.answered_at""",
                (annotator, check_id, rank, truth, word, shown_verdict, note, now()))
            self._event("check", annotator=annotator,
                        payload={"check_id": check_id, "rank": rank, "answer": answer})

    def note_check(self, annotator: str, check_id: int, rank: int, truth: int | None,
                   note: str | None) -> None:
        """Set (or clear) a person's comment on one chunk of a check."""
        with self._write():
            self.conn.execute(
                """INSERT INTO check_answers(annotator, check_id, rank, truth, note, answered_at)
                   VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT(annotator, check_id, rank) DO UPDATE SET note = excluded.note""",
                (annotator, check_id, rank, truth, note or None, now()))

    def undo_check(self, annotator: str, check_id: int) -> int | None:
        """Take back this person's latest answer on a check; the rank it was on (None: none)."""
        with self._write():
            row = self.conn.execute(
                """SELECT id, rank FROM check_answers WHERE annotator = ? AND check_id = ?
                     AND answer IS NOT NULL
                   ORDER BY answered_at DESC, id DESC LIMIT 1""", [annotator, check_id]).fetchone()
            if row is None:
                return None
            self.conn.execute("UPDATE check_answers SET answer = NULL WHERE id = ?",
                              [row[0]])
            self._event("check_undo", annotator=annotator,
                        payload={"check_id": check_id, "rank": row[1]})
            return int(row[1])

    def check_scores(self) -> dict[str, tuple[int, int]]:
        """Person -> (check chunks answered 0 or 1 that have a truth, those answered right)."""
        return {person: (answered, right) for person, answered, right in self.conn.execute(
            """SELECT annotator, count(*), sum(verdict = truth) FROM check_answers
               WHERE verdict IS NOT NULL AND truth IS NOT NULL GROUP BY annotator""")}

    # -- probe results (annotator.scoring.probes) -----------------------------------------------------

    def probe_results(self, judge: str | None = None) -> dict[str, dict[str, tuple[int, int]]]:
        """Judge -> probe kind -> (probes with a verdict, probes it called useful), from each
        probe's latest verdict (of one judge, or every judge that ran probes)."""
        out: dict[str, dict[str, tuple[int, int]]] = {}
        for name, kind, n, useful in self.conn.execute(
                """SELECT c.judge, p.kind, count(*), sum(c.verdict) FROM probe_calls c
                   JOIN probes p ON p.id = c.probe_id
                   WHERE c.id IN (SELECT max(id) FROM probe_calls WHERE error IS NULL
                                  AND (? IS NULL OR judge = ?) GROUP BY judge, probe_id)
                   GROUP BY c.judge, p.kind ORDER BY c.judge, p.kind""", [judge, judge]):
            out.setdefault(name, {})[kind] = (int(n), int(useful))
        return out

    # -- judge runs: leases, transports, the calls' record, prices -----------------------------

    def take_lease(self, judge: str, holder: dict[str, Any], seconds: float,
                   alive: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        """Take the right to run a judge for ``seconds``; the other holder when refused (a lease
        not yet expired whose holder ``alive`` says still runs). Renew by taking it again."""
        key = f"lease:{judge}"
        with self._write():
            current = self._setting(key)
            now = datetime.now(UTC).timestamp()
            if (current is not None and current.get("id") != holder["id"]
                    and current.get("until", 0) > now and alive(current)):
                return dict(current)
            self._set_setting(key, {**holder, "until": now + seconds})
        return None

    def release_lease(self, judge: str, holder_id: str) -> None:
        """Give up a judge's lease, if this holder still has it."""
        key = f"lease:{judge}"
        with self._write():
            current = self._setting(key)
            if current is not None and current.get("id") == holder_id:
                self.conn.execute("DELETE FROM settings WHERE key = ?", [key])

    def judge_transport(self, judge: str) -> dict[str, Any] | None:
        """What a judge's endpoint accepted last: its response format and whether logprobs."""
        value = self._setting(f"transport:{judge}")
        return None if value is None else dict(value)

    def set_judge_transport(self, judge: str, transport: dict[str, Any]) -> None:
        """Remember what a judge's endpoint accepts, for its next run."""
        with self._write():
            self._set_setting(f"transport:{judge}", transport)

    def confidence_gaps(self, judge: str) -> dict[str, int]:
        """Why verdicts in force carry no P(relevant): reason -> how many (logprobs asked for)."""
        # The bare column comes from the row holding max(id): the verdict in force, as verdicts().
        return dict(self.conn.execute(
            """SELECT note, count(*) FROM (
                 SELECT confidence_note AS note, max(id) FROM verdicts
                 WHERE judge = ? AND error IS NULL AND repetition = 1 AND epoch IS ?
                 GROUP BY chunk_id) AS latest
               WHERE note IS NOT NULL GROUP BY note ORDER BY count(*) DESC""",
            [judge, self.epoch_in_use(judge)]))

    def latest_verdict_id(self) -> int:
        """The id of the newest stored call of any judge (0 when none): cheap change detection."""
        return int(self._scalar("SELECT coalesce(max(id), 0) FROM verdicts"))

    def verdict_profile(self, judge: str) -> tuple[int, int, str | None, int]:
        """Over a judge's verdicts in force: how many, how many useful, its most common reason
        and how often that reason was given (to notice a judge that says the same thing)."""
        in_force = ("SELECT verdict, reason, max(id) FROM verdicts WHERE judge = ? AND error IS "
                    "NULL AND repetition = 1 AND epoch IS ? GROUP BY chunk_id")
        epoch = self.epoch_in_use(judge)
        total, useful = self.conn.execute(
            f"SELECT count(*), coalesce(sum(verdict), 0) FROM ({in_force}) AS latest",
            [judge, epoch]).fetchone()
        top = self.conn.execute(
            f"SELECT reason, count(*) FROM ({in_force}) AS latest WHERE reason IS NOT NULL AND reason != '' "
            "GROUP BY reason ORDER BY count(*) DESC LIMIT 1", [judge, epoch]).fetchone()
        return int(total), int(useful), top[0] if top else None, int(top[1]) if top else 0

    def judged_requests(self, judge: str) -> dict[tuple[int, int], set[str]]:
        """(chunk id, repetition) -> the request hashes that already gave this judge a verdict
        in its latest epoch (a chunk judged only in an earlier one is judged again: a run
        brings the judge's verdicts into one epoch)."""
        out: dict[tuple[int, int], set[str]] = {}
        rows = self.conn.execute(
            "SELECT chunk_id, repetition, request_sha256 FROM verdicts WHERE judge = ? "
            "AND error IS NULL AND request_sha256 IS NOT NULL AND epoch IS ?",
            [judge, self.epoch_in_use(judge)])
        for chunk_id, repetition, sha in rows:
            out.setdefault((chunk_id, repetition), set()).add(sha)
        return out

    def repetitions(self, judge: str) -> dict[int, dict[int, int]]:
        """Chunk id -> repetition -> the judge's latest verdict in that repetition, for the
        chunks the judge was asked about more than once (in the epoch in use)."""
        out: dict[int, dict[int, int]] = {}
        epoch = self.epoch_in_use(judge)
        rows = self.conn.execute(
            "SELECT chunk_id, repetition, verdict, max(id) FROM verdicts "
            "WHERE judge = ? AND error IS NULL AND epoch IS ? AND chunk_id IN (SELECT chunk_id "
            "FROM verdicts WHERE judge = ? AND repetition > 1 AND error IS NULL AND epoch IS ?) "
            "GROUP BY chunk_id, repetition", [judge, epoch, judge, epoch])
        for chunk_id, repetition, verdict, _ in rows:
            out.setdefault(chunk_id, {})[repetition] = verdict
        return out

    def call_summary(self, judge: str) -> dict[str, Any]:
        """A judge's calls in all: count, failures, replies (to calls this tool made; imported
        verdicts have none) and those that were not a verdict, tokens, every latency."""
        # One pass over the judge's calls; the unstable chunks and the latencies are read
        # again only when there are some (an imported judge has neither).
        row = dict(self._rows(
            """SELECT count(*) AS calls, count(error) AS failed,
                      sum(request_sha256 IS NOT NULL AND error IS NOT NULL
                          AND raw_reply IS NOT NULL) AS bad_replies,
                      sum(request_sha256 IS NOT NULL AND (raw_reply IS NOT NULL OR error IS NULL))
                        AS replies,
                      coalesce(sum(tokens_in), 0) AS tokens_in,
                      coalesce(sum(tokens_out), 0) AS tokens_out,
                      coalesce(sum(tokens_cached), 0) AS tokens_cached,
                      count(CASE WHEN unstable = 1 THEN 1 END) AS unstable,
                      count(latency_ms) AS timed
               FROM verdicts WHERE judge = ?""", [judge])[0])
        if row["unstable"]:
            row["unstable"] = self._scalar(
                "SELECT count(DISTINCT chunk_id) FROM verdicts WHERE judge = ? AND unstable = 1",
                [judge])
        latencies = [r[0] for r in self.conn.execute(
            "SELECT latency_ms FROM verdicts WHERE judge = ? AND latency_ms IS NOT NULL",
            [judge])] if row.pop("timed") else []
        return {**row, "latencies_ms": latencies}

    def calls(self, judge: str) -> list[dict[str, Any]]:
        """Every stored call of a judge (verdicts and errors), oldest first."""
        return [dict(row) for row in
                self._rows("SELECT * FROM verdicts WHERE judge = ? ORDER BY id", [judge])]

    def set_price(self, judge: str, price: Price) -> None:
        """Remember a judge's price in USD per million prompt, completion and cached tokens."""
        with self._write():
            self._set_setting(f"price:{judge}", list(price))

    def price(self, judge: str) -> Price | None:
        """A judge's remembered price (USD per million tokens in, out, cached), if given."""
        value = self._setting(f"price:{judge}")
        if value is None:
            return None
        cached = value[2] if len(value) > 2 else None  # files from before cached prices
        return Price(float(value[0]), float(value[1]), None if cached is None else float(cached))

    # -- session settings: the grade scale, an unranked pool ----------------------------------

    def scale(self) -> Scale | None:
        """The session's grade scale (None: binary, no grades)."""
        value = self._setting("grade_scale")
        return None if value is None else Scale(int(value[0]), int(value[1]))

    def unranked(self) -> bool:
        """Whether the session's chunks are a pool with no order (a TREC pool)."""
        return bool(self._setting("unranked"))

    def refuse_collection(self, scale: Scale, unranked: bool) -> None:
        """Raise SessionError when goldens on ``scale``, ranked or not, cannot join this
        session: another scale with grades stored on it, or pools beside ranked lists."""
        stored = self.scale()
        if stored is not None and stored.top != scale.top and self._scalar(
                "SELECT EXISTS(SELECT 1 FROM labels WHERE grade IS NOT NULL) OR EXISTS("
                "SELECT 1 FROM verdicts WHERE grade IS NOT NULL)"):
            raise SessionError(f"{self.where} grades 0 to {stored.top}; it cannot take grades "
                               f"0 to {scale.top} too. Import into a new session.")
        if self.count_goldens() and self.unranked() != unranked:
            have, given = ("unranked pools", "a ranking") if self.unranked() else (
                "ranked lists", "an unranked pool")
            raise SessionError(f"{self.where} holds {have}; {given} cannot join them (CP and "
                               "every rank statistic would mean nothing there). Import into a "
                               "new session.")

    # -- the random sample (annotator.scoring.sampling) -----------------------------------------------

    def gate(self) -> dict[str, Any] | None:
        """The qualification gate (scoring/gate.py): {checks, min, set_at, exempt}; None when
        the session has none."""
        value = self._setting("gate")
        return None if value is None else dict(value)

    def set_gate(self, checks: int, minimum: float) -> dict[str, Any]:
        """Keep a qualification gate of ``checks`` check chunks passed at ``minimum``; the people
        who labelled before the first gate are exempt (the gate is for newcomers). Returns it."""
        with self._write():
            before = self._setting("gate")
            exempt = before["exempt"] if before else [row[0] for row in self.conn.execute(
                "SELECT DISTINCT annotator FROM labels ORDER BY annotator")]
            gate = {"checks": checks, "min": minimum,
                    "set_at": before["set_at"] if before else now(), "exempt": exempt}
            self._set_setting("gate", gate)
        return gate

    def random_sample(self) -> dict[str, Any] | None:
        """The sample of goldens drawn for unbiased estimates: {size, seed, golden_ids} and, for
        a stratified or active design, what annotator.scoring.sampling stores with it."""
        value = self._setting("random_sample")
        if value is None:
            return None
        sample = dict(value)
        # The one check of a stored design: every reader below may then dispatch on its name.
        if (design := sample.get("design", "uniform")) not in DESIGNS:
            raise SessionError(
                f"{self.where} holds a sample drawn by a design this release does not know "
                f"({json.dumps(design)}; it knows {', '.join(DESIGNS)}): it was written by "
                "another release or by hand. Draw a sample again with 'annotator sample "
                f"{self.where} --size N --design D' (it replaces that one), or open the file "
                "with the release that drew it.")
        return sample

    def stored_draw(self, size: int, seed: int, design: str) -> dict[str, Any] | None:
        """The stored sample when a draw with these arguments would give it back without being
        made again (a design drawn from the judge's verdicts stands as drawn); else None."""
        value = self._setting("random_sample")  # as stored: a design unknown here is redrawn
        stored = None if value is None else dict(value)
        if stored is None or design == "uniform" or not _same_draw(stored, size, seed, design):
            return None
        return stored

    def set_random_sample(self, size: int, seed: int, golden_ids: list[str],
                          design: dict[str, Any] | None = None) -> dict[str, Any]:
        """Store the sample of goldens drawn for unbiased estimates (once: a second, different
        draw is refused) and return the sample in force. ``design``: what a stratified or
        active draw adds (its name, probabilities, strata or draws; annotator.scoring.sampling)."""
        wanted = {"size": size, "seed": seed, "golden_ids": golden_ids, **(design or {})}
        kind = wanted.get("design", "uniform")
        with self._write():
            stored = self._setting("random_sample")
            if stored is not None and stored.get("design", "uniform") not in DESIGNS:
                stored = None  # unreadable by this release (random_sample says so): replaced
            if stored is not None:
                # A uniform draw depends on the golden ids alone; the others on the judge's
                # verdicts at the time, so the stored draw stands for the same arguments.
                if _same_draw(stored, size, seed, kind) and (
                        kind != "uniform" or stored["golden_ids"] == golden_ids):
                    return dict(stored)
                raise SessionError(
                    f"This session's sample was drawn with --sample {stored['size']} --design "
                    f"{stored.get('design', 'uniform')} --seed {stored['seed']}; open it with "
                    "those to keep the estimates valid (or without --sample to label every "
                    "golden).")
            self._set_setting("random_sample", wanted)
            self._event("sample", payload={"size": size, "seed": seed, "design": kind})
        return wanted

    # -- batches ------------------------------------------------------------------------------

    def next_batch_round(self) -> int:
        """The number of the session's next batch round (1 for its first; numbered across
        judges, so every request's custom_id is the session's own)."""
        return int(self._scalar("SELECT coalesce(max(round), 0) + 1 FROM batch_requests"))

    def add_batch_requests(self, judge: str, rows: Iterable[dict[str, Any]]) -> None:
        """Store the requests of a round (custom_id, round, part, task, piece, pieces,
        chunk_ids, ranks, repetition, request_sha256, logprobs), in one transaction."""
        columns = ("custom_id", "round", "part", "task", "piece", "pieces", "chunk_ids", "ranks",
                   "repetition", "request_sha256", "logprobs")
        values = operator.itemgetter(*columns)
        with self._write():
            self.conn.executemany(
                f"INSERT INTO batch_requests(judge, {', '.join(columns)}) "
                f"VALUES (?, {', '.join('?' * len(columns))})",
                ((judge, *values(row)) for row in rows))

    def forget_batch_part(self, judge: str, round_: int, part: int) -> None:
        """Drop the requests of a file that never became a batch (its tasks are judged again)."""
        with self._write():
            self.conn.execute("DELETE FROM batch_requests WHERE judge = ? AND round = ? AND "
                              "part = ? AND state = 'pending'", [judge, round_, part])

    def unsubmitted_parts(self, judge: str | None = None) -> list[tuple[str, int, int]]:
        """(judge, round, part) of request files stored but not known to be a batch yet."""
        return [tuple(row) for row in self.conn.execute(
            """SELECT DISTINCT r.judge, r.round, r.part FROM batch_requests r
               WHERE (? IS NULL OR r.judge = ?) AND r.state = 'pending' AND NOT EXISTS (
                 SELECT 1 FROM batches b WHERE b.judge = r.judge AND b.round = r.round
                 AND b.part = r.part) ORDER BY 1, 2, 3""", [judge, judge])]

    def record_batch(self, batch: dict[str, Any]) -> None:
        """Store a batch the provider created (or a request file exported), or its new state."""
        with self._write():
            self.conn.execute(
                """INSERT INTO batches(id, judge, round, part, input_file_id, output_file_id,
                                       error_file_id, state, requests, completed, failed,
                                       created_at, updated_at)
                   VALUES (:id, :judge, :round, :part, :input_file_id, :output_file_id,
                           :error_file_id, :state, :requests, :completed, :failed, :at, :at)
                   ON CONFLICT(id) DO UPDATE SET output_file_id = excluded.output_file_id,
                     error_file_id = excluded.error_file_id, state = excluded.state,
                     completed = excluded.completed, failed = excluded.failed,
                     updated_at = excluded.updated_at""", {**batch, "at": now()})

    def batches(self, judge: str | None = None) -> list[dict[str, Any]]:
        """Every batch, oldest first (of one judge when given)."""
        return [dict(row) for row in self._rows(
            "SELECT * FROM batches WHERE ? IS NULL OR judge = ? ORDER BY created_at, id",
            [judge, judge])]

    def set_batch_collected(self, batch_id: str) -> None:
        """Mark a batch's results as stored; requests without a result failed (judged again by
        the next --batch run)."""
        with self._write():
            self.conn.execute("UPDATE batch_requests SET state = 'failed' WHERE state = 'pending'"
                              " AND (judge, round, part) = (SELECT judge, round, part FROM "
                              "batches WHERE id = ?)", [batch_id])
            self.conn.execute("UPDATE batches SET collected = 1, updated_at = ? WHERE id = ?",
                              [now(), batch_id])

    def batch_busy(self, judge: str) -> set[tuple[int, int]]:
        """(first chunk id, repetition) of each task with a request still out in a batch (not
        ended, or ended and not yet collected): a new round leaves those alone."""
        out = set()
        for chunk_ids, repetition in self.conn.execute(
                """SELECT r.chunk_ids, r.repetition FROM batch_requests r
                   WHERE r.judge = ? AND r.state IN ('pending', 'answered')""", [judge]):
            out.add((int(json.loads(chunk_ids)[0]), int(repetition)))
        return out

    def task_requests(self, task: str) -> list[dict[str, Any]]:
        """Every request of a task (a listwise golden's windows), in order."""
        return [dict(row) for row in self._rows(
            "SELECT * FROM batch_requests WHERE task = ? ORDER BY piece", [task])]

    def batch_requests_of(self, custom_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored requests among these custom_ids (those this session never made are
        absent), in one query."""
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(custom_ids), 900):
            part = list(custom_ids[start:start + 900])
            out.update((row["custom_id"], dict(row)) for row in self._rows(
                f"""SELECT r.*, b.id AS batch_id FROM batch_requests r LEFT JOIN batches b
                    ON b.judge = r.judge AND b.round = r.round AND b.part = r.part
                    WHERE r.custom_id IN ({','.join('?' * len(part))})""", part))
        return out

    def store_batch_results(self, judge: str, results: Sequence[
            tuple[str, str | None, list[dict[str, Any]] | None]]) -> int:
        """In one transaction, for each (custom_id, raw result or None, calls): store the calls
        unless that request's result was already stored, and mark the request: answered, its
        raw result kept, while other pieces of its task are out (no calls); failed, with every
        piece of its task, when it never ran (calls None); stored once its calls are in. Returns
        the calls stored. A verdict for a chunk that already has one from the same request (a
        live run got there first) is not stored twice."""
        with self._write():
            states: dict[str, tuple[str, int]] = {}
            ids = [custom_id for custom_id, _, _ in results]
            for start in range(0, len(ids), 900):
                part = ids[start:start + 900]
                states.update((c, (state, pieces)) for c, state, pieces in self.conn.execute(
                    f"SELECT custom_id, state, pieces FROM batch_requests WHERE custom_id IN "
                    f"({','.join('?' * len(part))})", part))
            chunk_ids = sorted({c["chunk_id"] for _, _, calls in results for c in calls or ()})
            judged: set[tuple[int, int, str]] = set()
            for start in range(0, len(chunk_ids), 900):
                part = chunk_ids[start:start + 900]
                judged.update(self.conn.execute(
                    f"SELECT chunk_id, repetition, request_sha256 FROM verdicts WHERE judge = ? "
                    f"AND error IS NULL AND chunk_id IN ({','.join('?' * len(part))})",
                    [judge, *part]))
            fresh: list[dict[str, Any]] = []
            failed: list[tuple[str]] = []
            answered: list[tuple[str | None, str]] = []
            done: list[tuple[str, str]] = []  # a task of one request: by its custom_id
            whole: list[tuple[str, str]] = []
            for custom_id, raw, calls in results:
                state, pieces = states.get(custom_id, ("", 1))
                if state == "stored":
                    continue
                if calls is None:
                    # A window that never ran fails its whole golden (never a partial one): the
                    # windows kept waiting for it are let go, so the next round asks them all.
                    if pieces == 1:
                        failed.append((custom_id,))
                    else:
                        whole.append(("failed", custom_id))
                elif not calls:
                    answered.append((scrubbed(raw), custom_id))
                else:
                    fresh += [c for c in calls if c.get("error") is not None or (
                        c["chunk_id"], c.get("repetition", 1), c["request_sha256"]) not in judged]
                    (done if pieces == 1 else whole).append(
                        ("stored" if any(c.get("error") is None for c in calls) else "failed",
                         custom_id))
            self._insert_calls(judge, fresh)
            self.conn.executemany("UPDATE batch_requests SET state = 'failed' "
                                  "WHERE custom_id = ?", failed)
            self.conn.executemany("UPDATE batch_requests SET state = 'answered', result = ? "
                                  "WHERE custom_id = ?", answered)
            self.conn.executemany("UPDATE batch_requests SET state = ? WHERE custom_id = ?", done)
            # Every piece of the task at once: a listwise golden's windows are stored together.
            self.conn.executemany("UPDATE batch_requests SET state = ?, result = NULL WHERE task = "
                                  "(SELECT task FROM batch_requests WHERE custom_id = ?)", whole)
        return len(fresh)

    # -- splits and gold labels ------------------------------------------------------------------

    def splits(self) -> dict[str, str]:
        """Golden id -> 'dev' or 'test', for every golden given a split."""
        return dict(self.conn.execute("SELECT golden_id, split FROM splits"))

    def set_splits(self, splits: dict[str, str], seed: int | None, *, replace: bool) -> None:
        """Store goldens' splits; with ``replace`` every earlier split is dropped first."""
        with self._write():
            if replace:
                self.conn.execute("DELETE FROM splits")
            stamp = now()
            self.conn.executemany(
                "INSERT INTO splits(golden_id, split, seed, created_at) VALUES (?, ?, ?, ?)",
                [(golden_id, split, seed, stamp) for golden_id, split in splits.items()])
            self._event("split", payload={"seed": seed, "replace": replace,
                                          "dev": sum(v == "dev" for v in splits.values()),
                                          "test": sum(v == "test" for v in splits.values())})

    def gold_labels(self) -> dict[int, GoldLabel]:
        """Chunk id -> its adjudicated gold label."""
        return {row[0]: GoldLabel(*row) for row in self.conn.execute(
            f"SELECT {columns(GoldLabel)} FROM gold_labels")}

    def set_gold(self, chunk_id: int, verdict: int, decided_by: str,
                 note: str | None = None) -> GoldLabel:
        """Record an adjudicator's gold label on a chunk (replacing an earlier one), with its
        event, and commit it."""
        checked(verdict, "a gold label")
        with self._write():
            before = self._rows("SELECT verdict, decided_by, note FROM gold_labels "
                                "WHERE chunk_id = ?", [chunk_id])
            stamp = now()
            self.conn.execute(
                """INSERT INTO gold_labels(chunk_id, verdict, decided_by, note, decided_at)
                   VALUES (?, ?, ?, ?, ?) ON CONFLICT(chunk_id) DO UPDATE SET
                     verdict = excluded.verdict, decided_by = excluded.decided_by,
                     note = excluded.note, decided_at = excluded.decided_at""",
                (chunk_id, verdict, decided_by, note or None, stamp))
            self._event("adjudicate", annotator=decided_by, chunk_id=chunk_id,
                        golden_id=self.golden_id_of(chunk_id),
                        payload={"before": dict(before[0]) if before else None,
                                 "after": {"verdict": verdict, "note": note or None}})
        return GoldLabel(chunk_id, verdict, decided_by, note or None, stamp)

    def clear_gold(self, chunk_id: int, decided_by: str) -> None:
        """Take back the gold label on a chunk (an adjudicator's undo), with its event."""
        with self._write():
            self.conn.execute("DELETE FROM gold_labels WHERE chunk_id = ?", [chunk_id])
            self._event("adjudicate", annotator=decided_by, chunk_id=chunk_id,
                        golden_id=self.golden_id_of(chunk_id), payload={"after": None})

    def label_conflicts(self) -> list[dict[str, Any]]:
        """Every version of a label one person gave differently in merged files, with where."""
        return [dict(row) for row in self._rows(
            """SELECT x.annotator, c.golden_id, c.rank, x.chunk_id, x.verdict, x.note,
                      x.updated_at, l.verdict AS in_force
               FROM label_conflicts x JOIN chunks c ON c.id = x.chunk_id
               JOIN goldens g ON g.id = c.golden_id
               LEFT JOIN labels l ON l.annotator = x.annotator AND l.chunk_id = x.chunk_id
               ORDER BY g.position, c.rank, x.annotator, x.updated_at""")]

    # -- import and export ----------------------------------------------------------------------

    def import_goldens(
        self,
        records: Iterable[GoldenRecord],
        *,
        path: str,
        replace: bool = False,
        progress: Callable[[int], None] | None = None,
        checks: Iterable[CheckRecord] = (),
        settings: dict[str, Any] | None = None,
    ) -> ImportSummary:
        """Import goldens (with any verdicts and labels), then attention checks with their
        answers, in one transaction: all or nothing. ``checks`` is read after ``records`` (so
        a list the reader fills as it goes is whole by then).

        ``settings`` (a grade scale, an unranked pool) are stored in the same transaction.
        A golden whose id is already in the session with the same content changes nothing;
        with other content it is an error unless ``replace``. Verdicts and labels already in
        the session are kept; a different one for the same chunk is an error unless ``replace``.
        """
        with bulk.fresh_load(self.conn, not self.count_goldens(), own_rows=True), self._write():
            importer = Importer(self, path, replace, now())
            for count, record in enumerate(records, 1):
                importer.add(record)
                if progress is not None and count % 1000 == 0:
                    progress(count)
            importer.finish()
            for check in checks:
                importer.add_check(check)
            for key, value in (settings or {}).items():
                self._set_setting(key, value)
            summary = importer.summary()
            if not summary.changed_nothing:
                self._event("import", payload=asdict(summary))
        if progress is not None:
            progress(summary.goldens_read)
        return summary

    def chunk_doc_ids(self) -> dict[int, str]:
        """Chunk id -> the chunk's own id from its goldens file, for the chunks that have one."""
        return dict(self.conn.execute(
            "SELECT id, doc_id FROM chunks WHERE doc_id IS NOT NULL").fetchall())

    def export_records(self, batch: int = 500) -> Iterator[GoldenRecord]:
        """Every golden with every judge's verdicts and every person's labels and notes."""
        ids = self.golden_ids()
        judges = [judge.name for judge in self.judges()]
        annotators = self.annotators()
        gold = self.gold_labels()
        for start in range(0, len(ids), batch):
            page = ids[start:start + batch]
            verdicts = {name: self.verdicts(name, page) for name in judges}
            labels = {name: self.labels(name, page) for name in annotators}
            for golden in self.goldens(page):
                record = GoldenRecord(
                    id=golden.id, user_input=golden.user_input,
                    retrieved_contexts=[chunk.text for chunk in golden.chunks],
                    reference=golden.reference, response=golden.response,
                    metadata=golden.metadata,
                    retrieved_context_ids=_if_any([chunk.doc_id for chunk in golden.chunks]),
                    retrieved_context_scores=_if_any([chunk.score for chunk in golden.chunks]),
                )
                for name in judges:
                    given = [verdicts[name].get(chunk.id) for chunk in golden.chunks]
                    if any(given):
                        record.judge_verdicts[name] = [
                            None if v is None else JudgeVerdict(v.verdict, v.reason, v.p_relevant,
                                                                v.grade)
                            for v in given
                        ]
                for name in annotators:
                    mine = [labels[name].get(chunk.id) for chunk in golden.chunks]
                    if any(label is not None and label.answer is not None for label in mine):
                        record.human_labels[name] = [
                            None if label is None else label.answer for label in mine
                        ]
                    if any(label is not None and label.note for label in mine):
                        record.human_notes[name] = [
                            None if label is None else label.note for label in mine
                        ]
                    marks = [None if label is None else _marks(label) for label in mine]
                    if any(marks):
                        record.human_marks[name] = marks
                settled = [gold.get(chunk.id) for chunk in golden.chunks]
                if any(settled):
                    record.gold_labels = [None if g is None else _gold_fields(g) for g in settled]
                yield record

    def export_checks(self) -> Iterator[CheckRecord]:
        """Every attention check as stored, with every person's answers on it (session JSONL)."""
        answers: dict[int, dict[str, dict[int, dict[str, Any]]]] = {}
        for row in self._rows(f"SELECT annotator, check_id, rank, {_CHECK_ANSWER_SELECT} "
                              "FROM check_answers ORDER BY annotator, check_id, rank"):
            entry = {key: row[key] for key in CHECK_ANSWER_COLUMNS if row[key] is not None}
            for flag in ("unsure", "distractor"):  # written only when set
                if entry.get(flag):
                    entry[flag] = True
                else:
                    entry.pop(flag, None)
            answers.setdefault(row["check_id"], {}).setdefault(row["annotator"], {})[
                row["rank"]] = entry
        for row in self._rows("SELECT * FROM checks ORDER BY id"):
            record = json.loads(row["record"])
            given = answers.get(row["id"], {})
            yield CheckRecord(row["source"], row["golden_id"], record, row["created_at"], {
                person: [ranks.get(rank) for rank in range(1, len(record["chunks"]) + 1)]
                for person, ranks in given.items()})

    # -- merging --------------------------------------------------------------------------------

    def merge_from(self, paths: Sequence[Path], names: Sequence[str]) -> MergeFacts:
        """Fill this empty session from other session files, in SQLite (store/merging.py), in
        one transaction; say what it holds."""
        if self.count_goldens():
            raise SessionError(f"{self.where} already holds goldens; merge into a new file.")
        conn = self.sqlite
        merging.attach(conn, paths)
        try:
            with bulk.fresh_load(conn), self._write(immediate=False):
                gold_conflicts = merging.merge_into(conn, names)
        finally:
            merging.detach(conn, len(paths))
        versions: dict[tuple[str, str, int], list[tuple[Answer | None, str | None, str]]] = {}
        for annotator, golden_id, rank, answer, note, updated_at in conn.execute(
                """SELECT x.annotator, c.golden_id, c.rank, x.answer, x.note, x.updated_at
                   FROM (SELECT annotator, chunk_id, answer, verdict, unsure, note, updated_at
                         FROM label_conflicts
                         UNION SELECT l.annotator, l.chunk_id, l.answer, l.verdict, l.unsure,
                                      l.note, l.updated_at
                         FROM labels l WHERE EXISTS (SELECT 1 FROM label_conflicts k
                           WHERE k.annotator = l.annotator AND k.chunk_id = l.chunk_id)) x
                   JOIN chunks c ON c.id = x.chunk_id
                   ORDER BY x.annotator, c.golden_id, c.rank, x.updated_at,
                            json_array(x.verdict, x.unsure, x.note)"""):
            versions.setdefault((annotator, golden_id, rank), []).append(
                (from_stored(answer), note, updated_at))
        return MergeFacts(
            goldens=self.count_goldens(),
            judges=[row[0] for row in conn.execute("SELECT name FROM judges ORDER BY name")],
            annotators=[row[0] for row in conn.execute(
                "SELECT DISTINCT annotator FROM labels ORDER BY annotator")],
            labels=int(self._scalar(f"SELECT count(*) FROM labels l WHERE {ANSWERED}")),
            conflicts=versions, gold_conflicts=gold_conflicts)


_CALL_COLUMNS = ("chunk_id", "verdict", "reason", "p_relevant", "error", "raw_reply",
                 "tokens_in", "tokens_out", "latency_ms", "request_sha256", "repetition",
                 "confidence_note", "requests", "grade", "tokens_cached", "unstable", "batch_id",
                 "epoch")
"""A stored call's columns besides its judge and its time (Session.record_calls); a call
may also say ``served_model``, ``fingerprint`` and ``endpoint`` (its epoch is made of them)."""
_CALL_VALUES = operator.itemgetter(*_CALL_COLUMNS)
_RECHECK_COLUMNS = ("chunk_id", "verdict", "reason", "p_relevant", "grade", "error", "raw_reply",
                    "confidence_note", "tokens_in", "tokens_out", "tokens_cached", "latency_ms",
                    "requests", "request_sha256", "epoch")
"""A re-check call's columns besides its re-check and its time."""


def _storage_failure(error: sqlite3.OperationalError) -> bool:
    """Whether an error is the storage refusing a write (not a bug in the SQL)."""
    text = str(error).lower()
    return any(word in text for word in ("locked", "busy", "full", "readonly", "read-only",
                                         "disk i/o"))


_LIVE_CLAIM = "(done_at IS NOT NULL OR expires_at > ?)"
"""A claim that counts toward its golden's quota (the ? is now): done, or its lease running."""


def _later(stamp: str, seconds: float) -> str:
    """The time ``seconds`` after an ISO time of now()'s form, in that form."""
    return (datetime.fromisoformat(stamp) + timedelta(seconds=seconds)).isoformat(
        timespec="milliseconds")


def _decision_state(row: sqlite3.Row | None) -> dict[str, Any] | None:
    """A label's decision fields as an event keeps them; no guideline key while the session
    has none (so an event reads as it did before guidelines, and an undo restores None)."""
    if row is None:
        return None
    state = {field: row[field] for field in _DECISION_FIELDS}
    if state["guideline"] is None:
        del state["guideline"]
    return state


T = TypeVar("T")


def _if_any(values: list[T]) -> list[T] | None:
    """The list, or None when it holds nothing but None (a field the file did not give)."""
    return values if any(v is not None for v in values) else None


def _same_draw(stored: dict[str, Any], size: int, seed: int, design: str) -> bool:
    """Whether a stored sample was drawn with these arguments."""
    return (stored["size"], stored["seed"], stored.get("design", "uniform")) == (size, seed,
                                                                                 design)


def _answer(state: dict[str, Any] | None) -> Answer | None:
    """The answer a decision state (an event's before or after) holds."""
    return None if state is None else from_stored(word_of_state(state))
