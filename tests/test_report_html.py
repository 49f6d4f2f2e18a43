"""The HTML report in a real browser: Debian's chromium, headless, driven by Playwright.

Every chart must load and show, the console must stay free of errors, and no request may
leave the machine (only the file itself and its data: images are fetched).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from playwright.sync_api import sync_playwright

from annotator.cli import cli
from tests.test_report import golden_obj, make_session

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHARTS = {"confusion", "by-rank", "cp-scatter", "precision-at-k", "reranking", "error-slices",
          "reliability"}
ODD_IDS = ["<script>alert(1)</script>", "price-$5-and-$10$", "emoji-🦜-🚀", "rtl-שלום-مرحبا",
           "markup-[/b]-[bold]x", "ampersand-&amp;-&lt;"]


def odd_goldens() -> list[dict[str, Any]]:
    """Goldens with confidences and text that breaks naive HTML, Markdown or mathtext."""
    rng = np.random.default_rng(5)
    goldens = []
    for i in range(24):
        human = [int(x) for x in rng.integers(0, 2, 5)]
        judge = [h if rng.random() > 0.25 else 1 - h for h in human]
        p = [float(np.clip(0.8 * j + 0.1 + rng.normal(0, 0.15), 0, 1)) for j in judge]
        extra = {"user_input": f"{ODD_IDS[i % len(ODD_IDS)]} asks <b>what</b> & why? 100%"}
        obj = golden_obj(i, judge, human, p, retriever=["bm25", "dense", "hybrid"][i % 3], **extra)
        if i < len(ODD_IDS):
            obj["id"] = ODD_IDS[i]
        goldens.append(obj)
    return goldens


def open_in_chromium(path: Path) -> dict[str, Any]:
    """Open an HTML file in headless chromium: its charts, text, scripts, errors and requests."""
    assert Path(CHROMIUM).exists(), (
        "Debian's chromium is needed to open the HTML report: apt-get install chromium "
        "(scripts/test.sh, the README's test command, installs it).")
    seen: dict[str, Any] = {"console": [], "errors": [], "requests": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: seen["console"].append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: seen["errors"].append(str(e)))
            page.on("request", lambda r: seen["requests"].append(r.url))
            page.goto(path.as_uri(), wait_until="load")
            seen["figures"] = page.eval_on_selector_all(
                "figure.chart",
                """els => els.map(f => { const img = f.querySelector('img');
                     const box = img.getBoundingClientRect();
                     return {id: f.id, complete: img.complete, width: img.naturalWidth,
                             height: box.height, shownWidth: box.width}; })""")
            # A header word drawn on more than one line was broken inside the word: none may
            # be, on a wide screen or a narrow one.
            seen["broken_headers"] = [word for width in (1280, 700) for word in
                                      _broken_headers(page, width)]
            page.set_viewport_size({"width": 1280, "height": 900})
            seen["text"] = page.inner_text("body")
            seen["scripts"] = page.evaluate("document.scripts.length")
        finally:
            browser.close()
    for figure in seen["figures"]:
        assert figure["complete"] and figure["width"] > 100, figure
        assert figure["height"] > 100 and figure["shownWidth"] > 100, figure
    assert not seen["errors"], seen["errors"]
    assert not [m for m in seen["console"] if m.startswith("error")], seen["console"]
    leaving = [u for u in seen["requests"] if not u.startswith(("file://", "data:"))]
    assert not leaving, leaving
    assert seen["scripts"] == 0
    assert not seen["broken_headers"], seen["broken_headers"]
    return seen


def _broken_headers(page: Any, width: int) -> list[str]:
    """The table-header words the page draws across two lines at this viewport width."""
    page.set_viewport_size({"width": width, "height": 900})
    return list(page.eval_on_selector_all("th", r"""ths => ths.flatMap(th => {
        // A break after a hyphen is a break between words.
        const node = th.firstChild, out = [], word = /[^\s-]+/g;
        if (!node) return out;
        for (let m; (m = word.exec(node.textContent)) !== null;) {
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
            if (tops.size > 1) out.push(m[0]);
        }
        return out;
    })"""))


def test_the_html_report_in_headless_chromium(tmp_path: Path) -> None:
    make_session(tmp_path, odd_goldens()).close()
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "s.db"), "--format", "html",
                                      "--output", str(out), "--bootstrap", "300"])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html  # the golden id was escaped, and the page has no script
    assert "http://" not in html and "https://" not in html
    seen = open_in_chromium(out)
    assert {f["id"].removeprefix("chart-") for f in seen["figures"]} == CHARTS
    for odd in ("<script>alert(1)</script>", "emoji-🦜-🚀", "rtl-שלום-مرحبا", "markup-[/b]-[bold]x"):
        assert odd in seen["text"]  # shown literally
    assert "Reliability" in seen["text"] and "Cohen's kappa" in seen["text"]


def test_the_html_leaderboard_in_headless_chromium(tmp_path: Path) -> None:
    from tests.test_leaderboard import study

    goldens = study({"<b>bold</b> judge": 0.05, "judge-🦜": 0.2}, goldens=20)
    make_session(tmp_path, goldens).close()
    out = tmp_path / "judges.html"
    result = CliRunner().invoke(cli, ["judges", str(tmp_path / "s.db"), "--format", "html",
                                      "--output", str(out), "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    seen = open_in_chromium(out)
    assert [f["id"] for f in seen["figures"]] == ["chart-judges-kappa", "chart-judge-heatmap"]
    assert "<b>bold</b> judge" in seen["text"] and "judge-🦜" in seen["text"]
    assert "Prompt, cost, failures and stability" in seen["text"]
    assert "Judges against each other" in seen["text"]


@pytest.mark.parametrize("fmt", ["table", "markdown", "json", "csv"])
def test_odd_text_survives_every_text_format(tmp_path: Path, fmt: str) -> None:
    make_session(tmp_path, odd_goldens()).close()
    out = tmp_path / f"report.{fmt}"
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "s.db"), "--format", fmt,
                                      "--bootstrap", "50", "--worst", "30", "--output", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    if fmt == "markdown":
        assert "\\<script\\>alert(1)\\</script\\>" in text
    else:
        assert "<script>alert(1)</script>" in text
    for odd in ("emoji-🦜-🚀", "rtl-שלום-مرحبا", "markup-[/b]-[bold]x", "price-$5-and-$10$"):
        assert odd in text.replace("\\", ""), odd
