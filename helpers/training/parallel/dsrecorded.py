"""Chapter 06's Lab 6 where DeepSpeed is not installed: the same call's recorded run, said to be one.

DeepSpeed is an optional package for a reader's machine (a GPU image often lacks it). ``compare_or_recorded`` runs
``dszero.compare`` where it can; where it cannot, and the call is the one recorded in ``RECORDED`` (written by
``record`` on the book's CPU machine, with the call and where it ran), it prints that and returns the recorded run,
so the chapter's later cells read a real run instead of failing. Any other call gets ``compare``'s clear error.

    python -c "from helpers.training.parallel import dsrecorded; dsrecorded.record(stages=(0, 1, 2, 3), world_size=2, steps=3)"
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
from pathlib import Path

from helpers.training.parallel import dszero

RECORDED = Path(__file__).resolve().parents[1] / "data" / "dszero_gloo_2ranks.json"   # Lab 6's call, on CPU


def _call(kw: dict) -> dict:
    """The call as JSON stores it (tuples as lists), to compare with the recorded one."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()}


def compare_or_recorded(**kw) -> list[dszero.ZeroRankRun]:
    """``compare(**kw)``; where DeepSpeed is not installed and ``kw`` is the call that wrote ``RECORDED`` (chapter 06's
    Lab 6), that recorded run instead, saying so — the chapter's later cells then read a real run, not an error."""
    if importlib.util.find_spec("deepspeed") is not None or not RECORDED.exists():
        return dszero.compare(**kw)
    doc = json.loads(RECORDED.read_text())
    if doc["call"] != _call(kw):
        return dszero.compare(**kw)                           # another call: the clear "not installed" error
    print(f"DeepSpeed is not installed on this machine (pip install deepspeed==0.19.8): this lab shows the run "
          f"recorded on {doc['provenance']['machine']} on {doc['provenance']['date']} ({RECORDED.name}).")
    return [dszero.ZeroRankRun(**{**r, "losses": tuple(r["losses"]),
                                  "at_rest_where": tuple(tuple(w) for w in r["at_rest_where"])}) for r in doc["runs"]]


def record(path: Path = RECORDED, **kw) -> Path:
    """Run ``compare(**kw)`` and write it, with the call and where it ran, for ``compare_or_recorded``."""
    import platform
    import time
    runs = dszero.compare(**kw)
    prov = {"machine": f"{platform.machine()} CPU, {os.cpu_count()} cores, {runs[0].world_size} Gloo ranks",
            "date": time.strftime("%Y-%m-%d"), "deepspeed": runs[0].deepspeed_version}
    path.write_text(json.dumps({"call": _call(kw), "provenance": prov, "runs": [dataclasses.asdict(r) for r in runs]},
                               indent=1) + "\n")
    return path
