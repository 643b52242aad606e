"""The package's layering, read from the source with ast (no imports executed).

Rules: a wing imports only ``core`` and itself; ``figures`` may import any wing and no wing imports ``figures``;
``core`` imports no wing; no import cycles between modules anywhere (a module importing itself by name, as the
spawn workers do, is not a cycle). Every module with a ``main`` is a tool of ``python -m helpers``.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "helpers"
TOP = "figures"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def helper_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> list[tuple[int, str]]:
    """(line, module) for every ``helpers`` module this file imports, at any depth in the file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                out.append((node.lineno, f"<relative import level {node.level}: use absolute helpers.* imports>"))
                continue
            base = node.module or ""
            if base != "helpers" and not base.startswith("helpers."):
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((node.lineno, sub if sub in known else base))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "helpers"]
    return out


def wing_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] not in ("__main__",)) else None


def violations(graph: dict[str, list[tuple[int, str]]], files: dict[str, str]) -> list[str]:
    """Layering breaches as 'file:line imports X: rule' (``graph``: module -> [(line, imported module)])."""
    bad = []
    for mod, deps in graph.items():
        src = wing_of(mod)
        if src is None:                          # helpers/__init__, helpers/__main__: the entry point
            continue
        for line, dep in deps:
            if dep.startswith("<"):
                bad.append(f"{files[mod]}:{line} {dep}")
                continue
            dst = wing_of(dep)
            if dst is None or dst == src:
                continue
            if src == "core":
                bad.append(f"{files[mod]}:{line} imports {dep}: core imports no wing")
            elif dst == TOP:
                bad.append(f"{files[mod]}:{line} imports {dep}: no wing imports {TOP}/ (it is the top layer)")
            elif src != TOP and dst != "core":
                bad.append(f"{files[mod]}:{line} imports {dep}: a wing imports only core/ and itself")
    return bad


def cycles(graph: dict[str, list[tuple[int, str]]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan's algorithm)."""
    edges = {m: sorted({d for _, d in deps if d in graph and d != m}) for m, deps in graph.items()}
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def real_graph():
    mods = helper_modules()
    known = set(mods)
    graph = {m: imports_of(p, known) for m, p in mods.items()}
    files = {m: p.relative_to(ROOT).as_posix() for m, p in mods.items()}
    return graph, files


def test_wings_respect_the_layers():
    graph, files = real_graph()
    assert violations(graph, files) == []


def test_no_import_cycles():
    graph, _ = real_graph()
    assert cycles(graph) == []


def test_every_wing_has_a_docstring():
    for init in sorted(PKG.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and "hapter" in doc, f"{init}: say what the wing is and which chapters use it"


def test_the_checker_catches_a_breach():
    """A synthetic graph: each rule fires, names file and line; a clean graph passes."""
    g = {"helpers.core.a": [(3, "helpers.network.x")],
         "helpers.network.x": [(5, "helpers.storage.y"), (6, "helpers.core.a")],
         "helpers.storage.y": [(7, "helpers.figures.z")],
         "helpers.figures.z": [(9, "helpers.network.x"), (10, "helpers.storage.y")]}
    files = {m: m.replace(".", "/") + ".py" for m in g}
    bad = violations(g, files)
    assert bad == ["helpers/core/a.py:3 imports helpers.network.x: core imports no wing",
                   "helpers/network/x.py:5 imports helpers.storage.y: a wing imports only core/ and itself",
                   "helpers/storage/y.py:7 imports helpers.figures.z: no wing imports figures/ (it is the top layer)"]
    assert cycles(g) == [sorted(g)]                    # a <-> x, and x -> y -> z -> x: one knot of four
    assert cycles({"helpers.core.a": [(1, "helpers.core.a")]}) == []   # importing itself (spawn workers) is fine
    assert violations({"helpers.figures.z": [(1, "helpers.network.x")]}, files) == []


def test_the_checker_reads_a_real_file(tmp_path):
    """A planted file importing across wings is reported with its path and line."""
    f = tmp_path / "helpers" / "storage" / "bad.py"
    f.parent.mkdir(parents=True)
    f.write_text('"""x"""\nfrom helpers.training.models import tiny\n')
    known = {"helpers.training.models.tiny"}
    deps = imports_of(f, known)
    assert deps == [(2, "helpers.training.models.tiny")]
    assert violations({"helpers.storage.bad": deps}, {"helpers.storage.bad": "helpers/storage/bad.py"}) == [
        "helpers/storage/bad.py:2 imports helpers.training.models.tiny: a wing imports only core/ and itself"]


def test_every_main_is_a_tool():
    from helpers.__main__ import TOOLS, module_file

    with_main = {m for m, p in helper_modules().items() if wing_of(m)
                 and any(isinstance(n, ast.FunctionDef) and n.name == "main"
                         for n in ast.parse(p.read_text()).body)}
    assert with_main == set(TOOLS.values()), "register new CLIs in helpers/__main__.py TOOLS"
    assert all(module_file(m).exists() for m in TOOLS.values())


def test_python_m_helpers_lists_and_runs():
    out = subprocess.run([sys.executable, "-m", "helpers"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0 and "device" in out.stdout and "collectives" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "helpers", "nosuchtool"], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and "no tool 'nosuchtool'" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("tool", ["device", "ncclenv", "memory"])
def test_tools_run_through_the_entry_point(tool):
    out = subprocess.run([sys.executable, "-m", "helpers", tool, "--help"], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0 and f"python -m helpers {tool}" in out.stdout
