"""How much of the book nbval checks (issue 24): the share of code cells with a stored output whose output nbval compares.

A cell escapes comparison by a tag (``nbval-ignore-output``, ``nbval-skip``, ``raises-exception``) or by nbval's
comment markers (``# NBVAL_IGNORE_OUTPUT``, ``# NBVAL_SKIP``, ``# NBVAL_RAISES_EXCEPTION``). Every notebook of
_toc.yml counts, every code cell with at least one output counts; nothing is left out. The goal is 75 %: a cell
whose output depends on the machine is tagged, and one that only shows stored records or invariants is compared.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
GOAL = 0.75
TAGS = {"nbval-ignore-output", "nbval-skip", "raises-exception"}
MARKERS = ("# NBVAL_IGNORE_OUTPUT", "# NBVAL_SKIP", "# NBVAL_RAISES_EXCEPTION")


_spec = importlib.util.spec_from_file_location("notebooks_script", ROOT / "scripts" / "notebooks.py")
_nb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_nb)
toc_notebooks = _nb.toc_notebooks               # the notebooks of _toc.yml, as the pairing check and nbval list them


def compared(cell: dict) -> bool:
    src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return not (TAGS & set(cell.get("metadata", {}).get("tags", [])) or any(m in src for m in MARKERS))


def coverage() -> dict[str, tuple[int, int]]:
    """{notebook: (compared cells, code cells with output)} for every notebook of the book."""
    out = {}
    for nb in toc_notebooks():
        cells = [c for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
                 if c["cell_type"] == "code" and c.get("outputs")]
        out[nb.relative_to(ROOT).as_posix()] = (sum(compared(c) for c in cells), len(cells))
    return out


def test_the_counter_sees_tags_and_markers():
    cell = {"cell_type": "code", "source": "x = 1\n", "metadata": {}, "outputs": [{}]}
    assert compared(cell)
    assert not compared({**cell, "metadata": {"tags": ["hide-input", "nbval-ignore-output"]}})
    assert not compared({**cell, "source": ["# NBVAL_SKIP\n", "x = 1\n"]})


def test_every_notebook_of_the_toc_is_counted():
    nbs = toc_notebooks()
    assert len(nbs) >= 30 and all(nb.exists() for nb in nbs), [str(nb) for nb in nbs if not nb.exists()]


def test_nbval_compares_at_least_the_goal_share():
    cov = coverage()
    n_cmp, n_all = sum(c for c, _ in cov.values()), sum(t for _, t in cov.values())
    share = n_cmp / n_all
    worst = sorted(cov.items(), key=lambda kv: kv[1][0] / max(kv[1][1], 1))[:8]
    assert share >= GOAL, (f"nbval compares {n_cmp} of {n_all} code cells with output = {share:.1%} (goal {GOAL:.0%}); "
                           "compare a cell whose output is the same on every machine (stored records, invariants) "
                           "instead of tagging it nbval-ignore-output. Least compared: "
                           + ", ".join(f"{k} {c}/{t}" for k, (c, t) in worst))
