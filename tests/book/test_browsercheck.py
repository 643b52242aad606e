"""scripts/browsercheck.py and scripts/pageweights.py on a small book-written site: what they must catch.

The browser part runs headless Chromium (the Debian package; .ci/run installs it) through Playwright and is skipped,
with the reason, where either is missing. The static part (links, anchors, weights) needs no browser.
"""
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


sys.path.insert(0, str(ROOT / "scripts"))
pageweights = _load("pageweights")
browsercheck = _load("browsercheck")

import plotly  # noqa: E402

PLOTLY = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def _page(body, head=""):
    return f"<!doctype html><html><head><meta charset='utf-8'>{head}</head><body><main>{body}</main></body></html>"


def _site(root: Path, with_plotly: bool) -> Path:
    (root / "chapters").mkdir(parents=True)
    (root / "_static").mkdir()
    figure_head = ""
    if with_plotly:
        shutil.copyfile(PLOTLY, root / "_static" / "plotly.min.js")
        figure_head = "<script src='../_static/plotly.min.js'></script>"
    (root / "index.html").write_text(_page(
        "<a href='chapters/good.html#lab'>good</a> <a href='chapters/gone.html'>gone</a> "
        "<a href='chapters/good.html#nowhere'>bad anchor</a> <a href='https://example.org/'>outside</a>"))
    (root / "chapters" / "good.html").write_text(_page(
        "<h2 id='lab'>Lab</h2><p>Bandwidth is <code>$x$</code> in code, which is fine.</p>"
        "<div id='fig-ok' class='plotly-graph-div' style='height:200px'></div>"
        "<script>Plotly.newPlot('fig-ok', [{x: [1, 2], y: [3, 4]}], {});</script>"
        "<a href='../index.html'>home</a>", figure_head))
    (root / "chapters" / "rawtex.html").write_text(_page(
        "<p>The time is $t = \\frac{n}{B}$ for a message of n bytes.</p>"))
    (root / "chapters" / "badfig.html").write_text(_page(
        "<div id='fig-broken' class='plotly-graph-div'></div>"
        "<script>if (window.Plotly) { Plotly.newPlot('fig-broken', 'not data'); }</script>"))
    (root / "chapters" / "noisy.html").write_text(_page(
        "<p>ok</p><img src='../_static/missing.png'><script>console.error('boom');</script>"
        "<script src='https://example.org/cdn.js'></script>"))
    return root


def test_broken_links_and_anchors_are_named(tmp_path):
    bad = pageweights.broken_links(_site(tmp_path / "site", with_plotly=False))
    assert "index.html: chapters/gone.html (no such file)" in bad
    assert "index.html: chapters/good.html#nowhere (no anchor #nowhere)" in bad
    assert not any("#lab" in b or "example.org" in b or "home" in b for b in bad)


def test_page_weights_count_own_and_shared(tmp_path):
    root = _site(tmp_path / "site", with_plotly=False)
    rows = {r.page: r for r in pageweights.weigh(root)}
    good = rows["chapters/good.html"]
    assert good.figures == 1 and good.own_bytes == (root / "chapters" / "good.html").stat().st_size
    assert rows["index.html"].figures == 0


def _browser_or_skip():
    pytest.importorskip("playwright.sync_api", reason="playwright not installed (requirements.txt pins it)")
    try:
        browsercheck.find_chromium()
    except SystemExit as e:
        pytest.skip(str(e))


def test_browser_check_names_page_and_item(tmp_path):
    _browser_or_skip()
    root = _site(tmp_path / "site", with_plotly=True)
    problems = browsercheck.run(root, [], "chapters/good.html", tmp_path / "shots")
    text = "\n".join(problems)
    assert "chapters/rawtex.html: raw TeX in the text" in text, text
    assert "chapters/badfig.html: plotly figure fig-broken did not render" in text, text
    assert "chapters/noisy.html: console error: boom" in text, text
    assert "chapters/noisy.html: HTTP 404" in text and "missing.png" in text, text
    assert "chapters/noisy.html: request to another host" in text and "example.org" in text, text
    assert "index.html: chapters/gone.html (no such file)" in text, text
    assert not any(p.startswith("chapters/good.html") for p in problems), text   # the good page passes
    shots = sorted(p.name for p in (tmp_path / "shots").glob("*.png"))
    assert "good-desktop.png" in shots and "good-phone.png" in shots


