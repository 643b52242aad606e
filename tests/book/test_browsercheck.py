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
