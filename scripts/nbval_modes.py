"""pytest plugin for `make nbval` (``-p scripts.nbval_modes``): each notebook's kernel starts in its numeric mode.

nbval starts one kernel per notebook, with this process's environment, when the notebook's first cell is set up.
Just before that, this plugin sets the environment: ``numeric_env.PORTABLE`` (the mode the stored outputs were
written in) for most notebooks, and ``numeric_env.OTHER_KERNELS`` with ``PYTHONHASHSEED=1`` for the float-sensitive
ones (``numeric_env.KERNEL_CHECK``) — the proof that their compared outputs depend neither on the CPU's kernels nor
on set order. One pytest run checks both groups, so xdist balances all notebooks over the cores at once.
"""
from __future__ import annotations

import os

import pytest

from scripts import notebooks, numeric_env

_ORIGINAL = dict(os.environ)
_KERNEL_CHECK: set[str] = set()


def mode_for(path: str) -> dict[str, str]:
    """The environment a notebook's kernel starts with (``path`` relative to the repository)."""
    if path in _KERNEL_CHECK:
        return {**numeric_env.OTHER_KERNELS, "PYTHONHASHSEED": "1"}
    return dict(numeric_env.PORTABLE)


def pytest_configure(config):
    _KERNEL_CHECK.update(numeric_env.split_notebooks()[1])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    path = notebooks.rel(notebooks.Path(str(item.fspath)).resolve())
    if not path.endswith(".ipynb"):
        return
    mode = mode_for(path)
    for key in set(numeric_env.OTHER_KERNELS) | set(numeric_env.PORTABLE):   # what another notebook may have set
        if key not in mode:
            if key in _ORIGINAL:
                os.environ[key] = _ORIGINAL[key]
            else:
                os.environ.pop(key, None)
    os.environ.update(mode)