def test_a_clean_site_passes(tmp_path):
    _browser_or_skip()
    root = tmp_path / "clean"
    (root / "_static").mkdir(parents=True)
    shutil.copyfile(PLOTLY, root / "_static" / "plotly.min.js")
    (root / "index.html").write_text(_page(
        "<div id='fig-a' class='plotly-graph-div'></div><script>Plotly.newPlot('fig-a', [{y: [1, 2]}]);</script>",
        "<script src='_static/plotly.min.js'></script>"))
    assert browsercheck.run(root, [], None, tmp_path / "shots") == []


def test_downloads_that_hold_solutions_are_named(tmp_path):
    import json
    root = tmp_path / "site"
    (root / "_sources" / "chapters").mkdir(parents=True)
    (root / "chapters").mkdir()
    cell = {"cell_type": "code", "metadata": {"tags": ["solution", "hide-cell"]}, "source": "x = 1", "outputs": []}
    (root / "_sources" / "chapters" / "a.ipynb").write_text(json.dumps({"cells": [cell]}))
    (root / "_sources" / "chapters" / "a.md").write_text("```{code-cell} ipython3\n:tags: [solution, hide-cell]\n\nx\n```\n")
    (root / "chapters" / "a.html").write_text(
        "<a href='https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/chapters/a.ipynb'>Binder</a>".replace("'", '"'))
    bad = browsercheck.downloads(root)
    assert any("a.ipynb: the download holds the solutions" in b for b in bad)
    assert any("a.md: the download holds the solutions" in b for b in bad)
    assert "student-notebooks.zip is missing (book/_ext/bookpages.py writes it)" in bad
    assert any("the Binder button opens a.ipynb" in b for b in bad)
    cell["metadata"]["tags"] = ["exercise"]
    (root / "_sources" / "chapters" / "a.ipynb").write_text(json.dumps({"cells": [cell]}))
    (root / "_sources" / "chapters" / "a.md").write_text("```{code-cell} ipython3\n:tags: [exercise]\n\nx\n```\n")
    (root / "student-notebooks.zip").write_bytes(b"")
    (root / "chapters" / "a.html").write_text('<a href="https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/'
                                              'chapters/a.student.ipynb">Binder</a>')
    assert browsercheck.downloads(root) == []


SCORER = ROOT / "assets" / "js" / "book-search-scorer.js"

# A search index as Sphinx writes it (plus bookcounts): 0 a chapter with the term in a heading, 1 one that uses it
# 30 times in its text, 2 one that uses it once, 3 one with it in its title, 4 the glossary.
_INDEX = {
    "docnames": ["ch03", "ch08", "ch12", "ch99", "glossary"],
    "titles": ["3. Networks", "8. Communication", "12. Monitoring", "99. NCCL inside", "Glossary · 术语表"],
    "alltitles": {"Tuning NCCL": [[0, "tuning-nccl"]], "3. Networks": [[0, None]], "Glossary · 术语表": [[4, None]]},
    "bookcounts": {"nccl": [0, 40, 1, 30, 3, 5]},
}
_HARNESS = """<!doctype html><meta charset="utf-8"><script>
var stopwords = ["a", "the"];
var splitQuery = (q) => q.split(/[^\\p{Letter}\\p{Number}_]+/gu).filter(t => t);
const Search = {_index: INDEX, _parseQuery: (q) => [q, new Set(splitQuery(q.toLowerCase())), new Set(), new Set(),
                                                       new Set()]};
</script>"""


