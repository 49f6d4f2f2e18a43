"""A session in PostgreSQL: the connection the store writes through, and PostgreSQL's SQL.

The store speaks one SQL, SQLite's, written once in store/session.py and its helpers. Here,
and only here, is what PostgreSQL needs instead:

- ``translate``: each statement's SQLite forms in PostgreSQL's words (placeholders, ``INSERT OR
  IGNORE``, ``IS ?``, ``json_each``, the latest row of a group), once per statement text;
- ``schema_statements``: schema.sql's tables and indexes in PostgreSQL's types;
- ``Connection``: psycopg 3 behind the small part of sqlite3's interface the store uses (rows
  by name and by place, ``lastrowid``, ``in_transaction``, constraint errors as sqlite3's), so
  every method of the store runs unchanged on either.

Writers take turns, as SQLite's ``BEGIN IMMEDIATE`` makes them: every write transaction
first takes one advisory lock of the session's database, so a read-then-write (a quota's
count, then the claim) is exact under any number of processes and hosts; reads never wait.

psycopg is imported only here, and only when a URL is opened (the ``[postgres]`` extra).
"""

from __future__ import annotations

import os
import re
import socket
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from annotator.errors import SessionError
from annotator.place import shown
from annotator.store import schema

if TYPE_CHECKING:
    import psycopg


def _application() -> str:
    """How this process names itself to the server (who holds a screen's lock, in
    pg_stat_activity): asked at each connection, since a served tab is a fork."""
    return f"cp-annotator process {os.getpid()} on {socket.gethostname()}"[:63]


WRITE_LOCK = 0x6370_616E_6E6F_7461  # "cpannota": the advisory lock every write takes first
"""The key of the lock that makes writers take turns (one per database: a session)."""

ITERATION_BATCH = 10_000
"""Rows fetched at a time when a read is iterated."""

# -- the dialect ------------------------------------------------------------------------------

_LITERAL = re.compile(r"'(?:[^']|'')*'")
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bNOT INDEXED\b"), ""),
    (re.compile(r"\bCROSS JOIN (\w+ \w+ ON)\b"), r"JOIN \1"),  # SQLite's loop order: a hint
    (re.compile(r"\bIS NOT \?"), "IS DISTINCT FROM ?"),
    (re.compile(r"\bIS \?"), "IS NOT DISTINCT FROM ?"),
    (re.compile(r"\bAS REAL\)"), "AS DOUBLE PRECISION)"),
    (re.compile(r"\blast_insert_rowid\(\)"), "lastval()"),
    # Ids given as one JSON array: a bigint[] PostgreSQL hashes (twice as quick as a join).
    (re.compile(r"\bIN \(SELECT value FROM json_each\(\?\)\)"),
     "= ANY(translate(?, '[]', '{}')::bigint[])"),
    (re.compile(r"\bjson_extract\((\w+), \?\)"), r"jsonb_path_query_first(\1::jsonb, ?::jsonpath)"),
    (re.compile(r"\bjson_type\((\w+), \?\) IS NOT NULL"),
     r"jsonb_path_exists(\1::jsonb, ?::jsonpath)"),
    (re.compile(r"\bjson_array\("), "jsonb_build_array("),
    # SQLite's comparisons are 0 or 1; PostgreSQL's are booleans, which sum() refuses.
    (re.compile(r"\b(sum|avg)\(((?:[^()]|\([^()]*\))*?(?:=|<>|<|>|\sIS\s|\sIN\s)"
                r"(?:[^()]|\([^()]*\))*)\)", re.IGNORECASE),
     r"\1((\2)::int)"),
    # An optional filter (``? IS NULL OR judge = ?``): a bare NULL's type must be said.
    (re.compile(r"\? IS NULL OR\b"), "?::text IS NULL OR"),
    (re.compile(r"\bmin\(([^(),]+), ([^(),]+)\)"), r"LEAST(\1, \2)"),
    (re.compile(r"\bmax\(([^(),]+), ([^(),]+)\)"), r"GREATEST(\1, \2)"),
]
_IS_WORD = re.compile(r"\bIS ('(?:[^']|'')*')")
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_OR_IGNORE = re.compile(r"^\s*INSERT OR IGNORE INTO\b", re.IGNORECASE)
_INSERT_INTO = re.compile(r"^\s*INSERT INTO\s+\"?(\w+)", re.IGNORECASE)
_MAX_ID = re.compile(r",\s*max\((\w+\.)?id\)")
_GROUP_BY = re.compile(r"GROUP BY ((?:[\w.]+)(?:,\s*[\w.]+)*)")


