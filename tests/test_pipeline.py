"""The book's own plumbing: pairing check, glossary generation, the plotly renderer."""
import importlib.util
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _pair(tmp_path):
    folder = tmp_path / "chapters" / "99-demo"
    folder.mkdir(parents=True)
    for ext in (".md", ".ipynb"):
        shutil.copy(ROOT / "book" / f"reference-measurements{ext}", folder / f"demo{ext}")
    return folder / "demo.ipynb"


def test_pair_in_sync_has_no_problems(tmp_path):
    nb = _load("notebooks")
    assert nb.drift(_pair(tmp_path)) == []


def test_edited_md_without_resync_names_the_chapter(tmp_path):
    nb = _load("notebooks")
    ipynb = _pair(tmp_path)
    md = ipynb.with_suffix(".md")
    md.write_text(md.read_text().replace("rows = []", "rows = []  # edited"))
    problems = nb.drift(ipynb)
    assert len(problems) == 1 and "99-demo" in problems[0] and "drifted" in problems[0]
    assert "make notebooks NB=" in problems[0]


def test_unexecuted_cells_are_reported(tmp_path):
    import nbformat

    nb = _load("notebooks")
    ipynb = _pair(tmp_path)
    book = nbformat.read(ipynb, as_version=4)
    for c in book.cells:
        if c.cell_type == "code":
            c.execution_count, c.outputs = None, []
    nbformat.write(book, ipynb)
    assert any("unexecuted" in p for p in nb.drift(ipynb))


def test_every_toc_notebook_has_its_md():
    nb = _load("notebooks")
    for ipynb in nb.toc_notebooks():
        assert ipynb.suffix == ".ipynb" and ipynb.with_suffix(".md").exists(), ipynb


def test_glossary_page_is_fresh_and_complete():
    g = _load("glossary")
    terms = g.collect()
    assert terms and all(t["zh"] and t["definition"] for t in terms)
    assert (ROOT / "book" / "glossary.md").read_text() == g.render(terms), "run `make glossary`"


def test_plotly_renderer_is_offline_and_deterministic():
    from helpers import plotting

    fig = plotting.figure("t", "x (s)", "y (GB/s)")
    fig.add_scatter(x=[1, 2], y=[3, 4])
    a = plotting.BookRenderer().to_mimebundle(fig.to_dict())
    b = plotting.BookRenderer().to_mimebundle(fig.to_dict())
    assert a["text/html"] == b["text/html"]
    assert "cdn.plot.ly" not in a["text/html"] and "<script src" not in a["text/html"]
    assert a["application/vnd.plotly.v1+json"]["data"][0]["y"] == [3, 4]
