"""The Chinese edition (issue 30): scripts/zh.py's round trip, its sync check failing on a changed English section and
on a changed code cell, the generated Chinese notebook carrying the English notebook's code and outputs, the glossary
forms on every translated page, and the language switch's page mapping."""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


zh = _load("zh_script", ROOT / "scripts" / "zh.py")
glossary = _load("glossary_script", ROOT / "scripts" / "glossary.py")
notebooks = _load("notebooks_script", ROOT / "scripts" / "notebooks.py")
zhlang = sys.modules["zhlang"]          # imported by scripts/zh.py (book/_ext on its path)

FRONT = """---
jupytext:
  formats: ipynb,md:myst
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
    jupytext_version: 1.19.6
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
TOY = FRONT + """
(ch01)=
# 1. A toy chapter

Intro prose about {term}`NVLink`.

```{code-cell} ipython3
x = 6 * 7  # the answer
print(x)
```

## Lab 1: add

We add two numbers.

```{code-cell} ipython3
:tags: [nbval-ignore-output]

print(x + 1)
```

## What to remember

- Adding works.
"""
TRANSLATION = """<<<block 0>>>
(ch01)=
# 1. 一个玩具章节

关于 {term}`NVLink 高速互连 <NVLink>` 的引言。
<<<block 1>>>
## 实验 1：加法

我们把两个数相加。
<<<block 2>>>
## 要点回顾

