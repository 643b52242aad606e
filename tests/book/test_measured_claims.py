"""Every claim about measured wall time that a chapter checks with ``helpers.core.claims.measured`` held in the
stored run (the one the prose quotes), in both editions."""
import json
from pathlib import Path

import pytest

from helpers.core import claims

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*/*.ipynb"))


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        t = o.get("text") or o.get("data", {}).get("text/plain") or ""
        out.append("".join(t) if isinstance(t, list) else t)
    return "\n".join(out)


def test_measured_prints_only_when_the_claim_fails(capsys):
    assert claims.measured(True, "cached beats cold") and capsys.readouterr().out == ""
    assert not claims.measured(False, "cached beats cold", "0.9×")
    assert capsys.readouterr().out.startswith(f"{claims.MARK} cached beats cold (measured: 0.9×)")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_run_saw_every_measured_claim(nb):
    cells = json.loads(nb.read_text())["cells"]
    bad = [f"cell {i}: " + line for i, c in enumerate(cells) for line in _text(c).splitlines() if claims.MARK in line]
    assert not bad, f"{nb.name}: the stored run did not see a claim the prose makes; re-run it on a quiet machine " \
                    f"(make notebooks NB={nb.parent.relative_to(ROOT)}):\n" + "\n".join(bad)
