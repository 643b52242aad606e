"""Open every page of the built book in headless Chromium and fail, naming page and item, on what a reader would see.

Checks, per page, over a local HTTP server on 127.0.0.1 (a free port; stopped in ``finally``), with every request
to another host blocked (so a page that needs the network fails here):

* console errors and uncaught page errors;
* failed requests (network failures, HTTP >= 400) and requests to other hosts (the book must work offline);
* raw TeX left in the text after MathJax ran (``$…$``, ``\\(``, ``\\[``, ``\\frac``, ``\\begin{``), code excluded;
* plotly figures that did not render (a ``.plotly-graph-div`` without its SVG);
* figure text that overlaps or is clipped, and squashed plots, at 390 and 1366 px (``scripts/figurecheck.py``; the
  list goes to ``_build/browsercheck-figures.json``);
* broken internal links and anchors (``scripts/pageweights.py``: static, no browser needed);
* the downloads hand out no solutions (static): a chapter's ``.ipynb``/``.md`` downloads hold no ``solution`` cell,
  ``student-notebooks.zip`` is there, the Binder button opens ``<slug>.student.ipynb`` (issue 29, item 8);
* search (item 9): for each query in ``SEARCH_QUERIES`` the first result is a page whose title or headings hold the
  query (when one exists), and a partial Chinese term finds the page it is part of;
* a slide deck (``--slides``, default the first under ``_build/slides``; ``make slides`` writes them): reveal.js
  starts, maths is typeset, figures render, nothing is fetched from another host (item 8);

and saves screenshots of one chapter at desktop (1280 px) and phone (390 px) width, and desktop in dark mode, into
``_build/screenshots/``.
The browser is the system Chromium (Debian ``chromium``; ``.ci/run`` installs it), driven by Playwright — no browser
is downloaded.

    python scripts/browsercheck.py [_build/html] [--pages 'chapters/08*'] [--screenshot chapters/08-communication/communication.html]
"""
from __future__ import annotations

import argparse
import fnmatch
import functools
import http.server
import os
import re
import shutil
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import figurecheck  # noqa: E402
import pageweights  # noqa: E402

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
DESKTOP, PHONE = (1280, 900), (390, 844)
TIMEOUT_MS = 30_000

# Runs in the page: the text a reader sees (code, math output and scripts excluded) with TeX still in it.
_RAW_TEX_JS = r"""() => {
  const skip = "pre, code, script, style, textarea, mjx-container, .MathJax, .math-source, .highlight, .plotly, svg";
  const walker = document.createTreeWalker(document.querySelector("main") || document.body, NodeFilter.SHOW_TEXT);
  const hits = [];
  const tex = /\$[^$\s][^$]*\$|\\\(|\\\[|\\frac|\\begin\{|\\mathrm|\\text\{/;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement && n.parentElement.closest(skip)) continue;
    const m = n.textContent.match(tex);
    if (m) hits.push(n.textContent.trim().slice(0, 80));
  }
  return hits;
}"""

_FIGURES_JS = r"""() => Array.from(document.querySelectorAll(".plotly-graph-div")).map(d => ({
  id: d.id, rendered: d.classList.contains("js-plotly-plot") && !!d.querySelector(".main-svg"),
}))"""

_MATHJAX_READY_JS = r"""() => (window.MathJax && MathJax.startup && MathJax.startup.promise)
  ? MathJax.startup.promise.then(() => true) : true"""


def find_chromium() -> str:
    for path in (os.environ.get("CHROMIUM"), *CHROMIUM_CANDIDATES, shutil.which("chromium")):
        if path and Path(path).exists():
            return path
    raise SystemExit("no Chromium found: install the Debian package (apt-get install chromium) or set CHROMIUM=path; "
                     "the check never downloads a browser")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Server:
    """A static HTTP server for ``root`` on 127.0.0.1 and a free port, in a thread; use as a context manager."""

    def __init__(self, root: Path):
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


