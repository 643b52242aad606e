"""Static checks of the built book (no browser): page weights and internal links/anchors.

A page's *own* weight is its HTML (figure data included: figures are inline) plus the local files only it uses
(its images). *Shared* assets — under ``_static/`` (theme, plotly.js, MathJax) or used by several pages
(``searchindex.js``) — are cached after the first page and are listed separately. A chapter page must weigh at most ``LIMIT_KB`` of its own.

    python scripts/pageweights.py [_build/html]            # prints the table; exit 1 if a page is over
    python scripts/pageweights.py --links [_build/html]    # also every internal link and #anchor
"""
from __future__ import annotations

import argparse
import functools
import gzip
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

LIMIT_KB = 500  # 1 KB = 1000 B
# Cold weight (issue 29, item 5): everything a first visit downloads — the HTML and every file it references — raw
# and as a compressing static host (GitHub Pages, nginx gzip) sends it (gzip -6 per file). Goals, gzip bytes: a page
# with figures 2 MB, without 1 MB. Raw, MathJax (2.1 MB, SVG glyphs inside) plus plotly.js (1.5 MB, cartesian bundle)
# alone exceed 2 MB, so the raw limits are the measured weights after the cuts plus a margin, to catch regressions.
COLD_GZ_LIMIT_KB = {"figures": 2000, "plain": 1000}
COLD_RAW_LIMIT_KB = {"figures": 5100, "plain": 3300}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []     # <a href>
        self.assets: list[str] = []    # script src, link href (css), img src
        self.figures = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        if "plotly-graph-div" in (a.get("class") or ""):
            self.figures += 1
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        elif tag == "script" and a.get("src"):
            self.assets.append(a["src"])
        elif tag == "link" and a.get("href") and a.get("rel") in ("stylesheet", "preload"):
            self.assets.append(a["href"])
        elif tag in ("img", "source") and a.get("src"):
            self.assets.append(a["src"])


def parse(path: Path) -> _Page:
    p = _Page()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return p


def _local(root: Path, page: Path, url: str) -> Path | None:
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    target = (page.parent / unquote(parts.path)).resolve()
    return target if target.is_relative_to(root.resolve()) else None


@dataclass(frozen=True)
class PageWeight:
    page: str
    html_bytes: int
    own_bytes: int        # HTML + images only this page references
    shared_bytes: int     # _static assets it loads (cached across pages)
    figures: int
    loads_plotly: bool
    loads_mathjax: bool
    cold_bytes: int = 0      # HTML + every local file it references (a first visit, nothing cached)
    cold_gz_bytes: int = 0   # the same, each file gzip-compressed as a static host sends it


@functools.lru_cache(maxsize=None)
def _gz_size(path: Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=6))


def pages(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


def weigh(root: Path) -> list[PageWeight]:
    out, parsed_pages, users = [], {}, {}
    for page in pages(root):
        parsed_pages[page] = parse(page)
        for url in dict.fromkeys(parsed_pages[page].assets):
            target = _local(root, page, url)
            if target is not None and target.is_file():
                users.setdefault(target, set()).add(page)
    for page, parsed in parsed_pages.items():
        html = page.stat().st_size
        own = shared = 0
        gz = _gz_size(page)
        for url in dict.fromkeys(parsed.assets):
            target = _local(root, page, url)
            if target is None or not target.is_file():
                continue
            gz += _gz_size(target)
            if "_static" in target.relative_to(root.resolve()).parts or len(users[target]) > 1:
                shared += target.stat().st_size
            else:
                own += target.stat().st_size
        out.append(PageWeight(page.relative_to(root).as_posix(), html, html + own, shared, parsed.figures,
                              any("plotly" in a for a in parsed.assets), any("mathjax" in a for a in parsed.assets),
                              html + own + shared, gz))
    return out


def broken_links(root: Path) -> list[str]:
    """'page: href (why)' for every internal link whose file or #anchor does not exist."""
    parsed = {p.resolve(): parse(p) for p in pages(root)}
    bad = []
    for page, p in parsed.items():
        for href in p.links:
            url, frag = urldefrag(href)
            if url.startswith(("http:", "https:", "mailto:", "javascript:")):
                continue
            target = page if not url else _local(root, page, url)
            if target is None:
                continue
            name = page.relative_to(root.resolve()).as_posix()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                bad.append(f"{name}: {href} (no such file)")
            elif frag and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else parse(target).ids
                if unquote(frag) not in ids:
                    bad.append(f"{name}: {href} (no anchor #{frag})")
    return bad


def is_chapter(page: str) -> bool:
    return page.startswith(("chapters/", "book/"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Page weights (and internal links) of the built book.")
    ap.add_argument("root", nargs="?", type=Path, default=Path("_build/html"))
    ap.add_argument("--links", action="store_true", help="also check every internal link and anchor")
    args = ap.parse_args(argv)
    if not (args.root / "index.html").exists():
        raise SystemExit(f"{args.root}/index.html is missing: build the book first (make book)")
    rows, over = weigh(args.root), []
    print(f"{'page':58s} {'own KB':>8s} {'shared KB':>9s} {'cold KB':>8s} {'gz KB':>7s} figs plotly mathjax")
    for r in rows:
        print(f"{r.page:58s} {r.own_bytes / 1e3:8.1f} {r.shared_bytes / 1e3:9.1f} {r.cold_bytes / 1e3:8.1f} "
              f"{r.cold_gz_bytes / 1e3:7.1f} {r.figures:4d} "
              f"{'yes' if r.loads_plotly else '-':>6s} {'yes' if r.loads_mathjax else '-':>7s}")
        kind = "figures" if r.figures else "plain"
        if r.cold_gz_bytes > COLD_GZ_LIMIT_KB[kind] * 1000 or r.cold_bytes > COLD_RAW_LIMIT_KB[kind] * 1000:
            over.append(f"{r.page}: cold {r.cold_bytes / 1e3:.0f} KB raw, {r.cold_gz_bytes / 1e3:.0f} KB gzip > "
                        f"{COLD_RAW_LIMIT_KB[kind]} / {COLD_GZ_LIMIT_KB[kind]} KB (page {kind})")
        if is_chapter(r.page) and r.own_bytes > LIMIT_KB * 1000:
            over.append(f"{r.page}: {r.own_bytes / 1e3:.1f} KB of its own > {LIMIT_KB} KB")
        if r.figures and not r.loads_plotly:
            over.append(f"{r.page}: {r.figures} figure(s) but plotly.js is not loaded")
        if r.loads_plotly and not r.figures:
            over.append(f"{r.page}: loads plotly.js without a figure")
    problems = over + (broken_links(args.root) if args.links else [])
    for line in problems:
        print(f"FAIL {line}")
    print(f"pages: {len(rows)}, heaviest own: {max(r.own_bytes for r in rows) / 1e3:.1f} KB, heaviest cold: "
          f"{max(r.cold_bytes for r in rows) / 1e3:.0f} KB raw, {max(r.cold_gz_bytes for r in rows) / 1e3:.0f} KB gzip, "
          f"problems: {len(problems)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
