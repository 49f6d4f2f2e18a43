"""`annotator serve`: the annotation screen in each person's browser, one session file.

textual-serve runs one process of the app per browser tab and relays its terminal over a
websocket. Each tab is an ordinary `annotator annotate` process writing through the same
Session code, so a decision is committed before the screen shows it, whatever happens to the
tab or the server. This module adds what a team needs around that: who is who (from the URL,
a first page that asks, or a header set by an authenticating proxy), one open tab per name, a
page that works offline (the font is served from textual-serve's own files), and a read-only
dashboard.
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import json
import logging
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from annotator.people.presence import in_use_sentence, is_open
from annotator.people.team import TeamProgress
from annotator.place import place_of
from annotator.resolve import alike
from annotator.tui.zygote import SETTINGS_VARIABLE

TEMPLATES = Path(__file__).parent / "templates"
NAME = re.compile(r"^[\w .@+-]{1,64}$")
"""A name people give themselves: letters, digits, spaces and . @ + - _, at most 64."""
TICKET_BYTES = 16
TICKET_S = 120.0
"""How long a page's ticket stays good for opening its screen."""
REFRESH_S = 5
"""How often the dashboard page reloads itself."""

log = logging.getLogger("textual-serve")


def clean_name(raw: str | None) -> str | None:
    """The name as given, trimmed, when it is an acceptable one; else None."""
    name = (raw or "").strip()
    return name if NAME.match(name) else None


