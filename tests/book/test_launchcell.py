"""scripts/launchcell.py and binder/: a chapter runs where it is launched (issue 29, item 7).

The launch cell is executed here as it runs on Colab (a notebook opened alone: clone, install, move to the chapter),
on a JupyterHub (the repository pulled, nothing installed) and on the book's own machines (nothing at all); the
subprocesses are recorded, not run. binder/ is checked as far as a machine without Docker allows: its pins are
requirements.txt's, its Python is within the package's range, and postBuild runs (pip in dry-run mode, offline) and
writes the student notebooks Binder's button opens.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("launchcell", ROOT / "scripts" / "launchcell.py")
launchcell = importlib.util.module_from_spec(_spec)
sys.modules["launchcell"] = launchcell
_spec.loader.exec_module(launchcell)

URL, BRANCH = launchcell.repository()
FOLDER = "chapters/08-communication"


def test_every_notebook_starts_with_the_launch_cell_of_config_yml():
    problems = [p for md in launchcell.notebook_sources([]) for p in launchcell.problems(md, URL, BRANCH)]
    assert not problems, "\n".join(problems)


def test_the_repository_is_named_in_config_yml_only():
    """The URL lives in _config.yml; the launch cells are generated from it (checked above); binder/, the README and
    the scripts do not repeat it."""
    for path in [*ROOT.glob("binder/*"), ROOT / "README.md", *ROOT.glob("scripts/*.py"), *ROOT.glob("book/_ext/*.py")]:
        assert URL not in path.read_text(encoding="utf-8"), f"{path.relative_to(ROOT)} names {URL}"


def test_insert_is_idempotent_and_follows_the_configuration():
    text = "---\njupytext: {}\n---\n\n# Title\n\nIntro.\n\n```{code-cell} ipython3\nimport helpers\n```\n"
    once = launchcell.with_cell(text, FOLDER, URL, BRANCH)
    assert launchcell.with_cell(once, FOLDER, URL, BRANCH) == once
    assert once.index("launch-install") < once.index("import helpers") and once.index("# Title") < once.index(
        "launch-install")
    moved = launchcell.with_cell(once, FOLDER, "https://github.com/someone/fork", "dev")
    assert moved.count("launch-install") == 1 and "someone/fork" in moved and URL not in moved
    with pytest.raises(SystemExit, match="no code cell"):
        launchcell.with_cell("# Only prose\n", FOLDER, URL, BRANCH)


def test_a_stale_or_missing_cell_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(launchcell, "ROOT", tmp_path)
    md = tmp_path / "chapters" / "08-x" / "x.md"
    md.parent.mkdir(parents=True)
    md.write_text("---\njupytext: {}\n---\n# X\n\n```{code-cell} ipython3\nx = 1\n```\n")
    assert "no launch cell" in launchcell.problems(md, URL, BRANCH)[0]
    md.write_text(launchcell.with_cell(md.read_text(), "chapters/08-x", "https://github.com/a/b", "main"))
    assert "does not follow _config.yml" in launchcell.problems(md, URL, BRANCH)[0]
    md.write_text(launchcell.with_cell(md.read_text(), "chapters/08-x", URL, BRANCH))
    assert launchcell.problems(md, URL, BRANCH) == []


def _run_cell(monkeypatch, cwd: Path, helpers_installed: bool, clone_into=None):
    """Execute the launch cell of FOLDER in ``cwd``; returns the subprocess commands it ran (recorded, not run)."""
    import importlib.util as iu
    calls = []

    def fake_run(cmd, check=False, **kw):
        calls.append([str(c) for c in cmd])
        if cmd[:2] == ["git", "clone"] and clone_into is not None:
            clone_into(Path(cmd[-1]))
        return subprocess.CompletedProcess(cmd, 0)

    real_find_spec = iu.find_spec
    monkeypatch.setattr(iu, "find_spec", lambda name, *a: (real_find_spec(name, *a) if helpers_installed or
                                                           name != "helpers" else None))
    monkeypatch.setattr(subprocess, "run", fake_run)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(cwd)
    exec(compile(launchcell.cell_source(FOLDER, URL, BRANCH), "launch-cell", "exec"), {})
    return calls


def _fake_book(root: Path) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "launchcell.py").write_text("")
    (root / FOLDER).mkdir(parents=True)
    return root


def test_on_the_books_own_machines_the_cell_does_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))   # even where it looks hosted
    calls = _run_cell(monkeypatch, tmp_path, helpers_installed=True)
    assert calls == [] and Path.cwd() == tmp_path and capsys.readouterr() == ("", "")
    monkeypatch.delitem(sys.modules, "google.colab")
    for var in ("BINDER_REPO_URL", "JUPYTERHUB_API_URL"):
        monkeypatch.delenv(var, raising=False)
    calls = _run_cell(monkeypatch, tmp_path, helpers_installed=False)   # not hosted: nothing either
    assert calls == [] and Path.cwd() == tmp_path


def test_on_colab_the_cell_clones_the_configured_repository_and_installs(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "google.colab", type(sys)("google.colab"))
    content = tmp_path / "content"
    content.mkdir()
    calls = _run_cell(monkeypatch, content, helpers_installed=False, clone_into=_fake_book)
    book = content / URL.rsplit("/", 1)[-1]
    assert calls[0] == ["git", "clone", "-q", "--depth", "1", "--branch", BRANCH, URL, str(book)]
    assert calls[1] == [sys.executable, str(book / "scripts" / "launchcell.py"), "setup"]
    assert Path.cwd() == book / FOLDER and sys.path[0] == str(book)


def test_on_a_hub_the_cell_installs_from_the_pulled_repository(tmp_path, monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.setenv("JUPYTERHUB_API_URL", "http://hub:8081/hub/api")
    book = _fake_book(tmp_path / "book")
    calls = _run_cell(monkeypatch, book / FOLDER, helpers_installed=False)
    assert calls == [[sys.executable, str(book / "scripts" / "launchcell.py"), "setup"]]   # no clone
    assert Path.cwd() == book / FOLDER


def test_setup_installs_only_the_missing_runtime_packages_then_the_helpers(tmp_path):
    (tmp_path / "requirements.txt").write_text(
        "# pins\nnumpy==1.0  # installed here, kept\nnot-a-real-dist-xyz==1.0\npytest==9.2.0\nPyYAML==6.0.4\n")
    ran = []
    commands = launchcell.setup(tmp_path, run=lambda cmd, check: ran.append(cmd))
    assert ran == commands
    assert commands[0][-1:] == ["not-a-real-dist-xyz==1.0"]           # only what is missing; pytest is not runtime
    assert commands[-1][-4:] == ["-q", "--no-deps", "-e", str(tmp_path)]


# ---- binder/ ----

def _lines(path: Path) -> list[str]:
    return [ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines() if ln.split("#", 1)[0].strip()]


def test_binder_installs_the_book_pins_on_the_books_python():
    assert _lines(ROOT / "binder" / "requirements.txt") == ["-r ../requirements.txt"]
    version = re.fullmatch(r"python-(\d+)\.(\d+)", _lines(ROOT / "binder" / "runtime.txt")[0])
    assert version, "binder/runtime.txt must read python-X.Y"
    low = re.search(r'requires-python\s*=\s*">=(\d+)\.(\d+)"', (ROOT / "pyproject.toml").read_text())
    assert tuple(map(int, version.groups())) >= tuple(map(int, low.groups()))
    post = (ROOT / "binder" / "postBuild").read_text()
    assert os.access(ROOT / "binder" / "postBuild", os.X_OK)
    assert "scripts/launchcell.py setup" in post and "scripts/student.py --beside" in post


def test_binder_requirements_resolve_to_the_installed_pins_offline():
    """pip resolves binder/requirements.txt (through -r ../requirements.txt) with no index: every pin is satisfied
    by the book's environment, so Binder installs the versions CI tests."""
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-deps", "-q",
                        "-r", str(ROOT / "binder" / "requirements.txt")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


def test_postbuild_installs_the_helpers_and_writes_student_notebooks(tmp_path):
    """binder/postBuild in a copy of the repository, pip in dry-run mode with no index (offline)."""
    copy = tmp_path / "repo"
    for name in ("pyproject.toml", "requirements.txt", "_config.yml"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / name, copy / name)
    for name in ("binder", "scripts"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "helpers").mkdir()
    shutil.copyfile(ROOT / "helpers" / "__init__.py", copy / "helpers" / "__init__.py")
    for md in [*ROOT.glob("chapters/0[18]-*/*.md")]:
        (copy / md.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(md, copy / md.relative_to(ROOT))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PIP_DRY_RUN": "1", "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0"}
    r = subprocess.run(["bash", "binder/postBuild"], cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "book: helpers installed" in r.stdout
    student = copy / FOLDER / "communication.student.ipynb"
    assert student.exists()
    text = student.read_text()
    assert "launch-install" in text and '"solution"' not in text
