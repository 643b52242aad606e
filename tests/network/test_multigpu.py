"""Reading multi-GPU recordings: on book-written stand-ins in a temporary measurements folder (labelled as such),
and the honest line when none exist."""
import json

import pytest

from helpers.core import measurements
from helpers.network import multigpu


def _doc(records):
    return {"schema": 1, "kind": "collectives", "provenance": {"device": "NVIDIA H200", "gpu_count": 8,
                                                              "date_utc": "2026-01-01", "host": "test"},
            "records": records}


@pytest.fixture
def fake_root(tmp_path, monkeypatch):
    monkeypatch.setattr(measurements, "ROOT", tmp_path)
    return tmp_path


def test_no_host_means_a_clear_note(fake_root):
    assert multigpu.hosts() == [] and not multigpu.have(None, "collectives_nccl")
    assert "no host with several GPUs" in multigpu.missing_note("collectives_nccl.json")


def test_tables_from_book_written_stand_ins(fake_root):
    d = fake_root / "h200x4"
    d.mkdir()
    rec = lambda ws, s, t: {"op": "all_reduce", "world_size": ws, "size_bytes": s, "time_s": t,  # noqa: E731
                            "algbw_GBps": s / t / 1e9, "busbw_GBps": s / t / 1e9 * 2 * (ws - 1) / ws, "correct": True}
    (d / "collectives_nccl.json").write_text(json.dumps(_doc([rec(2, 8, 1e-5), rec(2, 2**30, 1e-2),
                                                               rec(4, 2**30, 2e-2)])))
    (d / "collectives_nccl_ring.json").write_text(json.dumps(_doc([rec(4, 8, 2e-5), rec(4, 2**30, 1e-2)])))
    (d / "collectives_nccl_tree.json").write_text(json.dumps(_doc([rec(4, 8, 1e-5), rec(4, 2**30, 2e-2)])))
    assert multigpu.hosts() == ["h200x4"] and multigpu.have("h200x4", "collectives_nccl_ring")
    big = multigpu.allreduce_largest("h200x4")
    assert [(r["world_size"], r["size_bytes"]) for r in big] == [(2, 2**30), (4, 2**30)]
    assert [r["faster"] for r in multigpu.ring_vs_tree("h200x4")] == ["tree", "ring"]
