"""The launch cell: the first code cell of every notebook, so a chapter runs where it was launched (issue 29, item 7).

On Colab (a notebook opened alone from GitHub), on a JupyterHub (nbgitpuller clones the repository, nothing is
installed) or on a Binder whose image lacks the helpers, the cell fetches the book when the notebook came alone,
runs ``python scripts/launchcell.py setup`` there (pip installs the runtime packages of ``requirements.txt`` that
are missing, then the ``helpers`` package, editable) and moves to the chapter's folder. Wherever ``helpers`` is
already importable (the book's own machines, CI, a Binder built from ``binder/``) it does nothing and prints nothing,
so the stored outputs stay the same on every machine. The cell is tagged ``remove-cell`` (the HTML page does not show
it; a downloaded, student or Colab notebook has it) and ``launch-install`` (how this script finds it again).

The repository URL and branch come from ``_config.yml`` (``repository.url``, ``repository.branch``), the one place
they are set; after changing them run ``insert`` again, then ``scripts/notebooks.py sources`` (the cell prints
nothing, so the stored outputs stay valid) — ``check`` fails until the cells follow the configuration.

    python scripts/launchcell.py insert [PATH ...]   # add or refresh the cell (idempotent); default: every notebook
    python scripts/launchcell.py check  [PATH ...]   # fail naming each source without the cell or with a stale one
    python scripts/launchcell.py cell chapters/08-communication   # print the cell for a chapter
    python scripts/launchcell.py setup               # what the cell runs on Colab/Binder/JupyterHub (pip installs)
"""
from __future__ import annotations

import argparse
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TAG = "launch-install"
TAGS_LINE = f":tags: [remove-cell, {TAG}]"
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n", re.M)
# requirements.txt lines a reader's notebook never needs (building the book, testing it, browsing it headless)
NOT_AT_RUNTIME = {"jupyter-book", "jupytext", "nbclient", "nbformat", "pytest", "pytest-xdist", "pytest-timeout",
                  "nbval", "hypothesis", "django-static-mathjax", "fonttools", "brotli", "playwright", "nbconvert"}

CELL = '''\
# Colab, Binder, JupyterHub: fetch the book if this notebook came alone and install its helpers (once), then work in
# this chapter's folder. Where the helpers are installed (the book's own machines) nothing happens, nothing is printed.
# Written by scripts/launchcell.py from _config.yml (repository.url, repository.branch).
import importlib.util, os, sys
if importlib.util.find_spec("helpers") is None and (
        "google.colab" in sys.modules or "BINDER_REPO_URL" in os.environ or "JUPYTERHUB_API_URL" in os.environ):
    import pathlib, subprocess
    _url, _branch = "{url}", "{branch}"
    _here = pathlib.Path.cwd()
    _root = next((p for p in (_here, *_here.parents) if (p / "scripts" / "launchcell.py").is_file()), None)
    if _root is None:
        _root = _here / "{name}"
        if not _root.exists():
            subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", _branch, _url, str(_root)], check=True)
    subprocess.run([sys.executable, str(_root / "scripts" / "launchcell.py"), "setup"], check=True)
    sys.path.insert(0, str(_root))
    os.chdir(_root / "{folder}")'''


def repository(config: Path = ROOT / "_config.yml") -> tuple[str, str]:
    """(url, branch) from _config.yml's ``repository`` section; fails naming the key that is missing."""
    import yaml
    repo = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("repository") or {}
    url, branch = str(repo.get("url") or "").rstrip("/"), str(repo.get("branch") or "main")
    if not re.fullmatch(r"https://[^\s/]+/[^\s/]+/[^\s/]+", url):
        raise SystemExit(f"{config}: repository.url must be https://HOST/OWNER/NAME (the repository readers launch "
                         f"from); it is {url!r}")
    return url.removesuffix(".git"), branch


def cell_source(folder: str, url: str, branch: str) -> str:
    name = url.rsplit("/", 1)[-1]
    return CELL.replace("{name}", name).replace("{branch}", branch).replace("{url}", url).replace("{folder}", folder)


def cell_block(folder: str, url: str, branch: str) -> str:
    """The cell as MyST (jupytext) text."""
    return f"```{{code-cell}} ipython3\n{TAGS_LINE}\n\n{cell_source(folder, url, branch)}\n```\n\n"


def _existing(text: str) -> re.Match | None:
    return re.search(r"^```\{code-cell\}[^\n]*\n" + re.escape(TAGS_LINE) + r"\n.*?^```[ \t]*\n(?:\n)?",
                     text, re.S | re.M)


