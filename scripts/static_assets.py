"""Vendored web assets for the offline book, copied from installed packages into ``_build/vendor`` (``make static``).

Nothing large is kept in git: every file here comes from a pinned package that ``make install`` installs.

* ``plotly/plotly.min.js`` — from the ``plotly`` wheel (``package_data``);
* ``mathjax/`` — MathJax 3 ``tex-svg.js`` (SVG output: glyphs are inside the script, no font files to fetch) plus the
  TeX extensions, menu and a11y components it may load on demand, from the ``django-static-mathjax`` wheel (MathJax
  3.2.2, Apache-2.0; the wheel has no dependencies and is used here only as a carrier of the files);
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
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATHJAX_PARTS = ["tex-svg.js", "input/tex/extensions", "ui", "a11y"]
CJK_FONTS = [Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")]
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def copy_plotly(dest: Path) -> Path:
    import plotly
    src = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    out = dest / "plotly" / "plotly.min.js"
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, out)
    return out


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
    for pattern in ("chapters/*/*.md", "chapters/*/glossary.yml", "book/*.md", "index.md", "_toc.yml", "_config.yml"):
        for path in ROOT.glob(pattern):
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