def _depths(sql: str) -> list[int]:
    """Each character's parenthesis depth."""
    depth, out = 0, []
    for char in sql:
        if char == ")":
            depth -= 1
        out.append(depth)
        if char == "(":
            depth += 1
    return out


def _latest(sql: str) -> str:
    """SQLite's bare columns beside max(id) (the values of the group's latest row) as
    PostgreSQL's DISTINCT ON, the same rows: ``SELECT a, b, max(id) FROM t ... GROUP BY k``
    becomes ``SELECT DISTINCT ON (k) a, b, id FROM t ... ORDER BY k, id DESC``."""
    while (found := _MAX_ID.search(sql)) is not None:
        depths = _depths(sql)
        level = depths[found.start()]
        select = max(m.start() for m in re.finditer(r"\bSELECT\b", sql[:found.start()])
                     if depths[m.start()] == level)
        group = next(m for m in _GROUP_BY.finditer(sql, found.end())
                     if depths[m.start()] == level)
        alias = found.group(1) or ""
        end = group.end()
        sql = (f"{sql[:select]}SELECT DISTINCT ON ({group.group(1)}) "
               f"{sql[select + 6:found.start()].strip()}, {alias}id{sql[found.end():group.start()]}"
               f"ORDER BY {group.group(1)}, {alias}id DESC{sql[end:]}")
    return sql


@lru_cache(maxsize=4096)
def translate(sql: str) -> str:
    """One statement of the store's SQLite in PostgreSQL's words, with psycopg's
    placeholders (``?`` as ``%s``, ``:name`` as ``%(name)s``)."""
    sql = _IS_WORD.sub(r"IS NOT DISTINCT FROM \1", sql)
    ignore = bool(_OR_IGNORE.match(sql))
    if ignore:
        sql = _OR_IGNORE.sub("INSERT INTO", sql, count=1)
    parts: list[str] = []
    last = 0
    for literal in _LITERAL.finditer(sql):
        parts.append(_code(sql[last:literal.start()]))
        parts.append(literal.group(0).replace("%", "%%"))
        last = literal.end()
    parts.append(_code(sql[last:]))
    out = "".join(parts)
    if "max(" in out and "GROUP BY" in out:
        out = _latest(out)
    if ignore:
        out = out.rstrip().rstrip(";") + " ON CONFLICT DO NOTHING"
    return out


def _code(text: str) -> str:
    """The rules on SQL outside string literals."""
    text = text.replace("%", "%%")
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    text = _NAMED.sub(r"%(\1)s", text)
    return text.replace("?", "%s")


_TYPES = [
    (re.compile(r'"?\bid"? INTEGER PRIMARY KEY\b'), "id BIGSERIAL PRIMARY KEY"),
    (re.compile(r"\bINTEGER\b"), "BIGINT"),
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\bVIRTUAL\b"), "STORED"),
    (re.compile(r"GENERATED ALWAYS AS \(answer IS ('\w+')\)"),
     r"GENERATED ALWAYS AS (CASE WHEN answer = \1 THEN 1 ELSE 0 END)"),
]


@cache
def schema_statements() -> tuple[str, ...]:
    """schema.sql's statements in PostgreSQL's types: 64-bit integers (SQLite's), doubles,
    ids from a sequence, generated columns stored (PostgreSQL 15 has no other kind)."""
    out = []
    for statement in schema.statements():
        for pattern, replacement in _TYPES:
            statement = pattern.sub(replacement, statement)
        out.append(statement)
    return tuple(out)


@cache
def id_tables() -> frozenset[str]:
    """The tables whose rows get an id on insert (``lastrowid`` reads it back)."""
    return frozenset(m.group(1) for s in schema.statements()
                     if (m := re.match(r'CREATE TABLE "?(\w+)"?\s*\(\s*"?id"? INTEGER PRIMARY KEY',
                                       s)))


