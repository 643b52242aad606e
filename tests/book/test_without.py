"""`run-fresh --without PKG`: a kernel started afterwards sees PKG as absent (import fails, find_spec is None)."""
import os
import shutil
import subprocess
import sys

import pytest

from scripts import without


def test_named_packages_are_absent_in_a_new_interpreter(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    folder = without.install(without.parse("yaml, psutil"))
    try:
        code = ("import importlib.util\nassert importlib.util.find_spec('yaml') is None\n"
                "assert importlib.util.find_spec('json') is not None\n"
                "try:\n    import psutil\nexcept ModuleNotFoundError as e:\n    print('absent', e.name)\n")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ)
        assert r.returncode == 0 and r.stdout.split() == ["absent", "psutil"], r.stderr
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize("bad", ["", " , ", "a b", "os.path", "٣x"])
def test_bad_names_are_refused(bad):
    with pytest.raises(ValueError, match="top-level import names"):
        without.parse(bad)