def check_page(context, base: str, page: str) -> list[str]:
    """Problems of one page, each 'page: item'."""
    problems: list[str] = []
    pg = context.new_page()
    pg.on("console", lambda m: m.type == "error" and problems.append(f"{page}: console error: {m.text[:200]}"))
    pg.on("pageerror", lambda e: problems.append(f"{page}: page error: {str(e)[:200]}"))
    # requests to other hosts are reported (and aborted) by block_other_hosts; here: the book's own files
    pg.on("requestfailed", lambda r: r.url.startswith(base) and problems.append(
        f"{page}: failed request: {r.url} ({r.failure})"))
    pg.on("response", lambda r: r.status >= 400 and problems.append(f"{page}: HTTP {r.status}: {r.url}"))
    try:
        pg.goto(base + page, wait_until="load", timeout=TIMEOUT_MS)
        pg.evaluate(_MATHJAX_READY_JS)
        pg.wait_for_timeout(200)  # the figures' relayout (book-figures.js) runs after load
        for text in pg.evaluate(_RAW_TEX_JS):
            problems.append(f"{page}: raw TeX in the text: {text!r}")
        for fig in pg.evaluate(_FIGURES_JS):
            if not fig["rendered"]:
                problems.append(f"{page}: plotly figure {fig['id']} did not render")
    except Exception as e:  # a page that does not load is a problem of that page, not the end of the check
        problems.append(f"{page}: could not be checked: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    finally:
        pg.close()
    return problems


def block_other_hosts(context, base: str, problems: list[str], current: list[str]) -> None:
    def route(r):
        if r.request.url.startswith(base) or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            problems.append(f"{current[0]}: request to another host (the book must work offline): {r.request.url}")
            r.abort()
    context.route("**/*", route)


def screenshots(browser, base: str, page: str, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    saved = []
    for name, (w, h), mobile, scheme in (("desktop", DESKTOP, False, "light"), ("phone", PHONE, True, "light"),
                                         ("desktop-dark", DESKTOP, False, "dark")):
        ctx = browser.new_context(viewport={"width": w, "height": h}, device_scale_factor=1, is_mobile=mobile,
                                  has_touch=mobile, color_scheme=scheme)
        try:
            pg = ctx.new_page()
            pg.goto(base + page, wait_until="load", timeout=TIMEOUT_MS)
            pg.evaluate(_MATHJAX_READY_JS)
            pg.wait_for_timeout(300)
            stem = Path(page).stem
            top = out / f"{stem}-{name}.png"
            pg.screenshot(path=str(top))
            saved.append(top)
            fig = pg.query_selector(".plotly-graph-div")
            if fig is not None:
                fig.scroll_into_view_if_needed()
                pg.wait_for_timeout(200)
                path = out / f"{stem}-{name}-figure.png"
                pg.screenshot(path=str(path))
                saved.append(path)
        finally:
            ctx.close()
    return saved


NAV_WIDTHS = (390, 768, 1366)


def navigation(browser, base: str, page: str) -> list[str]:
    """Click the visible "Site navigation" and "On this page" buttons at phone, tablet and desktop width: below
    992 px each must open its sidebar as a dialog holding links; from 992 px "Site navigation" must hide the
    sidebar and a second click bring it back (the themes' handlers sit on hidden duplicates: assets/js/book-nav.js)."""
    problems = []
    for w in NAV_WIDTHS:
        ctx = browser.new_context(viewport={"width": w, "height": 844}, is_mobile=w < 992, has_touch=w < 992)
        try:
            pg = ctx.new_page()
            pg.goto(base + page, wait_until="load", timeout=TIMEOUT_MS)
            pg.wait_for_timeout(200)
            for kind, label in (("primary", "Site navigation"), ("secondary", "On this page")):
                every = pg.query_selector_all(f".{kind}-toggle")
                if not every:                        # not a page of the book's theme (a test site): nothing to click
                    continue
                buttons = [b for b in every if b.is_visible()]
                if not buttons:
                    if kind == "primary":        # a page without headings (the landing page) has no "On this page"
                        problems.append(f"{page} at {w} px: no visible {label!r} button")
                    continue
                if w < 992:
                    buttons[0].click()
                    pg.wait_for_timeout(300)
                    dialog = pg.query_selector(f"#pst-{kind}-sidebar-modal[open]")
                    links = dialog.query_selector_all("a") if dialog else []
                    if dialog is None or not dialog.is_visible() or not any(a.is_visible() for a in links):
                        problems.append(f"{page} at {w} px: {label!r} does not open a sidebar with links")
                    pg.keyboard.press("Escape")
                    pg.wait_for_timeout(200)
                elif kind == "primary":
                    sidebar = pg.query_selector("#pst-primary-sidebar")
                    buttons[0].click()
                    pg.wait_for_timeout(300)
                    hidden = not sidebar.is_visible()
                    buttons[0].click()
                    pg.wait_for_timeout(300)
                    if not (hidden and sidebar.is_visible()):
                        problems.append(f"{page} at {w} px: {label!r} does not hide and restore the sidebar")
        finally:
            ctx.close()
    return problems


_WIDE_JS = """() => { const w = document.documentElement.clientWidth;
  return {scroll: document.documentElement.scrollWidth, width: w,
          culprits: Array.from(document.querySelectorAll('.bd-article *')).filter(e => {
            const r = e.getBoundingClientRect(); return r.right > w + 1 && r.width > 0 &&
              !e.closest('pre, table, .cell_output, .output, .plotly-graph-div, mjx-container, .math');
          }).slice(0, 3).map(e => e.tagName.toLowerCase() + ': ' + (e.textContent || '').trim().slice(0, 60))}; }"""


def phone_width(browser, base: str, pages: list[str], width: int = 390) -> list[str]:
    """Every page at phone width: nothing may make the page itself scroll sideways (code blocks, tables, figures
    and maths scroll in their own box)."""
    problems = []
    ctx = browser.new_context(viewport={"width": width, "height": 844}, is_mobile=True, has_touch=True)
    try:
        pg = ctx.new_page()
        for page in pages:
            pg.goto(base + page, wait_until="load", timeout=TIMEOUT_MS)
            pg.wait_for_timeout(100)
            r = pg.evaluate(_WIDE_JS)
            if r["scroll"] > r["width"] + 1:
                problems.append(f"{page} at {width} px: the page is {r['scroll']} px wide (scrolls sideways); "
                                f"widest: {r['culprits']}")
    finally:
        ctx.close()
    return problems


def downloads(root: Path) -> list[str]:
    """No solutions in the site's downloads: every _sources/ notebook without solution cells, the student .zip
    there, and each Binder button opening the student notebook."""
    import json
    problems = []
    for nb in sorted((root / "_sources").rglob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
        if any("solution" in c.get("metadata", {}).get("tags", []) for c in cells):
            problems.append(f"_sources/{nb.relative_to(root / '_sources').as_posix()}: the download holds the solutions")
    for md in sorted((root / "_sources").rglob("*.md")):
        if re.search(r"^:tags: \[[^\]]*\bsolution\b", md.read_text(encoding="utf-8"), re.M):
            problems.append(f"_sources/{md.relative_to(root / '_sources').as_posix()}: the download holds the solutions")
    if (root / "_sources").is_dir() and not (root / "student-notebooks.zip").exists():
        problems.append("student-notebooks.zip is missing (book/_ext/bookpages.py writes it)")
    for page in sorted(root.glob("chapters/**/*.html")):
        for url in re.findall(r'href="(https://[^"]*/v2/[^"]*)"', page.read_text(encoding="utf-8")):
            if not url.endswith(".student.ipynb"):
                problems.append(f"{page.relative_to(root).as_posix()}: the Binder button opens {url.rsplit('/', 1)[-1]}"
                                ", not the student notebook")
    return problems


# (query, page that must come first or None: a page whose title or headings hold the query, read from the index)
SEARCH_QUERIES = (("NCCL", None), ("monitoring", None), ("术语", "book/glossary"))

_SEARCH_JS = r"""() => { const i = Search._index;
  const items = Array.from(document.querySelectorAll('#search-results ul.search > li > a'))
    .map(a => a.getAttribute('href'));
  return {items, titles: i.titles, docnames: i.docnames, alltitles: i.alltitles}; }"""


def search(browser, base: str, queries=SEARCH_QUERIES) -> tuple[list[str], dict[str, list[str]]]:
    """Problems, and the pages each query listed (in order)."""
    problems, listed = [], {}
    ctx = browser.new_context(viewport={"width": DESKTOP[0], "height": DESKTOP[1]})
    try:
        pg = ctx.new_page()
        for query, first in queries:
            pg.goto(f"{base}search.html?q={query}", wait_until="load", timeout=TIMEOUT_MS)
            pg.wait_for_function("() => { const s = document.querySelector('#search-results .search-summary');"
                                 " return s && s.innerText.length > 0; }", timeout=TIMEOUT_MS)
            r = pg.evaluate(_SEARCH_JS)
            pages = [h.split("#")[0].removesuffix(".html") for h in r["items"]]
            listed[query] = pages
            q = query.lower()
            holds = {d for d, title in zip(r["docnames"], r["titles"]) if q in (title or "").lower()}
            holds |= {r["docnames"][f] for heading, places in r["alltitles"].items() if q in heading.lower()
                      for f, _ in places}
            want = {first} if first else holds
            if not pages:
                problems.append(f"search {query!r}: no results")
            elif want and pages[0] not in want:
                problems.append(f"search {query!r}: first result {pages[0]}, not a page whose title or headings "
                                f"hold it ({', '.join(sorted(want))})")
    finally:
        ctx.close()
    return problems, listed


_SLIDES_JS = r"""() => ({ready: !!(window.Reveal && Reveal.isReady()), slides: window.Reveal ? Reveal.getTotalSlides() : 0,
  math: document.querySelectorAll('mjx-container').length,
  figures: Array.from(document.querySelectorAll('.plotly-graph-div')).map(d => ({id: d.id,
    rendered: d.classList.contains('js-plotly-plot') && !!d.querySelector('.main-svg')}))})"""


def slides(browser, root: Path, deck: str) -> list[str]:
    """One reveal.js deck, served from ``root``, offline: it starts, its maths is typeset, its figures render."""
    problems: list[str] = []
    with Server(root) as server:
        ctx = browser.new_context(viewport={"width": DESKTOP[0], "height": DESKTOP[1]})
        try:
            block_other_hosts(ctx, server.url, problems, [f"slides {deck}"])
            pg = ctx.new_page()
            pg.on("console", lambda m: m.type == "error" and problems.append(f"slides {deck}: console error: "
                                                                              f"{m.text[:200]}"))
            pg.on("pageerror", lambda e: problems.append(f"slides {deck}: page error: {str(e)[:200]}"))
            pg.on("response", lambda r: r.status >= 400 and problems.append(f"slides {deck}: HTTP {r.status}: {r.url}"))
            pg.goto(server.url + deck, wait_until="load", timeout=TIMEOUT_MS)
            pg.evaluate(_MATHJAX_READY_JS)
            pg.wait_for_timeout(300)
            r = pg.evaluate(_SLIDES_JS)
            if not r["ready"] or r["slides"] < 2:
                problems.append(f"slides {deck}: reveal.js did not start ({r['slides']} slides)")
            has_math = "$" in pg.evaluate("() => document.body.innerText") or r["math"]
            if has_math and not r["math"]:
                problems.append(f"slides {deck}: MathJax typeset nothing")
            for text in pg.evaluate(_RAW_TEX_JS):
                problems.append(f"slides {deck}: raw TeX: {text!r}")
            for fig in r["figures"]:
                if not fig["rendered"]:
                    problems.append(f"slides {deck}: plotly figure {fig['id']} did not render")
            if r["ready"]:
                pg.evaluate("() => Reveal.slide(Reveal.getTotalSlides() - 1)")
                pg.wait_for_timeout(200)
            print(f"{'ok  ' if not problems else 'FAIL'} slides {deck}: {r['slides']} slides, {r['math']} formulas, "
                  f"{len(r['figures'])} figures", flush=True)
        finally:
            ctx.close()
    return problems


def run(root: Path, patterns: list[str], shot: str | None, out: Path, links: bool = True,
        deck: tuple[Path, str] | None = None) -> list[str]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        raise SystemExit("playwright is missing: make install (requirements.txt pins it)") from e
    if not (root / "index.html").exists():
        raise SystemExit(f"{root}/index.html is missing: build the book first (make book)")
    todo = [p.relative_to(root).as_posix() for p in pageweights.pages(root)
            if 'http-equiv="refresh"' not in p.read_text(encoding="utf-8", errors="replace")[:600]]  # redirect stubs
    if patterns:
        todo = [p for p in todo if any(fnmatch.fnmatch(p, pat) for pat in patterns)]
    problems = pageweights.broken_links(root) if links else []
    found = downloads(root)
    problems.extend(found)
    print(f"{'ok  ' if not found else 'FAIL'} downloads: no solutions in the site's notebooks", flush=True)
    with Server(root) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            context = browser.new_context(viewport={"width": DESKTOP[0], "height": DESKTOP[1]})
            current = [""]
            block_other_hosts(context, server.url, problems, current)
            for page in todo:
                current[0] = page
                found = check_page(context, server.url, page)
                problems.extend(found)
                print(f"{'ok  ' if not found else 'FAIL'} {page}", flush=True)
            context.close()
            wide = phone_width(browser, server.url, todo)
            problems.extend(wide)
            print(f"{'ok  ' if not wide else 'FAIL'} {len(todo)} pages at 390 px: {len(wide)} scroll sideways",
                  flush=True)
            # the Chinese pages show the very same figure outputs (their notebooks are generated from the English)
            english = [p for p in todo if not p.startswith("zh/")]
            problems.extend(figurecheck.report(browser, server.url, english, root.parent / "browsercheck-figures.json"))
            for page in [p for p in todo if p.startswith("chapters/")][:1] + ["index.html"]:
                found = navigation(browser, server.url, page)
                problems.extend(found)
                print(f"{'ok  ' if not found else 'FAIL'} navigation {page} at {', '.join(map(str, NAV_WIDTHS))} px",
                      flush=True)
            if (root / "search.html").exists() and (root / "searchindex.js").exists():
                found, listed = search(browser, server.url)
                problems.extend(found)
                print(f"{'ok  ' if not found else 'FAIL'} search: " + "; ".join(
                    f"{q!r} → {pages[0] if pages else 'nothing'}" for q, pages in listed.items()), flush=True)
            if deck is not None:
                problems.extend(slides(browser, *deck))
            if shot:
                for path in screenshots(browser, server.url, shot, out):
                    print(f"screenshot: {path}")
        finally:
            browser.close()
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", type=Path, default=Path("_build/html"))
    ap.add_argument("--pages", action="append", default=[], help="glob of pages to check (default: all)")
    ap.add_argument("--screenshot", default="chapters/08-communication/communication.html",
                    help="page to screenshot at desktop and phone width ('' for none)")
    ap.add_argument("--out", type=Path, default=Path("_build/screenshots"))
    ap.add_argument("--slides", type=Path, default=Path("_build/slides"),
                    help="a reveal.js deck (.slides.html) or a folder of them (the first is checked; '' for none)")
    args = ap.parse_args(argv)
    deck = None
    if str(args.slides) not in ("", "."):
        decks = [args.slides] if args.slides.suffix == ".html" else sorted(args.slides.rglob("*.slides.html"))
        if decks:
            home = decks[0].parent
            while home != home.parent and not (home / "_vendor").is_dir():
                home = home.parent
            deck = (home, decks[0].relative_to(home).as_posix())
        else:
            print(f"note: no slide deck under {args.slides} (make slides writes them): slides not checked")
    problems = run(args.root, args.pages, args.screenshot or None, args.out, deck=deck)
    for line in problems:
        print(f"FAIL {line}")
    print(f"browsercheck: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