# -- the connection ---------------------------------------------------------------------------


class Row(tuple[Any, ...]):
    """A row read by place or by name, as sqlite3.Row."""

    _names: dict[str, int]

    def __new__(cls, values: Sequence[Any], names: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The columns' names, in order."""
        return list(self._names)


class Cursor:
    """What one statement gave: its rows (tuples, or Rows when ``row_factory`` asks), the id
    it inserted, how many rows it changed."""

    def __init__(self, cursor: psycopg.Cursor[Any] | None, lastrowid: int | None = None
                 ) -> None:
        self._cursor: Any = cursor
        self.lastrowid = lastrowid
        self.row_factory: Any = None

    def with_id(self) -> Cursor:
        """This cursor, its ``lastrowid`` read from the id the insert gave back (none when it
        inserted nothing: ON CONFLICT DO NOTHING)."""
        row = self._cursor.fetchone()
        self.lastrowid = None if row is None else int(row[0])
        return self

    @property
    def rowcount(self) -> int:
        """Rows the statement changed."""
        return 0 if self._cursor is None else int(self._cursor.rowcount)

    @property
    def description(self) -> Any:
        """The columns, as DB-API describes them (None: the statement gave no rows)."""
        return None if self._cursor is None else self._cursor.description

    def _shape(self, row: tuple[Any, ...]) -> Any:
        if self.row_factory is None:
            return row
        description = self._cursor.description or []
        return Row(row, {column.name: i for i, column in enumerate(description)})

    def fetchone(self) -> Any:
        """The next row, or None."""
        if self.description is None:
            return None
        row = self._cursor.fetchone()
        return None if row is None else self._shape(row)

    def fetchall(self) -> list[Any]:
        """The rows left."""
        if self.description is None:
            return []
        rows: list[Any] = self._cursor.fetchall()
        if self.row_factory is None:
            return rows
        names = {column.name: i for i, column in enumerate(self._cursor.description)}
        return [Row(row, names) for row in rows]

    def fetchmany(self, size: int) -> list[Any]:
        """Up to ``size`` more rows."""
        rows: list[Any] = self._cursor.fetchmany(size)
        if self.row_factory is None:
            return rows
        return [self._shape(row) for row in rows]

    def __iter__(self) -> Iterator[Any]:
        if self.description is None:
            return iter(())
        return self._batches()

    def _batches(self) -> Iterator[Any]:
        """The rows, read a batch at a time: psycopg builds a batch's tuples in C, and a
        million-row read never sits in memory whole."""
        while batch := self.fetchmany(ITERATION_BATCH):
            yield from batch


class Connection:
    """A PostgreSQL session's connection, speaking as sqlite3.Connection to the store."""

    dialect = "postgresql"

    def __init__(self, url: str, *, connect_timeout: float = 10, busy_timeout: float = 30
                 ) -> None:
        """Connect, or raise SessionError with one sentence (the password never in it). A
        write waits ``busy_timeout`` seconds for another's to end, as SQLite's does."""
        try:
            import psycopg
        except ImportError:
            raise SessionError(
                f"{shown(url)} is a PostgreSQL session, and PostgreSQL needs psycopg: "
                "pip install 'cp-annotator[postgres]'.") from None
        self.url = url
        try:
            self._pg = psycopg.connect(url, autocommit=True,
                                       connect_timeout=max(1, round(connect_timeout)),
                                       application_name=_application())
        except psycopg.OperationalError as error:
            raise SessionError(_refused(url, error)) from None
        except psycopg.ProgrammingError as error:  # a URL psycopg cannot read
            raise SessionError(f"{shown(url)} is not a PostgreSQL URL psycopg can read "
                               f"({_first_line(error)}). Write it as "
                               "postgresql://USER@HOST:PORT/DATABASE.") from None
        _numbers_as_python(self._pg)
        self._pg.execute(f"SET lock_timeout = {max(1, round(busy_timeout * 1000))}")
        self._ids = id_tables()
        self._statements: dict[str, tuple[str, bool]] = {}
        self._deferred: list[tuple[str, list[Any], Cursor, bool]] = []
        """Inserts to send with the next statement (``defer``)."""
        self._begin = False
        """A write transaction begun, its BEGIN not yet sent (see ``_first``)."""

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open (or begun, to be sent with its first statement)."""
        import psycopg

        return self._begin or (
            self._pg.info.transaction_status != psycopg.pq.TransactionStatus.IDLE)

    @property
    def closed(self) -> bool:
        """Whether the connection was closed."""
        return self._pg.closed

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Cursor:
        """Run one statement of the store's SQL."""
        if sql == "BEGIN IMMEDIATE":
            # Writers take turns (see the module's docstring). The BEGIN and the lock go with
            # the transaction's first statement, in one round trip (_run).
            self._begin = True
            return Cursor(None)
        if self._begin and sql in ("COMMIT", "ROLLBACK"):  # a write that wrote nothing
            self._begin = False
            return Cursor(None)
        if sql == "ROLLBACK":
            self._deferred.clear()
        elif sql == "COMMIT" and self._deferred:
            return self._run("COMMIT", None)  # with the statements deferred till now
        if sql == "BEGIN":  # a read in one snapshot (SQLite's deferred transaction)
            return self._run("BEGIN ISOLATION LEVEL REPEATABLE READ", None)
        statement, returns_id = self._statement(sql)
        cursor = self._run(statement, params)
        return cursor.with_id() if returns_id else cursor

    def defer(self, sql: str, params: Sequence[Any]) -> Cursor:
        """An insert whose result nothing reads before the transaction's next statement: it is
        sent with that statement, or with the COMMIT, in one pipeline. Its cursor's
        ``lastrowid`` is set once it has run."""
        statement, returns_id = self._statement(sql)
        cursor = Cursor(self._pg.cursor())
        self._deferred.append((statement, list(params), cursor, returns_id))
        return cursor

    def _statement(self, sql: str) -> tuple[str, bool]:
        """A statement in PostgreSQL's words, and whether it gives back the id it inserted
        (``lastrowid``): worked out once per statement text."""
        known = self._statements.get(sql)
        if known is None:
            statement = translate(sql)
            insert = _INSERT_INTO.match(statement)
            returns_id = bool(insert and insert.group(1) in self._ids
                              and "RETURNING" not in statement)
            known = self._statements[sql] = (
                statement + " RETURNING id" if returns_id else statement, returns_id)
        return known

    def _run(self, statement: str, params: Sequence[Any] | dict[str, Any] | None) -> Cursor:
        """Run a statement in psycopg's words (``params`` None: no placeholders parsed). A
        write transaction's first goes in one pipeline with its BEGIN and the write lock, and any
        statement with the inserts deferred before it (``defer``): one round trip for them all.
        A lock not had in time is the store's busy error."""
        import psycopg

        cursor = self._pg.cursor()
        values = None if params is None else params if isinstance(params, dict) else list(params)
        try:
            if self._begin or self._deferred:
                begin, self._begin = self._begin, False
                deferred, self._deferred = self._deferred, []
                with self._pg.pipeline():
                    if begin:
                        self._pg.execute("BEGIN")
                        self._pg.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
                    for waiting, waiting_values, waiting_cursor, _ in deferred:
                        waiting_cursor._cursor.execute(waiting, waiting_values)
                    cursor.execute(statement, values)
                for _, _, waiting_cursor, returns_id in deferred:
                    if returns_id:
                        waiting_cursor.with_id()
            else:
                cursor.execute(statement, values)
        except psycopg.IntegrityError as error:
            raise sqlite3.IntegrityError(_first_line(error)) from error
        except psycopg.errors.LockNotAvailable:
            # Another write held the session past the timeout: the store's "busy" sentence.
            raise sqlite3.OperationalError("database is locked") from None
        except psycopg.OperationalError as error:
            if self._pg.closed or self._pg.broken:
                raise SessionError(f"The connection to {shown(self.url)} was lost "
                                   f"({_first_line(error)}); nothing more was saved. Check "
                                   "the server, then run the command again.") from None
            raise
        return Cursor(cursor)

    def executemany(self, sql: str, rows: Iterator[Sequence[Any]] | Sequence[Sequence[Any]]
                    ) -> Cursor:
        """Run one statement for each row of parameters."""
        import psycopg

        if self._begin or self._deferred:  # its BEGIN, lock and deferred inserts go first
            self._run("SELECT 1", None)
        cursor = self._pg.cursor()
        try:
            cursor.executemany(translate(sql), [list(row) for row in rows])
        except psycopg.IntegrityError as error:
            raise sqlite3.IntegrityError(_first_line(error)) from error
        return Cursor(cursor)

    def tables(self) -> list[str]:
        """The tables of the session's schema, whoever owns them (information_schema would
        hide another application's tables this user may not read)."""
        return sorted(row[0] for row in self._run(
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema()",
            []))

    def reset_sequences(self) -> None:
        """After rows came with their own ids (a copy): each id sequence moves past them, so
        the next row made here gets a new id."""
        for table in sorted(self._ids):
            self._run(f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'), "
                      f"coalesce((SELECT max(id) FROM \"{table}\"), 0) + 1, false)", [])

    def close(self) -> None:
        """Close the connection (an insert still deferred, outside a transaction, sent first)."""
        if self._deferred and not self._pg.closed:
            self._run("SELECT 1", None)
        self._pg.close()


def is_empty(url: str) -> bool:
    """Whether the database holds no table yet (a session not yet laid out)."""
    conn = Connection(url)
    try:
        return not conn.tables()
    finally:
        conn.close()


def empty_again(url: str) -> None:
    """Drop every table a session laid out, leaving the database as empty as it was."""
    conn = Connection(url)
    try:
        tables = ", ".join(f'"{name}"' for name in conn.tables())
        if tables:
            conn.execute(f"DROP TABLE IF EXISTS {tables} CASCADE")
    finally:
        conn.close()


@contextmanager
def held(url: str, key: str) -> Iterator[str | None]:
    """Hold a lock named ``key`` in the session's database while the block runs, for every
    process on every host; yields None once held, or else who holds it ("process N on HOST",
    or "" when the server does not say), holding nothing. The server lets it go when the
    connection ends, however the process ends."""
    import hashlib

    number = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
    conn = Connection(url)
    try:
        if conn.execute("SELECT pg_try_advisory_lock(?)", [number]).fetchone()[0]:
            yield None
            return
        # A bigint key is kept as two halves: classid the high 32 bits, objid the low ones.
        unsigned = number & 0xFFFF_FFFF_FFFF_FFFF
        row = conn.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = ? "
            "AND l.objid::bigint = ? AND l.objsubid = 1",
            [unsigned >> 32, unsigned & 0xFFFF_FFFF]).fetchone()
        name = row[0] if row else ""
        yield name.removeprefix("cp-annotator ") if name.startswith("cp-annotator ") else ""
    finally:
        conn.close()  # ends the lock with the connection


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _refused(url: str, error: BaseException) -> str:
    """A sentence for a server that would not take the connection, by what it said."""
    text = str(error)
    place = shown(url)
    if "password authentication failed" in text or "no password supplied" in text:
        return (f"{place} refused the login: the user or its password is wrong. Give the right "
                "password in the URL or in PGPASSWORD (or ~/.pgpass), then try again.")
    if "does not exist" in text and "database" in text:
        return (f"{place} names a database the server does not have. Create it first "
                "('createdb NAME'), then try again.")
    if "role" in text and "does not exist" in text:
        return f"{place} names a user the server does not know. Check the URL's user."
    reason = _first_line(error).replace(url, place)
    return (f"Could not reach the PostgreSQL server of {place} ({reason}). Check that the "
            "server runs, and the URL's host and port.")


def _numbers_as_python(conn: psycopg.Connection[Any]) -> None:
    """Read NUMERIC (what sum() of integers gives) as an int when whole, else a float, as
    SQLite gives them; write a bool as 1 or 0 (SQLite has no booleans, the schema none)."""
    from psycopg.adapt import Loader
    from psycopg.types.numeric import Int8Dumper

    class NumericLoader(Loader):
        def load(self, data: Any) -> Any:
            text = bytes(data).decode()
            if text.lstrip("-").isdigit():
                return int(text)
            number = Decimal(text)
            return float(number)

    class BoolAsInt(Int8Dumper):
        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

    conn.adapters.register_loader("numeric", NumericLoader)
    conn.adapters.register_dumper(bool, BoolAsInt)
