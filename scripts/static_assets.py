"""Vendored web assets for the offline book, copied from installed packages into ``_build/vendor`` (``make static``).

Nothing large is kept in git: every file here comes from a pinned package that ``make install`` installs.

* ``plotly/plotly.min.js`` — plotly.js's *cartesian* partial bundle (scatter, bar, heatmap, box, histogram, contour,
  pie …: every trace type the book draws; 1.5 MB instead of 4.8 MB) from the npm registry
  (``plotly.js-cartesian-dist-min``, the version the ``plotly`` wheel bundles), fetched with ``npm pack``; without
  npm, the full bundle from the ``plotly`` wheel (``package_data``);
* ``mathjax/`` — MathJax 3 ``tex-svg.js`` (SVG output: glyphs are inside the script, no font files to fetch) plus the
  TeX extensions, menu and a11y components it may load on demand, from the ``django-static-mathjax`` wheel (MathJax
  3.2.2, Apache-2.0; the wheel has no dependencies and is used here only as a carrier of the files);
* ``reveal.js/`` — reveal.js (``dist/`` and the speaker-notes plugin) for the offline slides (``make slides``), from
  the npm registry (``npm pack reveal.js@REVEAL_VERSION``, the version nbconvert's reveal template is written for);
  without npm it is skipped with a note (the book does not need it; ``scripts/student.py --slides`` then fails
  naming the fix);
* ``fonts/book-cjk.woff2`` — optional: a subset of Noto Sans CJK SC holding only the CJK characters the book uses,
  made with fontTools when the Debian ``fonts-noto-cjk`` font and fontTools+brotli are there; without it the CSS font
  stack falls back to the reader's system CJK fonts.

The book's extension (``book/_ext/bookpages.py``) adds this folder to Sphinx's static path, so the files are served
from ``_build/html/_static/``. Jupyter Book loads every ``.js`` under the source ``_static/`` on *every* page, which is
why nothing is put there.

    python scripts/static_assets.py [--dest _build/vendor]
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATHJAX_PARTS = ["tex-svg.js", "input/tex/extensions", "ui", "a11y"]
CJK_FONTS = [Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")]
SKIP_DIRS = {".venv", "_build", ".git", "node_modules", ".whl"}
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


# The trace types in plotly.js's cartesian partial bundle; tests/book/test_static_assets.py checks every stored
# figure uses only these (a figure with another type would not render in the book).
CARTESIAN_TRACES = {"scatter", "bar", "box", "heatmap", "histogram", "histogram2d", "histogram2dcontour", "contour",
                    "image", "pie", "scatterternary", "violin"}
_VERSION = re.compile(rb"plotly\.js(?: \([a-z -]+\))? v(\d+\.\d+\.\d+)")


def plotly_version(path: Path) -> str | None:
    m = _VERSION.search(path.read_bytes()[:400]) if path.exists() else None
    return m.group(1).decode() if m else None


def fetch_cartesian(version: str, out: Path) -> bool:
    """plotly.js-cartesian-dist-min@version from the npm registry (``npm pack``) into ``out``; False without npm."""
    npm = shutil.which("npm")
    if npm is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([npm, "pack", "-q", f"plotly.js-cartesian-dist-min@{version}"], cwd=tmp,
                           capture_output=True, text=True, timeout=300)
        tgz = next(Path(tmp).glob("*.tgz"), None)
        if r.returncode or tgz is None:
            return False
        with tarfile.open(tgz) as tar:
            member = tar.extractfile("package/plotly-cartesian.min.js")
            out.write_bytes(member.read())
    return plotly_version(out) == version


REVEAL_VERSION = "4.0.2"
REVEAL_PARTS = ("dist/", "plugin/notes/")


def copy_reveal(dest: Path, version: str = REVEAL_VERSION) -> str:
    """reveal.js ``dist/`` and ``plugin/notes/`` into ``dest/reveal.js`` (npm pack); kept when that version is there."""
    out = dest / "reveal.js"
    stamp = out / "VERSION"
    if (out / "dist" / "reveal.js").exists() and stamp.exists() and stamp.read_text().strip() == version:
        return f"{out}: reveal.js {version} (kept)"
    npm = shutil.which("npm")
    if npm is None:
        return f"no reveal.js: npm not found (only `make slides` needs it; the book does not)"
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([npm, "pack", "-q", f"reveal.js@{version}"], cwd=tmp, capture_output=True, text=True,
                           timeout=300)
        tgz = next(Path(tmp).glob("*.tgz"), None)
        if r.returncode or tgz is None:
            return f"no reveal.js: `npm pack reveal.js@{version}` failed ({(r.stderr or '').strip()[:120]})"
        if out.exists():
            shutil.rmtree(out)
        with tarfile.open(tgz) as tar:
            for m in tar.getmembers():
                name = m.name.removeprefix("package/")
                if m.isfile() and name.startswith(REVEAL_PARTS) and not name.endswith(".map"):
                    target = out / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(tar.extractfile(m).read())
    stamp.write_text(version + "\n")
    return f"{out}: reveal.js {version} (npm)"


def copy_plotly(dest: Path) -> str:
    import plotly
    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    version = plotly_version(full)
    out = dest / "plotly" / "plotly.min.js"
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and plotly_version(out) == version and out.stat().st_size < full.stat().st_size:
        return f"{out}: cartesian bundle v{version} (kept)"
    if version and fetch_cartesian(version, out):
        return f"{out}: cartesian bundle v{version}, {out.stat().st_size // 1000} KB (npm)"
    shutil.copyfile(full, out)
    return f"{out}: FULL bundle v{version}, {out.stat().st_size // 1000} KB (npm unreachable: pages weigh 3.3 MB more)"


def copy_mathjax(dest: Path) -> Path:
    try:
        import mathjax  # the django-static-mathjax wheel
    except ImportError as e:
        raise SystemExit("MathJax is missing: `make install` (requirements.txt pins django-static-mathjax)") from e
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    out = dest / "mathjax"
    if out.exists():
        shutil.rmtree(out)
    for part in MATHJAX_PARTS:
        src, dst = es5 / part, out / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copyfile)(src, dst)
    return out / "tex-svg.js"


def book_cjk_text() -> str:
    chars = set()
    # every source, not only the pages built now: *.zh.md and the glossaries too (room for a Chinese edition)
    # and the notebooks' outputs and the helpers' data, whose strings reach the pages (境 and 界 come from there)
    for pattern in ("**/*.md", "**/*.ipynb", "**/*.yml", "**/*.yaml", "helpers/**/*.py"):
        for path in ROOT.glob(pattern):
            if path.parts[len(ROOT.parts)] in SKIP_DIRS:
                continue
            chars.update(CJK.findall(path.read_text(encoding="utf-8", errors="replace")))
    return "".join(sorted(chars))


def subset_cjk_font(dest: Path) -> str:
    font = next((f for f in CJK_FONTS if f.exists()), None)
    if font is None:
        return "no CJK webfont: the Debian fonts-noto-cjk package is not installed (system fonts are used)"
    try:
        from fontTools import subset
        import brotli  # noqa: F401  (woff2 needs it)
    except ImportError:
        return "no CJK webfont: fontTools/brotli not installed (system fonts are used)"
    text = book_cjk_text()
    out = dest / "fonts" / "book-cjk.woff2"
    out.parent.mkdir(parents=True, exist_ok=True)
    opts = subset.Options()
    opts.flavor, opts.font_number, opts.layout_features = "woff2", 2, ["*"]  # index 2 of the .ttc: Noto Sans CJK SC
    f = subset.load_font(str(font), opts)
    sub = subset.Subsetter(opts)
    sub.populate(text=text)
    sub.subset(f)
    subset.save_font(f, str(out), opts)
    return f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: {len(text)} CJK characters, " \
           f"{out.stat().st_size // 1024} KiB"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dest", type=Path, default=ROOT / "_build" / "vendor")
    args = ap.parse_args(argv)
    args.dest.mkdir(parents=True, exist_ok=True)
    legacy = ROOT / "_static" / "plotly.min.js"  # older builds put it where Jupyter Book loads it on every page
    if legacy.exists():
        legacy.unlink()
    print(f"static: {copy_plotly(args.dest)}")
    print(f"static: {copy_mathjax(args.dest)}")
    print(f"static: {subset_cjk_font(args.dest)}")
    print(f"static: {copy_reveal(args.dest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