def test_search_scorer_ranks_title_then_headings_then_the_glossary_then_frequency(tmp_path):
    _browser_or_skip()
    import json
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browsercheck.find_chromium(), headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            pg = browser.new_page()
            pg.set_content(_HARNESS.replace("INDEX", json.dumps(_INDEX)))
            pg.add_script_tag(path=str(SCORER))
            scores = pg.evaluate("""() => {
              Search._parseQuery("NCCL");
              const r = (doc, anchor) => Scorer.score([doc, "t", anchor, null, 5, doc + ".ipynb"]);
              return {title: r("ch99", ""), heading: r("ch03", ""), headingLink: r("ch03", "#tuning-nccl"),
                      glossary: r("glossary", "#term-NCCL"), often: r("ch08", ""), once: r("ch12", ""),
                      object: Scorer.score(["ch03", "t", "#x", "a function", 7, "f"])}; }""")
            assert scores["title"] > scores["heading"] > scores["headingLink"] > scores["glossary"]
            assert scores["glossary"] > scores["often"] > scores["once"] > 0
            assert scores["object"] == 7                                   # API objects keep Sphinx's score
            cjk = pg.evaluate("""() => { Search._parseQuery("术语");
              return [Scorer.score(["glossary", "t", "", null, 5, "g"]), Scorer.score(["ch08", "t", "", null, 5, "c"])]; }""")
            assert cjk[0] > cjk[1]                                         # the title holds the partial term
        finally:
            browser.close()


def test_chinese_terms_are_split_into_pairs_and_counts_kept(tmp_path):
    spec = importlib.util.spec_from_file_location("bookpages", ROOT / "book" / "_ext" / "bookpages.py")
    bookpages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bookpages)
    from collections import Counter
    index = {"docnames": ["a", "b"], "terms": {"术语表": 0, "nccl": [0, 1], "gpu集群概述": 1, "通信": 1},
             "titleterms": {"nccl": 1}}
    counts = {"a": Counter(nccl=5), "b": Counter(nccl=1)}
    out = bookpages.tune_index(index, counts)
    assert out["terms"]["术语"] == 0 and out["terms"]["语表"] == 0        # 术语表 → 术语, 语表
    assert out["terms"]["集群"] == 1 and out["terms"]["通信"] == 1
    assert out["bookcounts"]["nccl"] == [0, 5]                           # pages using it once are not listed


def test_a_slide_deck_runs_offline(tmp_path):
    """A deck made by scripts/student.py from a small notebook (maths, a plotly figure) starts, typesets and draws
    with only the book's vendored reveal.js, MathJax and plotly.js (make static puts them in _build/vendor)."""
    _browser_or_skip()
    vendor = ROOT / "_build" / "vendor"
    if not all((vendor / name).is_dir() for name in ("reveal.js", "mathjax", "plotly")):
        pytest.skip("_build/vendor lacks reveal.js, MathJax or plotly.js: run make static")
    import jupytext
    import nbformat
    import plotly.graph_objects as go
    student = _load("student")
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    plot = nbformat.v4.new_code_cell("fig")
    plot.outputs = [nbformat.v4.new_output("display_data", data={"text/html": fig.to_html(
        include_plotlyjs=False, full_html=False, div_id="fig-deck")})]
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A deck\n\nTime $t = \\frac{n}{B}$."),
        nbformat.v4.new_markdown_cell("## A figure"), plot])
    md = tmp_path / "deck.md"
    jupytext.write(nb, md, fmt="md:myst")
    nbformat.write(nb, md.with_suffix(".ipynb"))
    slides = tmp_path / "slides"
    student.slides_vendor(vendor, slides / "_vendor")
    deck = student.slides(md, out=slides, folder=Path("chapters/99-deck"))
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browsercheck.find_chromium(), headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            problems = browsercheck.slides(browser, slides, deck.relative_to(slides).as_posix())
        finally:
            browser.close()
    assert problems == [], problems