- 加法可行。
"""


def _execute_by_hand(md: Path) -> None:
    """The English .ipynb as `scripts/notebooks.py execute` stores it, with outputs written in (no kernel)."""
    nb = jupytext.read(md)
    n = 0
    for cell in nb.cells:
        cell.pop("id", None)
        if cell.cell_type == "code":
            n += 1
            cell.execution_count = n
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{41 + n}\n")]
    nb.nbformat_minor = 4
    jupytext.write(nb, md.with_suffix(".ipynb"), fmt="ipynb")


@pytest.fixture
def book(tmp_path, monkeypatch, capsys):
    """A one-chapter tree with an executed English notebook and its assembled Chinese edition."""
    monkeypatch.setattr(zh, "ROOT", tmp_path)
    en = tmp_path / "chapters" / "01-toy" / "toy.md"
    en.parent.mkdir(parents=True)
    en.write_text(TOY, encoding="utf-8")
    _execute_by_hand(en)
    (tmp_path / "blocks.txt").write_text(TRANSLATION, encoding="utf-8")
    assert zh.main(["assemble", str(en), str(tmp_path / "blocks.txt")]) == 0
    assert zh.main(["notebooks", str(en.parent)]) == 0
    capsys.readouterr()
    return en


def _check(en: Path, capsys) -> tuple[int, str]:
    rc = zh.main(["check", str(en)])
    return rc, capsys.readouterr().out


def test_blocks_then_assemble_round_trips(tmp_path, monkeypatch, capsys):
    """Assembling the English blocks unchanged gives the English page plus one sync line per heading."""
    monkeypatch.setattr(zh, "ROOT", tmp_path)
    en = tmp_path / "chapters" / "01-toy" / "toy.md"
    en.parent.mkdir(parents=True)
    en.write_text(TOY, encoding="utf-8")
    assert zh.main(["blocks", str(en)]) == 0
    blocks = capsys.readouterr().out
    assert blocks.count("<<<block ") == 3 and "```{code-cell}" not in blocks and "jupytext" not in blocks
    (tmp_path / "b.txt").write_text(blocks, encoding="utf-8")
    zh.main(["assemble", str(en), str(tmp_path / "b.txt")])
    out = zh.zh_path(en).read_text(encoding="utf-8")
    assert out.count("% sync: ") == 3
    assert "\n".join(ln for ln in out.split("\n") if not ln.startswith("% sync: ")) == TOY


def test_assembled_translation_is_in_sync_with_code_verbatim(book, capsys):
    text = zh.zh_path(book).read_text(encoding="utf-8")
    assert "# 1. 一个玩具章节\n% sync: " in text and "## 实验 1：加法\n% sync: " in text
    assert zh.code_cells(zh.parse(text)) == zh.code_cells(zh.parse(TOY))
    assert zh.parse(text).front == zh.parse(TOY).front
    assert _check(book, capsys) == (0, "")


def test_check_fails_naming_the_section_when_an_english_section_changes(book, capsys):
    book.write_text(TOY.replace("We add two numbers.", "We add two integers."), encoding="utf-8")
    rc, out = _check(book, capsys)
    assert rc == 1
    assert "chapters/01-toy/toy.zh.md: section 2 is stale: the English '## Lab 1: add' changed" in out
    assert "section 1" not in out and "section 3" not in out
    zh.main(["todo", str(book)])
    assert "section 2 is stale" in capsys.readouterr().out
    # retranslated and re-stamped: in sync again (the notebook is regenerated from the re-executed English one)
    zh.main(["stamp", str(zh.zh_path(book)), "--sections", "2"])
    _execute_by_hand(book)
    zh.main(["notebooks", str(book)])
    capsys.readouterr()
    assert _check(book, capsys) == (0, "")


def test_check_fails_at_once_on_a_changed_code_cell(book, capsys):
    z = zh.zh_path(book)
    z.write_text(z.read_text(encoding="utf-8").replace("print(x + 1)", "print(x + 2)"), encoding="utf-8")
    rc, out = _check(book, capsys)
    assert rc == 1 and "chapters/01-toy/toy.zh.md: code cell 2 differs from the English" in out
    zh.main(["sync-code", str(z)])
    capsys.readouterr()
    assert _check(book, capsys) == (0, "")


def test_sync_code_aligns_cells_the_english_added_or_removed(book, capsys):
    """A cell inserted in the English (and one removed) keeps each Chinese block after the cell it followed."""
    new_cell = "```{code-cell} ipython3\n:tags: [remove-cell]\n\nimport os\n```\n\nA new English paragraph.\n\n"
    english = TOY.replace("```{code-cell} ipython3\nx = 6", new_cell + "```{code-cell} ipython3\nx = 6")
    book.write_text(english, encoding="utf-8")
    z = zh.zh_path(book)
    assert zh.sync_code(z) == 1                                  # one prose block the Chinese does not have yet
    text = z.read_text(encoding="utf-8")
    assert zh.code_cells(zh.parse(text)) == zh.code_cells(zh.parse(english))
    assert text.index("关于 {term}") < text.index("import os") < text.index("A new English paragraph.") \
        < text.index("x = 6 * 7") < text.index("实验 1：加法")
    rc, out = _check(book, capsys)
    assert rc == 1 and "section 1 is stale" in out and "section 2" not in out
    # the English drops the first lab cell again: its Chinese prose joins the block before
    book.write_text(TOY, encoding="utf-8")
    zh.sync_code(z)
    assert zh.code_cells(zh.parse(z.read_text(encoding="utf-8"))) == zh.code_cells(zh.parse(TOY))
    assert "实验 1：加法" in z.read_text(encoding="utf-8")


def test_check_fails_when_a_heading_is_added_or_a_sync_line_lost(book, capsys):
    z = zh.zh_path(book)
    good = z.read_text(encoding="utf-8")
    z.write_text(good.replace("## 要点回顾", "## 多出来的一节\n\n## 要点回顾"), encoding="utf-8")
    assert "4 headings, the English has 3" in _check(book, capsys)[1]
    z.write_text(re.sub(r"(## 要点回顾)\n% sync: \w+", r"\1", good), encoding="utf-8")
    assert "section 3 (## 要点回顾) has no '% sync:' line" in _check(book, capsys)[1]


def test_generated_notebook_has_the_english_code_and_outputs(book, capsys):
    en = nbformat.read(book.with_suffix(".ipynb"), as_version=4)
    cn = nbformat.read(zh.zh_ipynb(book), as_version=4)
    assert [c.cell_type for c in cn.cells] == [c.cell_type for c in en.cells]
    for a, b in zip(en.cells, cn.cells):
        if a.cell_type == "code":
            assert (a.source, a.outputs, a.execution_count) == (b.source, b.outputs, b.execution_count)
            assert set(b.metadata["tags"]) == set(a.metadata.get("tags", [])) | {"nbval-skip"}
    assert "一个玩具章节" in cn.cells[0].source and "A toy chapter" not in cn.cells[0].source
    # outputs re-stored in English (a re-execution): the Chinese notebook is stale until regenerated
    nb = json.loads(book.with_suffix(".ipynb").read_text(encoding="utf-8"))
    nb["cells"][1]["outputs"][0]["text"] = ["43\n"]
    book.with_suffix(".ipynb").write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    rc, out = _check(book, capsys)
    assert rc == 1 and "toy.zh.ipynb is missing or stale" in out and "python scripts/zh.py notebooks" in out


def test_untranslated_pages_are_listed_not_failed(book, capsys):
    other = book.parent.parent / "02-more" / "more.md"
    other.parent.mkdir()
    other.write_text(TOY.replace("ch01", "ch02"), encoding="utf-8")
    assert zh.main(["check", str(book), str(other)]) == 0
    zh.main(["todo", str(book), str(other)])
    assert capsys.readouterr().out.strip().endswith("chapters/02-more/more.zh.md: not translated yet")
    assert zh.main(["check", "--require-all", str(book), str(other)]) == 1


# ---- the book's own Chinese pages ----

ZH_PAGES = sorted(p for p in [*ROOT.glob("*.zh.md"), *ROOT.glob("book/*.zh.md"), *ROOT.glob("chapters/*/*.zh.md")]
                  if p.name != "glossary.zh.md")


def test_the_pilot_is_translated_and_in_sync():
    assert (ROOT / "chapters/01-overview/overview.zh.md").exists() and (ROOT / "book/how-to-run.zh.md").exists()
    problems = [p for page in ZH_PAGES for p in zh.problems(zh.en_path(page))]
    assert not problems, problems


@pytest.mark.parametrize("page", [p for p in ZH_PAGES if zh.en_path(p).with_suffix(".ipynb").exists()],
                         ids=lambda p: p.parent.name)
def test_book_chinese_notebook_has_the_english_code_and_outputs(page):
    en = nbformat.read(zh.en_path(page).with_suffix(".ipynb"), as_version=4)
    cn = nbformat.read(zh.zh_ipynb(zh.en_path(page)), as_version=4)
    pairs = [(a, b) for a, b in zip(en.cells, cn.cells) if a.cell_type == "code"]
    assert len(cn.cells) == len(en.cells) and pairs
    assert all(a.source == b.source and a.outputs == b.outputs for a, b in pairs)
    prose = "".join(c.source for c in cn.cells if c.cell_type == "markdown")
    assert len(zhlang.CJK.findall(prose)) > 0.2 * len(prose), "the markdown cells are not in Chinese"


def test_notebooks_py_never_lists_or_executes_the_chinese_notebooks():
    assert not [p for p in notebooks.toc_notebooks() if ".zh." in p.name]
    assert not [p for p in notebooks.resolve(["chapters/01-overview"]) if ".zh." in p.name]


@pytest.mark.parametrize("page", ZH_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_translated_pages_write_glossary_terms_in_their_glossary_form(page):
    terms = glossary.collect()
    en = zh.en_path(page).read_text(encoding="utf-8")
    problems = glossary.zh_term_problems(page.read_text(encoding="utf-8"), en, terms)
    assert not problems, f"{page.relative_to(ROOT)}: {problems}"


def test_the_glossary_check_catches_wrong_forms():
    terms = glossary.collect()
    en = "Uses {term}`NVLink` and {term}`data parallelism`."
    good = "用 {term}`NVLink 高速互连 <NVLink>` 和 {term}`数据并行（data parallelism） <data parallelism>`。"
    assert glossary.zh_term_problems(good, en, terms) == []
    wrong_text = good.replace("数据并行（data", "资料并行（data")
    assert any("write the glossary's form '数据并行'" in p for p in glossary.zh_term_problems(wrong_text, en, terms))
    assert any("'资料并行' is not this edition's form" in p
               for p in glossary.zh_term_problems(good + "资料并行很常见。", en, terms))
    no_english = good.replace("数据并行（data parallelism）", "数据并行")
    assert any("first use: add the English" in p for p in glossary.zh_term_problems(no_english, en, terms))
    dropped = good.replace("{term}`NVLink 高速互连 <NVLink>`", "NVLink 高速互连")
    assert any("links {term}`NVLink`" in p for p in glossary.zh_term_problems(dropped, en, terms))
    assert glossary.required_parts("流式多处理器（SM）") == ["流式多处理器"]          # an acronym may be left out
    assert glossary.required_parts("计算网络（参数面网络）") == ["计算网络", "参数面网络"]


def test_chinese_glossary_page_has_the_english_sections_in_order():
    terms = glossary.collect()
    en, cn = glossary.render(terms), glossary.render_zh(terms)
    heads = [re.findall(r"^#{1,6} .*$", t, re.M) for t in (en, cn)]
    assert heads[0][1:] == heads[1][1:] and heads[1][0].startswith("# 术语表")
    assert (ROOT / "book" / "glossary.zh.md").read_text(encoding="utf-8") == cn, "run python scripts/glossary.py"


def test_chinese_toc_lists_translated_pages_under_chinese_captions():
    toc = zh.zh_toc()
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert toc["root"] == "index.zh"
    assert "chapters/01-overview/overview.zh.ipynb" in files and "book/how-to-run.zh" in files
    assert all((ROOT / zh.entry_source(f.replace(".zh", ""))).exists() for f in files)
    assert toc["parts"][0]["caption"] == "第一部分 · 基础 (1–5)" and toc["parts"][-1]["caption"] == "附录"


def test_language_switch_targets(tmp_path):
    (tmp_path / "chapters" / "01-a").mkdir(parents=True)
    (tmp_path / "chapters" / "01-a" / "a.zh.md").write_text("x")
    en = SimpleNamespace(srcdir=str(tmp_path), config=SimpleNamespace(language="en", root_doc="index"))
    cn = SimpleNamespace(srcdir=str(tmp_path), config=SimpleNamespace(language="zh_CN", root_doc="index.zh"))
    assert zhlang.other_edition(en, "chapters/01-a/a") == ("../../zh/chapters/01-a/a.zh.html", True)
    assert zhlang.other_edition(en, "chapters/02-b/b") == ("../../zh/index.zh.html", False)   # not translated
    assert zhlang.other_edition(cn, "chapters/01-a/a.zh") == ("../../../chapters/01-a/a.html", True)
    assert zhlang.other_edition(cn, "index.zh") == ("../index.html", True)
    assert zhlang.other_edition(en, "search") == ("zh/search.html", True)
    assert zhlang.english_title(ROOT / "chapters/07-parallelism/parallelism.md").startswith("7. 分布式训练策略 · ")
    assert (ROOT / "assets" / "js" / "book-lang.js").read_text().count("book-sec-") >= 2


def test_make_check_runs_the_sync_check_and_make_book_builds_both():
    make = (ROOT / "Makefile").read_text()
    check = make[make.index("\ncheck:"):make.index("\nglossary:")]
    book_target = make[make.index("\nbook:"):make.index("\nbook-zh:")]
    assert "scripts/zh.py check" in check and "scripts/zh.py build" in book_target
    assert "jupyter-book build . -W -n" in book_target


def test_planted_english_edit_in_the_pilot_fails_the_check(tmp_path, monkeypatch, capsys):
    """The acceptance demonstration on the real chapter: one English sentence changed, the check names the section."""
    monkeypatch.setattr(zh, "ROOT", tmp_path)
    src, dst = ROOT / "chapters" / "01-overview", tmp_path / "chapters" / "01-overview"
    dst.mkdir(parents=True)
    for name in ("overview.md", "overview.zh.md", "overview.ipynb", "overview.zh.ipynb"):
        shutil.copyfile(src / name, dst / name)
    en = dst / "overview.md"
    assert zh.main(["check", str(en)]) == 0
    text = en.read_text(encoding="utf-8")
    en.write_text(text.replace("A cluster is more than GPU servers.", "A cluster is much more than GPU servers."),
                  encoding="utf-8")
    capsys.readouterr()
    assert zh.main(["check", str(en)]) == 1
    assert re.search(r"overview\.zh\.md: section \d+ is stale: the English '## The anatomy of a GPU cluster' changed",
                     capsys.readouterr().out)
