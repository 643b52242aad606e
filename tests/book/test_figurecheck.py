"""Issue 29: figures that fit (scripts/figurecheck.py), page weight (pageweights cold bytes, plotly's cartesian bundle,
fontawesome subset, search index only on the search page) and the CJK font subset's characters.

The browser part runs headless Chromium through Playwright and is skipped, with the reason, where either is missing.
"""
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


sys.path.insert(0, str(ROOT / "scripts"))
figurecheck = _load("figurecheck", ROOT / "scripts" / "figurecheck.py")
pageweights = _load("pageweights", ROOT / "scripts" / "pageweights.py")
static_assets = _load("static_assets", ROOT / "scripts" / "static_assets.py")
browsercheck = _load("browsercheck", ROOT / "scripts" / "browsercheck.py")
bookpages = _load("bookpages", ROOT / "book" / "_ext" / "bookpages.py")

import plotly  # noqa: E402

PLOTLY = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def test_every_stored_figure_uses_a_trace_of_the_cartesian_bundle():
    seen = set()
    for nb in ROOT.glob("**/*.ipynb"):
        if ".venv" in nb.parts or "_build" in nb.parts or ".ipynb_checkpoints" in nb.parts:
            continue
        for cell in json.loads(nb.read_text(encoding="utf-8")).get("cells", []):
            for out in cell.get("outputs", []):
                fig = out.get("data", {}).get("application/vnd.plotly.v1+json")
                for trace in (fig or {}).get("data", []):
                    seen.add((trace.get("type", "scatter"), nb.name))
    assert seen, "no stored plotly figure found"
    other = sorted(s for s in seen if s[0] not in static_assets.CARTESIAN_TRACES)
    assert not other, f"trace types outside plotly.js's cartesian bundle (the book would not draw them): {other}"


def test_cjk_subset_holds_every_cjk_character_of_the_sources():
    text = static_assets.book_cjk_text()
    assert "境" in text and "界" in text      # from the helpers' data and a notebook output, not a .md


def test_plotly_version_reads_full_and_partial_bundle_headers(tmp_path):
    full, part = tmp_path / "a.js", tmp_path / "b.js"
    full.write_text("/**\n* plotly.js v4.1.1\n*/")
    part.write_text("/**\n* plotly.js (cartesian - minified) v4.1.1\n*/")
    assert static_assets.plotly_version(full) == static_assets.plotly_version(part) == "4.1.1"


def test_fontawesome_subset_keeps_named_icons_only(tmp_path):
    (tmp_path / "_static" / "scripts").mkdir(parents=True)
    fa = tmp_path / "_static" / "scripts" / "fontawesome.js"
    fa.write_text('var a={bars:[448,512,["navicon"],"f0c9","M0 96C0 78"],"cc-visa":[576,512,[],"f1f0","M470 166"],'
                  '"file-lines":[384,512,[128441,"file-alt"],"f15c","M64 0C28"]};')
    (tmp_path / "index.html").write_text('<i class="fa-solid fa-bars"></i><i class="fas fa-file-alt"></i>')
    kept, _ = bookpages.subset_fontawesome(tmp_path)
    out = fa.read_text()
    assert kept == 2 and '"M0 96C0 78"' in out and '"M64 0C28"' in out      # by name and by alias
    assert '"cc-visa":[576,512,[],"f1f0",""]' in out


def test_search_index_only_on_the_search_page(tmp_path):
    tag = '\n<script src="_static/searchtools.js"></script><script src="searchindex.js"></script>'
    (tmp_path / "index.html").write_text(f"<head>{tag}</head>")
    (tmp_path / "search.html").write_text(f"<head>{tag}</head>")
    assert bookpages.search_only_on_search_page(tmp_path) == 1
    assert "searchindex" not in (tmp_path / "index.html").read_text()
    assert "searchindex" in (tmp_path / "search.html").read_text()


def test_cold_weight_is_the_page_and_everything_it_loads(tmp_path):
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "big.js").write_text("x" * 5000)
    (tmp_path / "index.html").write_text("<html><head><script src='_static/big.js'></script></head></html>")
    row = pageweights.weigh(tmp_path)[0]
    assert row.cold_bytes == 5000 + (tmp_path / "index.html").stat().st_size
    assert 0 < row.cold_gz_bytes < row.cold_bytes


def _browser_or_skip():
    pytest.importorskip("playwright.sync_api", reason="playwright not installed (requirements.txt pins it)")
    try:
        browsercheck.find_chromium()
    except SystemExit as e:
        pytest.skip(str(e))


def _fig(div, data, layout, height):
    return (f"<div id='{div}' class='plotly-graph-div' style='height:{height}px; width:100%'></div>"
            f"<script>Plotly.newPlot('{div}', {json.dumps(data)}, {json.dumps(layout)});</script>")


def test_overlaps_clipping_and_squashed_plots_are_found(tmp_path):
    _browser_or_skip()
    root = tmp_path / "site"
    (root / "_static").mkdir(parents=True)
    shutil.copyfile(PLOTLY, root / "_static" / "plotly.min.js")
    clash = [dict(x=0.5, y=0.5, xref="paper", yref="paper", text="a long note here", showarrow=False),
             dict(x=0.52, y=0.5, xref="paper", yref="paper", text="another long note", showarrow=False)]
    body = (_fig("fig-clash", [{"y": [1, 2]}], {"annotations": clash, "height": 300}, 300)
            + _fig("fig-flat", [{"y": [1, 2]}], {"height": 160, "margin": {"t": 40, "b": 60}}, 160)
            + _fig("fig-fine", [{"y": [1, 2]}], {"height": 300, "title": {"text": "fine"}}, 300))
    (root / "index.html").write_text(
        "<!doctype html><html><head><meta charset='utf-8'><script src='_static/plotly.min.js'></script></head>"
        f"<body><main>{body}</main></body></html>")
    from playwright.sync_api import sync_playwright
    with browsercheck.Server(root) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browsercheck.find_chromium(), headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            found = figurecheck.check(browser, server.url, ["index.html"])
        finally:
            browser.close()
    for width in figurecheck.WIDTHS:
        recs = {r["id"]: r for r in found[width]["index.html"]}
        assert recs["fig-clash"]["overlaps"], recs["fig-clash"]
        assert recs["fig-flat"]["squashed"] and not recs["fig-flat"]["overlaps"], recs["fig-flat"]
        assert not figurecheck.bad(recs["fig-fine"]), recs["fig-fine"]
    counts = figurecheck.summary(found)[390]
    assert counts["figures"] == 3 and counts["bad_figures"] == 2