class TeamServer(Server):
    """textual-serve's server, with names, one tab per name, and a dashboard."""

    def __init__(self, settings: dict[str, Any], *, host: str, port: int, title: str,
                 user_header: str | None = None,
                 dashboard: Callable[[], str] | None = None, max_tabs: int | None = None,
                 trusted_proxy: str | None = None,
                 known_names: Callable[[], list[str]] = list) -> None:
        super().__init__("annotator", host=host, port=port, title=title,
                         templates_path=TEMPLATES)
        self.settings = settings
        self.max_tabs = max_tabs or default_max_tabs()
        """The most screens open at once (each is a process of its own)."""
        self.trusted_proxy = (ipaddress.ip_network(trusted_proxy, strict=False)
                              if trusted_proxy else None)
        """With --user-header: the only address requests may come from (the proxy's)."""
        self.known_names = known_names
        """The session's annotators now, to warn of a name that differs only by case."""
        """What every tab's screen is opened with (annotator.tui.zygote.run_tab)."""
        self.zygote: Zygote | None = None
        self.user_header = user_header
        self.dashboard = dashboard
        self.tickets: dict[str, tuple[str, float]] = {}
        """A page's one-time ticket -> the name it was issued to, and when (the page's websocket
        presents it within TICKET_S)."""
        self.open_tabs: dict[str, int] = {}
        """Name -> open screens under it (at most one)."""
        self._dashboard_lock = asyncio.Lock()
        self._dashboard_shown: tuple[float, str] = (-float("inf"), "")
        """When the dashboard was last read, and what it showed."""


    def serve(self, debug: bool = False) -> None:
        """Serve until stopped, on an event loop of its own: textual-serve takes the current
        one, which an earlier server of the same process (a test's) leaves closed."""
        asyncio.set_event_loop(asyncio.new_event_loop())
        super().serve(debug)
    def initialize_logging(self) -> None:
        """Quiet: only warnings reach the terminal that started the server."""
        logging.basicConfig(level="WARNING", format="%(message)s")

    async def on_startup(self, app: web.Application) -> None:
        """Start the warm process the tabs are forked from."""
        self.zygote = await asyncio.to_thread(Zygote, self.settings)

    async def on_shutdown(self, app: web.Application) -> None:
        """Stop it (its tabs end as their pipes close)."""
        if self.zygote is not None:
            self.zygote.stop()

    async def _make_app(self) -> web.Application:
        app = web.Application()
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        routes = [
            web.get("/", self.handle_index, name="index"),
            web.get("/ws/{ticket}", self.handle_websocket, name="websocket"),
            web.static("/static", self.statics_path, name="static"),
        ]
        if self.dashboard is not None:
            routes.append(web.get("/dashboard", self.handle_dashboard, name="dashboard"))
        app.add_routes(routes)
        app.on_startup.append(self.on_startup)
        app.on_shutdown.append(self.on_shutdown)
        return app

    def name_of(self, request: web.Request) -> tuple[str | None, str | None]:
        """The person's name from the proxy's header (when --user-header is set; the URL is
        then ignored) or the URL; and a sentence when the one given cannot be used."""
        if self.trusted_proxy is not None and not _from(request.remote, self.trusted_proxy):
            return None, (f"This server takes names only from its proxy at {self.trusted_proxy}"
                          f", and this request came from {request.remote}: open the page "
                          "through the proxy.")
        if self.user_header is not None:
            raw = request.headers.get(self.user_header)
            if raw is None:
                return None, (f"The server takes names from the {self.user_header} header, and "
                              "this request has none: open the page through the proxy that "
                              "sets it.")
        else:
            raw = request.query.get("annotator")
            if raw is None:
                return None, None
        name = clean_name(raw)
        if name is None:
            return None, ("A name is 1 to 64 letters, digits, spaces or . @ + - _; "
                          f"{raw[:80]!r} is not one.")
        return name, None

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        """The annotation page for a name, the page asking for one, or why not."""
        name, problem = self.name_of(request)
        if problem is not None:
            return _page("Cannot open the screen", problem, status=400)
        if name is None:
            return _page("Who is annotating?", _ASK, status=200, raw=True)
        if sum(self.open_tabs.values()) >= self.max_tabs:
            return _page("The server is full",
                         f"{self.max_tabs} annotation screens are open, the most this server "
                         "keeps at once (--max-tabs, sized to this machine's memory). Try "
                         "again when someone closes theirs, or restart the server with a "
                         "higher --max-tabs on a machine with the memory for it.", status=503)
        if self.user_header is None and request.query.get("new") != "1":
            twins = [other for group in alike([*self.known_names(), name]) if name in group
                     for other in group if other != name]
            if twins:
                links = " or ".join(f'<a href="/?annotator={quote(t, safe="")}">'
                                    f"{html.escape(t)}</a>" for t in twins)
                return _page("Is that you?",
                             f"<p>This session has labels from {links}, which differs from "
                             f"{html.escape(name)} only by case or spacing; the report would "
                             "count the two as different people. Open the screen under "
                             f"{links}, or <a href=\"/?annotator={quote(name, safe='')}&amp;new=1"
                             f"\">go on as {html.escape(name)}</a>.</p>", status=409, raw=True)
        role = "adjudicate" if self.settings["adjudicate"] else "annotate"
        if self.open_tabs.get(name) or is_open(place_of(self.settings["session"]), name, role):
            return _page("That name is in use",
                         in_use_sentence(name, "in another tab, browser or terminal"),
                         status=409)
        now = time.monotonic()
        self.tickets = {t: issued for t, issued in self.tickets.items()
                        if now - issued[1] < TICKET_S}
        ticket = secrets.token_urlsafe(TICKET_BYTES)
        self.tickets[ticket] = (name, now)
        scheme = "wss" if request.secure or request.headers.get(
            "X-Forwarded-Proto") == "https" else "ws"
        context = {
            "title": self.title, "annotator": name,
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "static": "/static/",
            "websocket_url": f"{scheme}://{request.host}/ws/{ticket}",
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """Run one annotation screen for the name the page's ticket was issued to."""
        websocket = web.WebSocketResponse(heartbeat=15)
        issued = self.tickets.pop(request.match_info["ticket"], None)
        name = issued[0] if issued and time.monotonic() - issued[1] < TICKET_S else None
        await websocket.prepare(request)
        if name is None or self.open_tabs.get(name) or sum(self.open_tabs.values()) >= \
                self.max_tabs:
            await websocket.close(message=b"name in use, server full or page expired: reload "
                                          b"the page")
            return websocket
        self.open_tabs[name] = 1
        service: AppService | None = None
        try:
            assert self.zygote is not None
            service = ForkedAppService(
                self.zygote, name, write_bytes=websocket.send_bytes,
                write_str=websocket.send_str, close=lambda: _close(websocket),
                download_manager=self.download_manager)
            await service.start(to_int(request.query.get("width", "80"), 80),
                                to_int(request.query.get("height", "24"), 24))
            try:
                await self._process_messages(websocket, service)
            finally:
                await service.stop()
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # a tab's failure must not stop everyone else's
            log.exception(error)
        finally:
            self.open_tabs.pop(name, None)
        return websocket

    async def handle_dashboard(self, request: web.Request) -> web.StreamResponse:
        """Each person's progress and the agreement between people, read-only."""
        assert self.dashboard is not None
        if self.trusted_proxy is not None and not _from(request.remote, self.trusted_proxy):
            return _page("Not through the proxy", f"This server answers only its proxy at "
                         f"{self.trusted_proxy}; open the dashboard through it.", status=403)
        # One reading per refresh interval, however many people watch: on a large session a
        # reading is a pass over every label.
        async with self._dashboard_lock:
            read_at, body = self._dashboard_shown
            if time.monotonic() - read_at >= REFRESH_S:
                body = await asyncio.to_thread(self.dashboard)
                self._dashboard_shown = (time.monotonic(), body)
        return web.Response(text=_HTML.format(title="Team progress", refresh=(
            f'<meta http-equiv="refresh" content="{REFRESH_S}">'), body=body),
            content_type="text/html")


TAB_MB = 200
"""Memory a screen is given when --max-tabs is sized to the machine (a tab's process shares
most of the warm process's pages; this leaves room for a large session's rows)."""


def default_max_tabs() -> int:
    """How many screens this machine's memory holds: its available memory over TAB_MB, at
    least 2 (a read that fails gives 20)."""
    try:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return 20
    return max(2, int(available // (TAB_MB * 1_000_000)))


def _from(remote: str | None, network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """Whether a request's peer address lies in ``network``."""
    try:
        return remote is not None and ipaddress.ip_address(remote) in network
    except ValueError:
        return False


class Zygote:
    """The warm process (annotator.tui.zygote) and its socket."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="cp-annotator-serve-")
        self.path = Path(self.folder.name) / "zygote.sock"
        # What textual-serve gives each app's environment, here given once: Textual reads some
        # of it at import, which the zygote does once for every tab.
        env = {**os.environ, "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
               "TEXTUAL_FPS": "60", "TEXTUAL_COLOR_SYSTEM": "truecolor",
               "TERM_PROGRAM": "textual", "TERM_PROGRAM_VERSION": version("textual-serve"),
               # In the environment, not the command line: a session's URL may hold a
               # password, and any user of the machine can read a process's arguments.
               SETTINGS_VARIABLE: json.dumps(settings)}
        # The lifeline: the zygote and every tab hold its read end and exit when it reads
        # end-of-file, which the kernel gives them once this process is gone, however it went
        # (a SIGKILL too). The write end stays here, never written.
        lifeline, self.lifeline = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "annotator.tui.zygote", str(self.path), str(lifeline)],
            stdout=subprocess.PIPE, env=env, text=True, pass_fds=(lifeline,))
        os.close(lifeline)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"the screens' process did not start (it said {line!r})")

    def spawn(self, fds: list[int], request: dict[str, Any]) -> int:
        """A new screen on these fds; its pid."""
        from annotator.tui.zygote import spawn

        return spawn(self.path, fds, request)

    def stop(self) -> None:
        """End the zygote and remove its socket."""
        self.process.terminate()
        self.process.wait(10)
        os.close(self.lifeline)
        self.folder.cleanup()


class ForkedAppService(AppService):
    """textual-serve's app service, its process forked from the zygote instead of started."""

    def __init__(self, zygote: Zygote, name: str, **kwargs: Any) -> None:
        super().__init__("annotator", debug=False, **kwargs)
        self.zygote = zygote
        self.name = name

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        try:
            pid = await asyncio.to_thread(self.zygote.spawn, [stdin_r, stdout_w, stderr_w],
                                          {"annotator": self.name, "width": width,
                                           "height": height})
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):
                os.close(fd)
        loop = asyncio.get_running_loop()

        async def reader(fd: int) -> asyncio.StreamReader:
            stream = asyncio.StreamReader()
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream),
                                         os.fdopen(fd, "rb", 0))
            return stream

        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(stdin_w, "wb", 0))
        self._stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        self._process = _Forked(pid, await reader(stdout_r), await reader(stderr_r))  # type: ignore[assignment]
        return self._process