def with_cell(text: str, folder: str, url: str, branch: str) -> str:
    """``text`` (a jupytext MyST notebook) with the launch cell before its first code cell (replaced if there)."""
    block = cell_block(folder, url, branch)
    old = _existing(text)
    if old is not None:
        return text[:old.start()] + block + text[old.end():]
    first = CODE_CELL.search(text, text.find("\n---", 3) + 4 if text.startswith("---") else 0)
    if first is None:
        raise SystemExit("no code cell: a notebook without code needs no launch cell")
    return text[:first.start()] + block + text[first.start():]


def notebook_sources(paths: list[str]) -> list[Path]:
    """Jupytext .md notebooks: those given (folders or files), else every chapter and every book/ notebook that
    imports the helpers."""
    if paths:
        out = []
        for p in paths:
            p = (Path.cwd() / p).resolve()
            out += sorted(m for m in (p.glob("*.md") if p.is_dir() else [p.with_suffix(".md")])
                          if not m.name.endswith(".zh.md") and "jupytext:" in m.read_text(encoding="utf-8")[:800])
        return out
    found = sorted(ROOT.glob("chapters/*/*.md")) + sorted(ROOT.glob("book/*.md"))
    return [m for m in found if not m.name.endswith(".zh.md") and "jupytext:" in m.read_text(encoding="utf-8")[:800]
            and (m.parent.parent.name == "chapters" or re.search(r"^\s*(from|import) helpers\b",
                                                                  m.read_text(encoding="utf-8"), re.M))]


def folder_of(md: Path) -> str:
    return md.parent.relative_to(ROOT).as_posix()


def problems(md: Path, url: str, branch: str) -> list[str]:
    text = md.read_text(encoding="utf-8")
    rel = md.relative_to(ROOT).as_posix()
    fix = f"run `python scripts/launchcell.py insert {folder_of(md)}`, then `python scripts/notebooks.py execute " \
          f"{folder_of(md)}`"
    old = _existing(text)
    if old is None:
        return [f"{rel}: no launch cell (tag {TAG}); {fix}"]
    if old.group(0).rstrip("\n") != cell_block(folder_of(md), url, branch).rstrip("\n"):
        return [f"{rel}: the launch cell does not follow _config.yml (repository.url/branch) or this script; {fix}"]
    if CODE_CELL.search(text).start() != old.start():
        return [f"{rel}: the launch cell is not the first code cell; {fix}"]
    return []


# ---- what the cell runs where it was launched ----

def runtime_requirements(path: Path) -> list[tuple[str, str]]:
    """(distribution name, requirement line) of the pinned packages a notebook may import at run time."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.match(r"([A-Za-z0-9_.\-]+)\s*(?:[=<>!~].*)?$", line)
        if m and m.group(1).lower() not in NOT_AT_RUNTIME:
            out.append((m.group(1), line))
    return out


def installed(dist: str) -> bool:
    try:
        importlib.metadata.version(dist)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def setup(root: Path = ROOT, run=subprocess.run) -> list[str]:
    """pip install the runtime packages that are missing (pinned; those already there are kept, so a hosted image's
    own torch stays), then the helpers (editable, no dependencies). Returns the pip commands it ran."""
    missing = [line for dist, line in runtime_requirements(root / "requirements.txt") if not installed(dist)]
    commands = []
    if missing:
        commands.append([sys.executable, "-m", "pip", "install", "-q", *missing])
    commands.append([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-e", str(root)])
    for cmd in commands:
        run(cmd, check=True)
    return commands


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["insert", "check", "cell", "setup"])
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args(argv)
    if args.command == "setup":
        commands = setup()
        print(f"book: helpers installed from {ROOT}"
              + (f" with {len(commands[0]) - 5} missing package(s)" if len(commands) > 1 else ""))
        return 0
    url, branch = repository()
    sources = notebook_sources(args.paths)
    if args.command == "cell":
        for md in sources:
            print(cell_block(folder_of(md), url, branch))
        return 0
    if args.command == "check":
        found = [p for md in sources for p in problems(md, url, branch)]
        print("\n".join(found) if found else f"launch cells: {len(sources)} notebooks follow _config.yml ({url})")
        return 1 if found else 0
    for md in sources:
        text = md.read_text(encoding="utf-8")
        new = with_cell(text, folder_of(md), url, branch)
        if new != text:
            md.write_text(new, encoding="utf-8")
            print(f"launch cell: {md.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
