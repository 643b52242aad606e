"""The glossary builder: one translation per English term, an A–Z jump list and a 中文 → English index."""
import importlib.util
from pathlib import Path

import pytest
import yaml

SPEC = importlib.util.spec_from_file_location("glossary", Path(__file__).parents[2] / "scripts" / "glossary.py")
glossary = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(glossary)


def _tree(tmp_path, files):
    (tmp_path / "book").mkdir()
    for rel, entries in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(yaml.safe_dump(entries, allow_unicode=True))
    return tmp_path


def test_two_translations_of_one_term_fail_naming_both_files(tmp_path):
    root = _tree(tmp_path, {
        "chapters/01-a/glossary.yml": [{"term": "Roofline model", "zh": "Roofline 模型", "definition": "x"}],
        "chapters/28-b/glossary.yml": [{"term": "roofline  model", "zh": "屋顶线模型", "definition": "y"}]})
    with pytest.raises(glossary.GlossaryError) as e:
        glossary.collect(root)
    msg = str(e.value)
    assert "Roofline 模型" in msg and "屋顶线模型" in msg
    assert "chapters/01-a/glossary.yml" in msg and "chapters/28-b/glossary.yml" in msg


def test_same_translation_twice_merges_chapters(tmp_path):
    root = _tree(tmp_path, {
        "chapters/01-a/glossary.yml": [{"term": "NVLink", "zh": "NVLink 互连", "definition": "x"}],
        "chapters/02-b/glossary.yml": [{"term": "NVLink", "zh": "NVLink  互连", "definition": "y"},
                                       {"term": "3D parallelism", "zh": "三维并行", "definition": "z"}]})
    terms = glossary.collect(root)
    assert [t["term"] for t in terms] == ["3D parallelism", "NVLink"]
    assert terms[1]["chapters"] == ["01", "02"]
    page = glossary.render(terms)
    assert "{ref}`0–9 <glossary-num>` · {ref}`N <glossary-n>`" in page      # A–Z jump list
    assert "(glossary-n)=\n## N" in page and page.count(":::{glossary}") == 2
    assert "| 三维并行 | {term}`3D parallelism` |" in page                  # 中文 → English index


def test_missing_field_is_reported(tmp_path):
    root = _tree(tmp_path, {"chapters/01-a/glossary.yml": [{"term": "X", "definition": "x"}]})
    with pytest.raises(glossary.GlossaryError, match="missing \\['zh'\\]"):
        glossary.collect(root)


def test_book_glossary_has_no_conflicts_and_gds_is_direct_storage():
    terms = {t["term"]: t for t in glossary.collect()}
    assert terms["GPUDirect Storage"]["zh"].startswith("GPU 直接存储")
    assert not any("直通" in t["zh"] for t in terms.values() if "GPUDirect" in t["term"])
