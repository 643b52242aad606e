"""Sphinx extension: pages that work offline, stay light and read well on any screen (issue 16).

What it does to the built HTML (the notebooks' stored outputs are not touched, so nothing needs re-executing):

* vendored libraries come from ``_build/vendor`` (filled by ``make static`` from installed packages: plotly.js
  from the ``plotly`` wheel, MathJax 3 from the ``django-static-mathjax`` wheel) and are served from ``_static/``;
  MathJax is loaded by Sphinx only on pages with equations (``mathjax_path`` in ``_config.yml``);
* plotly.min.js and ``book-figures.js`` are added, deferred, only to pages that hold a plotly figure; each figure's
  inline ``Plotly.newPlot`` script is rewritten to run at ``DOMContentLoaded`` (after the deferred library);
* long floats in a figure's numeric arrays are rounded to ``SIG_DIGITS`` significant digits (thinning: a screen
  cannot show more, and the largest pages halve);
* duplicate inline scripts are dropped (sphinx-thebe declares ``const THEBE_JS_URL`` twice otherwise), and the
  theme's colour mode defaults to ``auto`` (an empty one logs a console error on a first visit);
* the chapter's jupytext ``.md`` source is offered in the download menu beside the ``.ipynb``;
* ``book.css`` (responsive tables/outputs, CJK font stack, dark-mode figures) is added to every page;
* when the build finishes (issue 29, page weight): the theme's ``fontawesome.js`` (every icon, 1.5 MB) keeps the
  drawings of only the icons the built pages and scripts name (``fa-…``; the others become empty, ~150 KB), and
  Sphinx's search index and tools (~400 KB) are loaded by ``search.html`` only (the theme adds them to every page
  for a search-as-you-type it does not use here: the search box submits to ``search.html``).
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

SIG_DIGITS = 5
VENDOR_DIR = Path("_build") / "vendor"
PLOTLY_JS = "plotly/plotly.min.js"
FIGURES_JS = "book-figures.js"

# The inline script plotly's to_html emits after each figure div (stored in the notebooks' text/html outputs).
_FIG_SCRIPT = re.compile(r'<script(?: type="text/javascript")?>(\s*window\.PLOTLYENV=.*?)</script>', re.S)
_NUM_ARRAY = re.compile(r"\[[-+0-9.eEnul,]+\]")  # a JSON array of numbers/nulls: no quotes, so no strings
_LONG_FLOAT = re.compile(r"-?\d+\.\d{%d,}(?:[eE][-+]?\d+)?" % (SIG_DIGITS + 1))


def _short(m: re.Match) -> str:
    v = float(m.group(0))
    s = f"{v:.{SIG_DIGITS}g}"
    return s if len(s) < len(m.group(0)) else m.group(0)


def thin_numbers(script: str) -> str:
    """Round long floats inside numeric JSON arrays (never inside strings, labels or hover templates)."""
    return _NUM_ARRAY.sub(lambda a: _LONG_FLOAT.sub(_short, a.group(0)), script)


def defer_figures(body: str) -> tuple[str, int]:
    """Make every plotly figure script wait for DOMContentLoaded (the deferred plotly.min.js has run by then)."""
    def wrap(m: re.Match) -> str:
        return ('<script>window.addEventListener("DOMContentLoaded", function () {'
                + thin_numbers(m.group(1)) + '});</script>')
    return _FIG_SCRIPT.subn(wrap, body)


def _dedupe_scripts(context: dict) -> None:
    files, seen, keep = context.get("script_files") or [], set(), []
    for js in files:
        key = (getattr(js, "filename", js) or "", str(getattr(js, "attributes", {}).get("body", "")))
        if key not in seen:
            seen.add(key)
            keep.append(js)
    files[:] = keep


def _md_source(app, pagename: str) -> Path | None:
    """The jupytext .md paired with a notebook page, if any."""
    src = Path(app.srcdir) / (pagename + ".ipynb")
    md = src.with_suffix(".md")
    return md if src.exists() and md.exists() else None


def page_context(app, pagename, templatename, context, doctree):
    _dedupe_scripts(context)
    # an empty default mode makes the theme log "Got invalid theme mode" on a reader's first visit
    context["default_mode"] = context.get("default_mode") or "auto"
    body = context.get("body")
    if body and "Plotly.newPlot" in body:
        context["body"], n = defer_figures(body)
        if n:
            app.builder.add_js_file(PLOTLY_JS, defer="defer")
            app.builder.add_js_file(FIGURES_JS, defer="defer")
    md = _md_source(app, pagename)
    if md is not None:
        dest = Path(app.outdir) / "_sources" / (pagename + ".md")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(md, dest)
        for group in context.get("header_buttons", []):
            if group.get("label") == "download-buttons":
                group["buttons"].insert(1, {
                    "type": "link", "url": f"{context['pathto']('_sources', 1)}/{pagename}.md",
                    "text": ".md", "icon": "fas fa-file-lines", "label": "download-md-button",
                    "tooltip": "Download the MyST source (jupytext pairs it with the notebook)"})


_STR = r'"(?:[^"\\]|\\.)*"'
# one icon of fontawesome.js's packs: name:[width,height,[aliases],unicode,path or [paths]]
_FA_ICON = re.compile(r'(?<=[{,])("?[a-z0-9-]+"?):\[(\d+),(\d+),\[([^\]]*)\],("[0-9a-f]*"|\d+),('
                      + _STR + r'|\[(?:' + _STR + r',?)*\])\]')
_FA_NAME = re.compile(r"\bfa-([a-z0-9-]+)")
_SEARCH_JS = re.compile(r'\s*<script src="[^"]*(?:_static/searchtools|_static/language_data|searchindex)\.js"></script>')


def subset_fontawesome(outdir: Path) -> tuple[int, int]:
    """Keep the drawings of the icons the site names; (icons kept, bytes after)."""
    fa = outdir / "_static" / "scripts" / "fontawesome.js"
    if not fa.exists():
        return 0, 0
    used: set[str] = set()
    for path in [*outdir.rglob("*.html"), *(p for p in (outdir / "_static").rglob("*.js") if p != fa)]:
        used.update(_FA_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    kept = []

    def icon(m: re.Match) -> str:
        if ({m.group(1).strip('"')} | set(re.findall(r'"([a-z0-9-]+)"', m.group(4)))) & used:
            kept.append(m.group(1))
            return m.group(0)
        return f'{m.group(1)}:[{m.group(2)},{m.group(3)},[],{m.group(5)},""]'
    fa.write_text(_FA_ICON.sub(icon, fa.read_text(encoding="utf-8")), encoding="utf-8")
    return len(kept), fa.stat().st_size


def search_only_on_search_page(outdir: Path) -> int:
    n = 0
    for page in outdir.rglob("*.html"):
        if page.name == "search.html" and page.parent == outdir:
            continue
        text = page.read_text(encoding="utf-8")
        new = _SEARCH_JS.sub("", text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            n += 1
    return n


def build_finished(app, exc):
    if exc is None and app.builder.format == "html":
        out = Path(app.outdir)
        search_only_on_search_page(out)
        subset_fontawesome(out)


def builder_inited(app):
    root = Path(app.srcdir)
    vendor = root / VENDOR_DIR
    for path in (vendor, root / "assets" / "css", root / "assets" / "js"):
        if path.is_dir() and str(path) not in app.config.html_static_path:
            app.config.html_static_path.append(str(path))
    if not (vendor / PLOTLY_JS).exists():
        raise RuntimeError(f"{vendor / PLOTLY_JS} is missing: run `make static` (it copies plotly.js and MathJax "
                           "from the installed packages) before building the book")
    app.add_css_file("book.css")
    app.add_js_file("book-nav.js", defer="defer")   # the visible sidebar buttons work at every width


def setup(app):
    app.connect("builder-inited", builder_inited)
    app.connect("build-finished", build_finished)
    # after sphinx-book-theme's header buttons (priority 501)
    app.connect("html-page-context", page_context, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
