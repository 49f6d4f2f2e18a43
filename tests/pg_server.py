"""A throwaway PostgreSQL server for the tests: Debian's own binaries, a data folder in /tmp,
a Unix socket there and a TCP port on 127.0.0.1, stopped when the tests end.

PostgreSQL refuses to run as root, and CI runs as root: there ``initdb`` and the server run as
the user ``nobody`` (Popen's ``user=``), in a folder made theirs. Run as anyone else, they run as
that user. ``python -m tests.pg_server`` starts one by hand and prints its URL.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.waiting import wait_until

PASSWORD = "s3cret-Pa55"
"""The password of the role ``team``, which only TCP logins with a password may use."""


def binaries() -> Path:
    """The folder holding Debian's PostgreSQL programs (the newest version installed)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name))
    if not found:
        raise RuntimeError("No PostgreSQL server is installed: scripts/test.sh installs "
                           "Debian's postgresql package, or run 'apt-get install postgresql'.")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running server: where it listens and how to reach it."""

    folder: Path
    port: int

    @property
    def admin(self) -> str:
        """The superuser's URL over the Unix socket (no password)."""
        return f"postgresql://postgres@/postgres?host={self.folder}&port={self.port}"

    def url(self, database: str) -> str:
        """A database's URL for the owner role over the socket."""
        return f"postgresql://postgres@/{database}?host={self.folder}&port={self.port}"

    def tcp_url(self, database: str, password: str = PASSWORD) -> str:
        """A database's URL over TCP, logging in as ``team`` with a password."""
        return f"postgresql://team:{password}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Make an empty database owned by ``team`` and give its socket URL."""
        import psycopg

        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" OWNER team')
        return self.url(name)


def _as_server_user() -> dict[str, str]:
    """Popen's arguments running a program as a user the server accepts."""
    return {"user": "nobody", "group": "nogroup"} if os.geteuid() == 0 else {}


@contextlib.contextmanager
def running(*, fsync: bool = False) -> Iterator[Server]:
    """Start a server, yield it, and stop it and remove its files however the block ends.
    Without ``fsync`` (the tests) a commit is not flushed to disk; a benchmark flushes, as a
    team's server does."""
    bin_dir = binaries()
    folder = Path(tempfile.mkdtemp(prefix="cp-annotator-pg-"))
    data = folder / "data"
    runas = _as_server_user()
    if runas:
        shutil.chown(folder, "nobody", "nogroup")
    port = _free_port()
    process: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run([str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres",
                        "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                        "--locale=C", "--no-sync"],
                       check=True, capture_output=True, **runas)  # type: ignore[call-overload]
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(f"listen_addresses = '127.0.0.1'\nport = {port}\n"
                       f"unix_socket_directories = '{folder}'\n"
                       f"fsync = {'on' if fsync else 'off'}\n"
                       "max_connections = 200\nlog_min_messages = warning\n")
        process = subprocess.Popen([str(bin_dir / "postgres"), "-D", str(data)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   **runas)  # type: ignore[call-overload]
        server = Server(folder, port)
        wait_until(lambda: _accepts(server), "the PostgreSQL server to accept connections")
        import psycopg

        with psycopg.connect(server.admin, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE team LOGIN PASSWORD '{PASSWORD}'")
        yield server
    finally:
        if process is not None:
            process.terminate()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _accepts(server: Server) -> bool:
    import psycopg

    assert server.folder.exists()
    try:
        psycopg.connect(server.admin, connect_timeout=2).close()
    except psycopg.OperationalError:
        return False
    return True


if __name__ == "__main__":
    import signal

    with running() as started:
        print(started.admin, flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
