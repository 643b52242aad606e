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
* downloads and launch buttons never hand a student the solutions (issue 29, item 8): when the build finishes, each
  chapter's ``.ipynb`` and ``.md`` downloads (``_sources/``) are its *student* notebook (``scripts/student.py``:
  solutions removed, outputs cleared; a page without exercises keeps its executed notebook), and
  ``student-notebooks.zip`` holds them all (the download menu links it); the Binder button opens
  ``<slug>.student.ipynb``, which ``binder/postBuild`` writes beside each chapter; the Colab and JupyterHub buttons
  open the repository's notebook and say that it holds the solutions (the instructor's path);
* search (item 9): ``assets/js/book-search-scorer.js`` is Sphinx's ``html_search_scorer`` (a page whose title or
  headings hold the query first), the index gets ``bookcounts`` (how often each page uses a term) and the two-character
  pieces of every Chinese term (so a partial term such as 术语 finds 术语表);
* ``book.css`` (responsive tables/outputs, CJK font stack, dark-mode figures) is added to every page;
* when the build finishes (issue 29, page weight): the theme's ``fontawesome.js`` (every icon, 1.5 MB) keeps the
  drawings of only the icons the built pages and scripts name (``fa-…``; the others become empty, ~150 KB), and
  Sphinx's search index and tools (~400 KB) are loaded by ``search.html`` only (the theme adds them to every page
  for a search-as-you-type it does not use here: the search box submits to ``search.html``).
