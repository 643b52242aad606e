"""The portable numeric mode (issue 35): one definition, used by the executor and by `make nbval`, and a split of the
notebooks that covers every one of them once."""
import subprocess
import sys
from pathlib import Path

from scripts import notebooks, numeric_env

ROOT = Path(__file__).resolve().parents[2]


def test_executor_runs_kernels_in_the_portable_mode():
    assert numeric_env.PORTABLE.items() <= notebooks.KERNEL_ENV.items()
    assert numeric_env.PORTABLE["ATEN_CPU_CAPABILITY"] == "avx2" and numeric_env.PORTABLE["OMP_NUM_THREADS"] == "1"


def test_other_kernels_differ_in_every_kernel_choice_and_nothing_else():
    other = numeric_env.OTHER_KERNELS
    changed = {k for k in other if numeric_env.PORTABLE.get(k) != other[k]}
    assert changed == {"ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "NPY_DISABLE_CPU_FEATURES",
                       "OPENBLAS_CORETYPE"}


def test_split_covers_every_notebook_once():
    portable, kernel = numeric_env.split_notebooks()
    every = [notebooks.rel(p) for p in notebooks.toc_notebooks()]
    assert sorted(portable + kernel) == sorted(every) and not set(portable) & set(kernel)
    assert len(kernel) == len(numeric_env.KERNEL_CHECK)       # one notebook per listed chapter


def test_nbval_starts_each_kernel_in_its_mode():
    mk = (ROOT / "Makefile").read_text()
    assert "-p scripts.nbval_modes" in mk and "$(NUMERIC) $(PY) -m pytest" in mk
    from scripts import nbval_modes
    nbval_modes.pytest_configure(None)
    portable, kernel = numeric_env.split_notebooks()
    assert nbval_modes.mode_for(portable[0]) == numeric_env.PORTABLE
    other = nbval_modes.mode_for(kernel[0])
    assert other["ATEN_CPU_CAPABILITY"] == "default" and other["PYTHONHASHSEED"] == "1"


def run(*args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "numeric_env.py"), *args],
                          capture_output=True, text=True, timeout=60)


def test_cli_sets_the_mode_and_refuses_bad_input():
    out = run("--other-kernels", "--hashseed", "7", sys.executable, "-c",
              "import os; print(os.environ['ATEN_CPU_CAPABILITY'], os.environ['PYTHONHASHSEED'])")
    assert out.returncode == 0 and out.stdout.split() == ["default", "7"]
    for bad in (["--hashseed", "x", "true"], ["--hashseed", "٣", "true"], ["--other-kernels"], ["/no/such/program"]):
        r = run(*bad)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, bad
