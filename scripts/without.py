"""Run notebooks as on a machine that lacks some Python packages: ``run-fresh --without PKG,PKG`` (issue 35).

A reader's GPU machine often has its own torch and few of the book's other pins (DeepSpeed, kubernetes-validate,
prometheus-client, lz4, ansible, …). A lab that needs one must say so in a line and carry on, not fail. To check
that here, where everything is installed, ``install(names)`` writes a ``sitecustomize.py`` into a temporary folder
and puts it first on ``PYTHONPATH``: in every kernel started afterwards, importing a named package raises
``ModuleNotFoundError`` and ``importlib.util.find_spec`` returns None — exactly what an absent package does.

    python scripts/notebooks.py run-fresh --out /tmp/fresh --without kubernetes_validate,lz4 chapters/05-virtualisation
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

SITECUSTOMIZE = '''import importlib.util, sys
BLOCKED = {names!r}
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _Absent())
_find_spec = importlib.util.find_spec
importlib.util.find_spec = lambda name, package=None: (
    None if name.split(".")[0] in BLOCKED else _find_spec(name, package))
'''


def parse(text: str) -> list[str]:
    """Top-level import names from ``a,b,c``; ValueError naming a bad one."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)]
    if bad or not names:
        raise ValueError(f"--without {text!r}: give top-level import names, comma-separated "
                         "(e.g. kubernetes_validate,prometheus_client)")
    return names


def install(names: list[str]) -> Path:
    """Write the blocking ``sitecustomize.py`` and put its folder first on ``PYTHONPATH`` (for kernels started
    after this call); returns the folder, which the caller removes."""
    folder = Path(tempfile.mkdtemp(prefix="book-without-"))
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE.format(names=sorted(set(names))))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])
    return folder