"""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import zipfile
from collections import Counter
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
        student_buttons(context, pagename, bool(_EXERCISES.search(md.read_text(encoding="utf-8"))))


STUDENT_ZIP = "student-notebooks.zip"
# a page with exercises: a cell tagged solution/exercise or a "Solution" dropdown (scripts/student.py removes them)
_EXERCISES = re.compile(r"^:tags: \[[^\]]*\b(?:solution|exercise)\b|^(?:`{3,}|:{3,})\{(?:dropdown|admonition)\} *"
                        r"(?:Solution|solution|答案)", re.M)
SOLUTIONS_NOTE = " (the repository's notebook: the solutions are in it)"


def student_buttons(context: dict, pagename: str, exercises: bool) -> None:
    """Downloads: the student notebook (.ipynb, .md) and all of them (.zip). Launch: Binder opens the student notebook
    postBuild writes beside the chapter; Colab and JupyterHub say that they open the notebook with the solutions.
    A page without exercises offers its executed notebook and its MyST source as they are."""
    root = context["pathto"]("_sources", 1).rsplit("_sources", 1)[0]
    what = "the student notebook" if exercises else "the notebook"
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            buttons = group["buttons"]
            for b in buttons:
                if b.get("text") == ".ipynb":
                    b["tooltip"] = f"Download {what}" + (" (solutions removed)" if exercises else "")
            buttons.insert(1, {
                "type": "link", "url": f"{root}_sources/{pagename}.md", "text": ".md", "icon": "fas fa-file-lines",
                "label": "download-md-button",
                "tooltip": f"Download {what} as MyST markdown (jupytext opens it as a notebook)"})
            buttons.insert(2, {
                "type": "link", "url": f"{root}{STUDENT_ZIP}", "text": "all (.zip)", "icon": "fas fa-file-zipper",
                "label": "download-student-zip-button",
                "tooltip": "Every chapter's student notebook (solutions removed), one .zip"})
        elif group.get("label") == "launch-buttons" and exercises:
            for b in group.get("buttons", []):
                if b.get("text") == "Binder":
                    b["url"] = re.sub(r"(urlpath=[^&]*?)\.ipynb$", r"\1.student.ipynb", b["url"])
                    b["tooltip"] = "Launch on Binder (the student notebook: solutions removed)"
                elif b.get("text") in ("Colab", "JupyterHub"):
                    b["tooltip"] = f"Launch on {b['text']}{SOLUTIONS_NOTE}"


def _student_module(root: Path):
    spec = importlib.util.spec_from_file_location("book_student", root / "scripts" / "student.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_student_downloads(srcdir: Path, outdir: Path, docnames) -> int:
    """Each notebook page's student notebook over its _sources/ .ipynb and .md, and all of them in one .zip."""
    import nbformat
    student = _student_module(srcdir)
    written = 0
    with zipfile.ZipFile(outdir / STUDENT_ZIP, "w", zipfile.ZIP_DEFLATED) as bundle:
        for docname in sorted(docnames):
            md = srcdir / (docname + ".md")
            if not (md.with_suffix(".ipynb").exists() and md.exists()):
                continue
            nb, text, removed = student.student_files(md)
            dest = outdir / "_sources" / docname
            dest.parent.mkdir(parents=True, exist_ok=True)
            if removed:
                dest.with_suffix(".ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
                dest.with_suffix(".md").write_text(text, encoding="utf-8")
                bundle.writestr(docname + ".ipynb", nbformat.writes(nb))
                written += 1
            else:   # no exercises: the executed notebook, outputs and all, is what a reader wants
                shutil.copyfile(md.with_suffix(".ipynb"), dest.with_suffix(".ipynb"))
                shutil.copyfile(md, dest.with_suffix(".md"))
    return written


# ---- search (issue 29, item 9) ----

SEARCH_SCORER = Path("assets") / "js" / "book-search-scorer.js"
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{3,}")
_INDEX_WRAP = ("Search.setIndex(", ")")


def _in_code_or_output(node) -> bool:
    from docutils import nodes
    for parent in _ancestors(node):
        if isinstance(parent, (nodes.literal_block, nodes.raw, nodes.comment)):
            return True
        if isinstance(parent, nodes.container) and {"cell_input", "cell_output"} & set(parent.get("classes", [])):
            return True
    return False


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def term_counts(app) -> dict[str, Counter]:
    """docname -> how often its prose (headings and text; not code cells, outputs or code blocks) uses each term,
    stemmed and filtered as Sphinx's index is."""
    from docutils import nodes
    lang = app.builder.indexer.lang
    counts = {}
    for docname in sorted(app.env.found_docs):
        try:
            doctree = app.env.get_doctree(docname)
        except (FileNotFoundError, OSError):
            continue
        c = Counter()
        for text in doctree.findall(nodes.Text):
            if _in_code_or_output(text):
                continue
            for word in lang.split(text.astext()):
                stem = lang.stem(word).lower()
                if not lang.word_filter(stem) and lang.word_filter(word):
                    stem = word.lower()
                if lang.word_filter(stem):
                    c[stem] += 1
        counts[docname] = c
    return counts


def _files(v) -> list[int]:
    return v if isinstance(v, list) else [v]


def tune_index(index: dict, counts: dict[str, Counter]) -> dict:
    """``index`` (searchindex.js's object) with ``bookcounts`` and the two-character pieces of Chinese terms."""
    docs = index["docnames"]
    book: dict[str, list[int]] = {}
    pages: dict[str, set[int]] = {}
    for key in ("terms", "titleterms"):      # a page whose heading holds a term is under titleterms only
        for term, files in index[key].items():
            pages.setdefault(term, set()).update(_files(files))
    for term, files in pages.items():
        if len(files) < 2:                    # one page: nothing to rank
            continue
        row = []
        for f in sorted(files):
            n = counts.get(docs[f], Counter()).get(term, 0)
            if n >= 2:
                row += [f, n]
        if row:
            book[term] = row
    index["bookcounts"] = book
    for key in ("terms", "titleterms"):
        table = index[key]
        pieces: dict[str, set[int]] = {}
        for term, files in list(table.items()):
            for run in _CJK_RUN.findall(term):
                for i in range(len(run) - 1):
                    pieces.setdefault(run[i:i + 2], set()).update(_files(files))
        for piece, files in pieces.items():
            merged = sorted(files | set(_files(table.get(piece, []))))
            table[piece] = merged[0] if len(merged) == 1 else merged
    return index


def tune_search_index(outdir: Path, counts: dict[str, Counter]) -> int:
    path = outdir / "searchindex.js"
    text = path.read_text(encoding="utf-8")
    if not (text.startswith(_INDEX_WRAP[0]) and text.rstrip().endswith(_INDEX_WRAP[1])):
        return 0
    index = json.loads(text.rstrip()[len(_INDEX_WRAP[0]):-len(_INDEX_WRAP[1])])
    tune_index(index, counts)
    path.write_text(_INDEX_WRAP[0] + json.dumps(index, separators=(",", ":"), sort_keys=True) + _INDEX_WRAP[1],
                    encoding="utf-8")
    return len(index["bookcounts"])


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
    for path in [*outdir.rglob("*.html"), *(p for p in (outdir / "_static").rglob("*.js") if p != fa and p.is_file())]:
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
        shutil.rmtree(out / "_static" / "reveal.js", ignore_errors=True)   # in _build/vendor for the slides only
        search_only_on_search_page(out)
        subset_fontawesome(out)
        write_student_downloads(Path(app.srcdir), out, app.env.found_docs)
        if getattr(app.builder, "indexer", None) is not None:
            tune_search_index(out, term_counts(app))


def builder_inited(app):
    root = Path(app.srcdir)
    vendor = root / VENDOR_DIR
    for path in (vendor, root / "assets" / "css", root / "assets" / "js"):
        if path.is_dir() and str(path) not in app.config.html_static_path:
            app.config.html_static_path.append(str(path))
    if not (vendor / PLOTLY_JS).exists():
        raise RuntimeError(f"{vendor / PLOTLY_JS} is missing: run `make static` (it copies plotly.js and MathJax "
                           "from the installed packages) before building the book")
    if (root / SEARCH_SCORER).exists():     # read when the search index is made (after this event)
        app.config.html_search_scorer = str(root / SEARCH_SCORER)
    app.add_css_file("book.css")
    app.add_js_file("book-nav.js", defer="defer")   # the visible sidebar buttons work at every width


def setup(app):
    app.connect("builder-inited", builder_inited)
    app.connect("build-finished", build_finished)
    # after sphinx-book-theme's header buttons (priority 501)
    app.connect("html-page-context", page_context, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
