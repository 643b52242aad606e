"""The rule for figures: every chapter figure is a function in helpers/figures/; the wings compute, figures draw.

An ast scan (nothing imported) of every helpers module outside ``helpers/figures/`` and ``helpers/core/plotting.py``
(the shared renderer and theme) for what builds a plotly figure: ``go.Figure``, ``make_subplots``,
``plotting.figure``, ``px.…`` and any ``plotly`` import.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "helpers"
ALLOWED = {PKG / "core" / "plotting.py"}


def figure_builders(source: str) -> list[tuple[int, str]]:
    """(line, what) for every plotly-figure construction or plotly import in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            name = f"{node.value.id}.{node.attr}"
            if name in ("go.Figure", "plotting.figure", "plotting.go") or node.value.id == "px":
                found.append((node.lineno, name))
        elif isinstance(node, ast.Name) and node.id == "make_subplots":
            found.append((node.lineno, "make_subplots"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.split(".")[0] == "plotly"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "plotly":
            found.append((node.lineno, f"from {node.module} import …"))
    return sorted(found)


def test_the_scan_sees_each_way_of_building_a_figure():
    src = ("import plotly.express as px\nfrom plotly.subplots import make_subplots\nfrom helpers.core import plotting\n"
           "a = go.Figure()\nb = make_subplots(1, 2)\nc = plotting.figure('t')\nd = px.bar([1])\n")
    assert [w for _, w in figure_builders(src)] == ["import plotly.express", "from plotly.subplots import …",
                                                    "go.Figure", "make_subplots", "plotting.figure", "px.bar"]


def test_no_module_outside_figures_builds_a_figure():
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        if path.is_relative_to(PKG / "figures") or path in ALLOWED:
            continue
        bad += [f"{path.relative_to(ROOT)}:{line} {what}" for line, what in figure_builders(path.read_text("utf-8"))]
    assert not bad, ("figures are drawn only in helpers/figures/ (the wings compute, figures draw; CONTRIBUTING.md, "
                     "'helpers'): move these drawing paths into a helpers/figures/ module:\n  " + "\n  ".join(bad))
