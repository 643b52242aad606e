"""Optional packages: a lab that needs one says so in one line where it is absent, instead of failing (issue 35).

The book pins every package in ``requirements.txt``; a reader's GPU machine with its own torch often has few of
them. ``missing(module, what)`` is False where ``module`` can be imported; where it cannot, it prints what is skipped
and how to install it, and returns True, so a cell reads ``if not optional.missing(...):`` and the rest of the
chapter runs. The book's pages show the stored run, in which the package was there.

    python scripts/notebooks.py run-fresh --out /tmp/f --without kubernetes_validate chapters/05-virtualisation
"""
from __future__ import annotations

import importlib.util


def missing(module: str, what: str) -> bool:
    """True, after one printed line naming ``what`` is skipped and the install, where ``module`` is absent."""
    if importlib.util.find_spec(module) is not None:
        return False
    dist = module.replace("_", "-")
    print(f"{dist} is not installed on this machine, so {what} is skipped here (pip install -r requirements.txt "
          f"installs it; the book's page shows the stored run).")
    return True
