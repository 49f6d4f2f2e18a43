"""Write the code maps of docs/development.md and docs/architecture.md from the layer contract
in pyproject.toml (its tiers, top to bottom, named in [tool.cp-annotator]) and each module's
docstring (its first paragraph). ``--check`` writes nothing and exits 1 when a map is stale.

docs/development.md gets each tier's packages and modules; docs/architecture.md every module
inside them too. Each map sits between ``<!-- code-map -->`` and ``<!-- /code-map -->``.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "annotator"
START, END = "<!-- code-map -->", "<!-- /code-map -->"


def tiers() -> list[tuple[str, list[str]]]:
    """(tier name, its modules as dotted names), top to bottom."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    [layers] = [c for c in config["importlinter"]["contracts"] if c["type"] == "layers"]
    names = config["cp-annotator"]["tiers"]
    if len(names) != len(layers["layers"]):
        raise SystemExit(f"pyproject.toml names {len(names)} tiers for "
                         f"{len(layers['layers'])} layers")
    return [(name, [m.strip() for m in re.split(r"[:|]", layer)])
            for name, layer in zip(names, layers["layers"], strict=True)]


def summary(path: Path) -> str:
    """A module's docstring, its first paragraph on one line ('' when it has none)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = doc.split("\n\n")[0]
    return " ".join(first.split()).replace("|", "\\|")


def where(dotted: str) -> Path:
    """A module's file, or a package's folder."""
    path = ROOT / dotted.replace(".", "/")
    return path if path.is_dir() else path.with_suffix(".py")


def shown(path: Path) -> str:
    """A path as the map writes it, from annotator/."""
    relative = path.relative_to(PACKAGE).as_posix()
    return relative + "/" if path.is_dir() else relative


def entries(path: Path, deep: bool) -> list[tuple[str, str]]:
    """(shown path, summary) of a module, or of a package and (``deep``) each module in it."""
    if path.is_file():
        return [(shown(path), summary(path))]
    out = [(shown(path), summary(path / "__init__.py"))]
    if deep:
        for child in sorted(path.rglob("*.py")):
            if child.name != "__init__.py" and "__pycache__" not in child.parts:
                out.append((shown(child), summary(child)))
            elif child.name == "__init__.py" and child.parent != path:
                out.append((shown(child.parent), summary(child)))
    return out


def code_map(deep: bool) -> str:
    """The map: a table a tier, top to bottom."""
    lines = [START, "", "Each tier may import the tiers below it, never one above (the `layers` "
             "contract in `pyproject.toml`). Written by `scripts/code_map.py` from the contract "
             "and each module's docstring.", ""]
    for number, (name, modules) in enumerate(tiers(), 1):
        lines += [f"**{number}. {name}**", "", "| module | its job |", "|---|---|"]
        for module in modules:
            lines += [f"| `{path}` | {text} |" for path, text in entries(where(module), deep)]
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def rewritten(doc: Path, deep: bool) -> tuple[str, str]:
    """(the document as it is, as it should be)."""
    text = doc.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{doc} has no {START} ... {END} block")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return text, head + code_map(deep) + tail


def main() -> None:
    """Write both maps (or, with --check, say which is stale)."""
    check = "--check" in sys.argv[1:]
    stale = []
    for doc, deep in ((ROOT / "docs" / "development.md", False),
                      (ROOT / "docs" / "architecture.md", True)):
        now, wanted = rewritten(doc, deep)
        if now != wanted:
            stale.append(str(doc.relative_to(ROOT)))
            if not check:
                doc.write_text(wanted, encoding="utf-8")
    if check and stale:
        print(f"Stale code map in {', '.join(stale)}: run python scripts/code_map.py",
              file=sys.stderr)
        raise SystemExit(1)
    if not check:
        print("wrote " + (", ".join(stale) if stale else "nothing (both maps are current)"))


if __name__ == "__main__":
    main()