class _Forked:
    """The parts of asyncio's Process that AppService reads."""

    def __init__(self, pid: int, stdout: asyncio.StreamReader,
                 stderr: asyncio.StreamReader) -> None:
        self.pid = pid
        self.stdout = stdout
        self.stderr = stderr


async def _close(websocket: web.WebSocketResponse) -> None:
    await websocket.close()


_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8">{refresh}<title>{title}</title>
<style>body {{ font-family: system-ui, sans-serif; margin: 2em; max-width: 60em; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: .3em .7em;
text-align: right; }} th:first-child, td:first-child {{ text-align: left; }}</style>
</head><body><h1>{title}</h1>{body}</body></html>"""

_ASK = """<p>Give your name: your decisions are stored under it, and opening the page again
with it continues where you stopped.</p>
<form method="get" action="/"><input name="annotator" autofocus maxlength="64"
pattern="[\\w .@+\\-]{1,64}" required> <button type="submit">Open the screen</button></form>"""


def _page(title: str, text: str, *, status: int, raw: bool = False) -> web.Response:
    body = text if raw else f"<p>{html.escape(text)}</p>"
    return web.Response(text=_HTML.format(title=html.escape(title), refresh="", body=body),
                        content_type="text/html", status=status)


def dashboard_html(progress: TeamProgress) -> str:
    """The dashboard's body: a table of people, of pairs and, under a quota of people per
    golden, of the goldens claimed (every value escaped)."""
    def cell(value: Any) -> str:
        return f"<td>{html.escape(str(value))}</td>"

    def rows(items: list[dict[str, str]], keys: tuple[str, ...], empty: str) -> str:
        return "".join("<tr>" + "".join(cell(item.get(k, "")) for k in keys) + "</tr>"
                       for item in items) or f'<tr><td colspan="{len(keys)}">{empty}</td></tr>'

    quota = bool(progress.claims)
    gated = any("gate" in row for row in progress.people)
    keys = ("name", "decided", "complete", *(("claims",) if quota else ()),
            *(("gate",) if gated else ()))
    page = (f"<p>{progress.goldens:,} goldens, {progress.chunks:,} chunks. This page reloads "
            f"every {REFRESH_S} s.</p>"
            "<h2>People</h2><table><tr><th>annotator</th><th>chunks decided</th>"
            f"<th>goldens complete</th>{'<th>goldens taken</th>' if quota else ''}"
            f"{'<th>qualification gate</th>' if gated else ''}</tr>"
            f"{rows(progress.people, keys, 'nobody has labelled yet')}</table>"
            "<h2>Agreement between people</h2><table><tr><th>pair</th><th>chunks both labelled"
            "</th><th>agree</th><th>Cohen's kappa</th></tr>"
            + rows(progress.pairs, ("pair", "shared", "percent", "kappa"),
                   "no two people share a chunk yet") + "</table>")
    if quota:
        page += ("<h2>Goldens taken</h2><table><tr><th>golden</th><th>people done</th>"
                 "<th>on a screen now</th></tr>"
                 f"{rows(progress.claims, ('golden', 'done', 'open'), '')}</table>")
    return page
