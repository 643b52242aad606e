"""The package's layering, read from the source with ast (no imports executed).

Rules, from the bottom up: ``core`` imports no other part of the package; ``formulas`` (the shared published
formulas) imports only ``core``; a wing imports only ``core``, ``formulas`` and itself; ``figures`` is the top layer,
may import anything, and nothing imports it; no import cycles between modules anywhere (a module importing itself
by name, as the spawn workers do, is not a cycle). Every module with a ``main`` is a tool of ``python -m helpers``,
and every module is imported by at least one test.
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
FLOOR = "formulas"          # between core and the wings


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
                bad.append(f"{files[mod]}:{line} imports {dep}: core imports no wing (nor {FLOOR}/)")
            elif dst == TOP:
                bad.append(f"{files[mod]}:{line} imports {dep}: no wing imports {TOP}/ (it is the top layer)")
            elif src == FLOOR and dst != "core":
                bad.append(f"{files[mod]}:{line} imports {dep}: {FLOOR}/ imports only core/")
            elif src != TOP and dst not in ("core", FLOOR):
                bad.append(f"{files[mod]}:{line} imports {dep}: a wing imports only core/, {FLOOR}/ and itself")
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
    assert bad == ["helpers/core/a.py:3 imports helpers.network.x: core imports no wing (nor formulas/)",
                   "helpers/network/x.py:5 imports helpers.storage.y: a wing imports only core/, formulas/ and itself",
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
        "helpers/storage/bad.py:2 imports helpers.training.models.tiny: "
        "a wing imports only core/, formulas/ and itself"]


def test_the_checker_knows_the_formulas_floor():
    """formulas/ sits between core/ and the wings: it imports only core/, every wing and figures/ may import it,
    core/ may not; a formulas module importing a wing (or figures) is reported with file and line."""
    g = {"helpers.formulas.f": [(2, "helpers.core.units"), (3, "helpers.formulas.g"), (4, "helpers.network.x"),
                                (5, "helpers.figures.z")],
         "helpers.formulas.g": [(1, "helpers.core.units")],
         "helpers.network.x": [(6, "helpers.formulas.f"), (7, "helpers.core.units")],
         "helpers.figures.z": [(8, "helpers.formulas.f")],
         "helpers.core.a": [(9, "helpers.formulas.g")]}
    files = {m: m.replace(".", "/") + ".py" for m in g}
    assert violations(g, files) == [
        "helpers/formulas/f.py:4 imports helpers.network.x: formulas/ imports only core/",
        "helpers/formulas/f.py:5 imports helpers.figures.z: no wing imports figures/ (it is the top layer)",
        "helpers/core/a.py:9 imports helpers.formulas.g: core imports no wing (nor formulas/)"]
    assert violations({"helpers.network.x": [(6, "helpers.formulas.f")]}, files) == []


def test_the_checker_reads_a_planted_formulas_file(tmp_path):
    """A real file under formulas/ that imports a wing, and a wing importing another wing next to a clean import of
    formulas/: both breaches are reported with their path and line, the clean import is not."""
    f = tmp_path / "helpers" / "formulas" / "bad.py"
    f.parent.mkdir(parents=True)
    f.write_text('"""x"""\nfrom helpers.core import units\nfrom helpers.training.calc import perfmodel\n')
    w = tmp_path / "helpers" / "network" / "bad.py"
    w.parent.mkdir(parents=True)
    w.write_text('"""x"""\nfrom helpers.formulas import comm\nimport helpers.storage.fio\n')
    known = {"helpers.core.units", "helpers.training.calc.perfmodel", "helpers.formulas.comm", "helpers.storage.fio"}
    graph = {"helpers.formulas.bad": imports_of(f, known), "helpers.network.bad": imports_of(w, known)}
    assert graph["helpers.formulas.bad"] == [(2, "helpers.core.units"), (3, "helpers.training.calc.perfmodel")]
    files = {"helpers.formulas.bad": "helpers/formulas/bad.py", "helpers.network.bad": "helpers/network/bad.py"}
    assert violations(graph, files) == [
        "helpers/formulas/bad.py:3 imports helpers.training.calc.perfmodel: formulas/ imports only core/",
        "helpers/network/bad.py:3 imports helpers.storage.fio: a wing imports only core/, formulas/ and itself"]


def modules_named_by_tests(tests_dir: Path, known: set[str]) -> set[str]:
    """The helpers modules that files under ``tests_dir`` import (at any depth, ``import`` or ``from``) or name in a
    string (``mock.patch("helpers.x.y.f")``, ``importlib.import_module("helpers.x.y")``)."""
    import re

    seen: set[str] = set()
    for p in tests_dir.rglob("*.py"):
        text = p.read_text(encoding="utf-8")
        seen |= {m for _, m in imports_of(p, known)}
        for name in re.findall(r"[\"'](helpers(?:\.\w+)+)", text):
            while name and name not in known:
                name = name.rpartition(".")[0]
            seen.add(name)
    return seen


def test_every_module_is_imported_by_a_test():
    """Each module of the package (not the ``__init__`` files) is imported by at least one file under tests/."""
    mods = {m for m, p in helper_modules().items() if p.name not in ("__init__.py", "__main__.py")}
    missing = sorted(mods - modules_named_by_tests(ROOT / "tests", set(helper_modules())))
    assert missing == [], f"no test imports {missing}: add tests/<wing>/test_<module>.py with one real behaviour"


def test_the_test_census_reads_strings_and_imports(tmp_path):
    t = tmp_path / "test_x.py"
    t.write_text('from helpers.formulas import comm\nimport helpers.core.units\n'
                 'PATCH = "helpers.network.routing.max_min_rates"\n')
    known = {"helpers.formulas.comm", "helpers.core.units", "helpers.network.routing", "helpers.storage.fio"}
    assert modules_named_by_tests(tmp_path, known) == {"helpers.formulas.comm", "helpers.core.units",
                                               "helpers.network.routing"}


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
