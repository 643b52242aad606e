"""The portable numeric mode: the settings every stored notebook output is written and checked under (issue 35).

    python scripts/numeric_env.py COMMAND [ARG ...]    # run COMMAND with these settings (what `make nbval` does)
    python scripts/numeric_env.py --other-kernels [--hashseed N] COMMAND ...   # the proof run (below)
    python scripts/numeric_env.py --show               # print them as shell assignments
    python scripts/numeric_env.py --kernel-check       # the notebooks `make nbval` checks under other kernels
    python scripts/numeric_env.py --portable-check     # … and the others, checked under PORTABLE

The last bits of a float depend on which kernel computed it, and the libraries choose kernels by the CPU: numpy's
exp/log/pow/sum have AVX-512 and AVX2 versions, torch's ATen kernels likewise (``ATEN_CPU_CAPABILITY``), oneDNN
JIT-compiles for the widest ISA it finds, and a multi-threaded reduction adds in an order set by the thread count.
A notebook stored on a CPU with AVX-512 then differs, in its last digits, from the same notebook run on one without.
Here every library is held at the AVX2 level (x86-64-v3, which every x86-64 CPU of the last ten years has), at one
thread, with the hash seed fixed. ``scripts/notebooks.py`` (``make notebooks``, ``run-fresh``) applies them to its
kernels and ``make nbval`` runs pytest under them: the stored outputs and the check are made the same way.

Not fixed, deliberately: BLAS. torch's MKL pins its AVX2 code branch on Intel CPUs only (``MKL_CBWR=AVX2``; on
other vendors Intel documents that MKL falls back to its automatic branch), and OpenBLAS's ``OPENBLAS_CORETYPE`` is
left as the machine sets it (some machines set it because older OpenBLAS builds compute wrong results there).
So an output that still depends on BLAS kernels is compared at a stated tolerance or glued rounded.

The proof: the float-sensitive notebooks (``KERNEL_CHECK``: training runs, GEMMs, fp8 casts, the figures whose data
come from exp/log/pow) are stored under ``PORTABLE`` but checked by `make nbval` (``scripts/nbval_modes.py``) under
``OTHER_KERNELS`` — torch's ``default`` capability, MKL's SSE2 branch, numpy without AVX2, oneDNN at SSE4.1, numpy's
OpenBLAS on its generic SSE3 kernels — and hash seed 1: every compared output of theirs must come out the same with
other kernels and another set order, or nbval fails naming the cell. The other notebooks are checked under
``PORTABLE``.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PORTABLE: dict[str, str] = {
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",   # numpy 2.4's AVX-512 dispatch targets off
    "ATEN_CPU_CAPABILITY": "avx2",                                 # torch's vectorised kernels: the AVX2 build
    "ONEDNN_MAX_CPU_ISA": "AVX2",                                  # oneDNN (torch's mkldnn) JIT: AVX2 at most
    "MKL_CBWR": "AVX2",                                            # MKL: AVX2 branch (Intel CPUs; see above)
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",   # one reduction order
    "PYTHONHASHSEED": "0",                                         # set iteration order
    "BOOK_QUIET": "1",                                             # progress bars stay out of outputs
}

# Other kernels, for the proof that the compared outputs do not depend on them (test_portable_outputs.py).
OTHER_KERNELS: dict[str, str] = {**PORTABLE, "ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE",
                                 "ONEDNN_MAX_CPU_ISA": "SSE41", "OPENBLAS_CORETYPE": "Prescott",
                                 "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"}


# Notebooks (folders) whose outputs come from float kernels: nbval checks these under OTHER_KERNELS, hash seed 1.
KERNEL_CHECK = ("chapters/02-hardware", "chapters/05-virtualisation", "chapters/09-memory",
                "chapters/10-compute-efficiency", "chapters/13-scheduling", "chapters/14-fault-tolerance",
                "chapters/16-power-cooling", "chapters/17-federated", "chapters/18-llm-training",
                "chapters/21-cost", "chapters/22-mlops", "chapters/26-training-stability", "book/what-to-expect")


def split_notebooks() -> tuple[list[str], list[str]]:
    """The book's notebooks (``_toc.yml`` order) as (checked under PORTABLE, checked under OTHER_KERNELS)."""
    from scripts import notebooks                      # it imports this module: import here, not at the top
    paths = [notebooks.rel(p) for p in notebooks.toc_notebooks()]
    def under(p: str, k: str) -> bool:               # a chapter folder's notebook, or book/NAME.ipynb
        return p == k or p.startswith(k + "/") or p.startswith(k + ".")
    kernel = [p for p in paths if any(under(p, k) for k in KERNEL_CHECK)]
    missing = [k for k in KERNEL_CHECK if not any(under(p, k) for p in paths)]
    if missing:
        raise SystemExit(f"numeric_env: KERNEL_CHECK names {missing}, which _toc.yml does not list: fix KERNEL_CHECK")
    return [p for p in paths if p not in kernel], kernel


def environ(base: dict[str, str] | None = None, mode: dict[str, str] = PORTABLE) -> dict[str, str]:
    """``base`` (default: this process's environment) with the mode's settings on top."""
    return {**(os.environ if base is None else base), **mode}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if argv[0] == "--show":
        print("\n".join(f"{k}={v!r}" for k, v in PORTABLE.items()))
        return 0
    if argv[0] in ("--kernel-check", "--portable-check"):
        print(" ".join(split_notebooks()[argv[0] == "--kernel-check"]))
        return 0
    mode = dict(PORTABLE)
    while argv and argv[0] in ("--other-kernels", "--hashseed"):
        if argv[0] == "--other-kernels":
            mode, argv = dict(OTHER_KERNELS), argv[1:]
        elif len(argv) < 2 or not argv[1].isascii() or not argv[1].isdigit():
            print("numeric_env: --hashseed takes a number, e.g. --hashseed 1", file=sys.stderr)
            return 2
        else:
            mode["PYTHONHASHSEED"], argv = argv[1], argv[2:]
    if not argv:
        print("numeric_env: no command to run", file=sys.stderr)
        return 2
    try:
        os.execvpe(argv[0], argv, environ(mode=mode))
    except OSError as e:
        print(f"numeric_env: cannot run {argv[0]!r}: {e.strerror}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
