"""Recorded data is labelled by where the work ran: host-CPU work on the H200 machine never reads "NVIDIA H200"."""
import copy

import pytest

from helpers.core import measurements as m

PROV = {"device": "NVIDIA H200", "gpu_count": 1, "host": "vm", "cpu": "Intel(R) Xeon(R) Processor",
        "cpu_cores_logical": 16, "driver": "580.159.04", "cuda": "13.0", "torch": "2.11.0", "nccl": "2.28.9",
        "date_utc": "2026-12-02T13:15:11+00:00"}


def doc(kind, records, **prov):
    return {"kind": kind, "provenance": {**PROV, **prov}, "records": records}


@pytest.mark.parametrize("kind,records", [
    ("collectives", [{"backend": "gloo", "device": "cpu", "world_size": 2}]),
    ("ddp_buckets", [{"backend": "gloo", "world_size": 2}]),
    ("tensorpar", [{"backend": "gloo", "rank": 0}]),
    ("pipeline-real", [{"backend": "gloo", "rank": 0}]),
    ("compress", [{"codec": "zstd"}]),
    ("iobench", [{"engine": "python"}]),
    ("dataload", [{"num_workers": 4}]),
])
def test_host_cpu_work_is_labelled_host_cpu(kind, records):
    d = doc(kind, records)
    assert m.ran_on(d) == "H200 machine, host CPU"
    lab = m.label(d)
    assert lab.startswith("H200 machine, host CPU · Intel") and "NVIDIA H200" not in lab
    assert "driver" not in lab and "NCCL" not in lab


def test_gpu_work_names_the_gpu_and_mixed_work_says_both():
    assert m.ran_on(doc("bench", [{"device": "NVIDIA H200"}])) == "NVIDIA H200"
    assert m.ran_on(doc("collectives", [{"backend": "nccl", "device": "cuda"}])) == "NVIDIA H200"
    assert m.ran_on(doc("allocator", [{"step": 1}])) == "NVIDIA H200"          # no field: the tool decides
    mixed = doc("backends", [{"engine": "numpy"}, {"engine": "torch-cuda"}, {"engine": "cupy"}])
    assert m.ran_on(mixed) == "NVIDIA H200 and its host CPU"
    assert m.ran_on(mixed, [r for r in mixed["records"] if r["engine"] == "numpy"]) == "H200 machine, host CPU"
    assert "driver 580" in m.label(mixed)
    laptop = {"kind": "bench", "provenance": {"device": "cpu", "gpu_count": 0, "torch": "2.13"}, "records": []}
    assert m.ran_on(laptop) == "cpu"


def test_every_recording_gets_an_honest_label():
    for name in m.available():
        d = m.load(name)
        lab = m.label(d)
        cpu_only = all(m._where(r) == "cpu" for r in d["records"]) and d["records"] and \
            any(m._where(r) for r in d["records"])
        if cpu_only or d.get("kind") in m.HOST_CPU_KINDS:
            assert "host CPU" in lab and not lab.startswith("NVIDIA"), name


def test_one_rank_nccl_moves_no_bus_data(tmp_path, monkeypatch):
    recs = [{"op": "all_reduce", "world_size": 1, "backend": "nccl", "busbw_GBps": 24000.0, "algbw_GBps": 24000.0},
            {"op": "all_reduce", "world_size": 2, "backend": "nccl", "busbw_GBps": 300.0, "algbw_GBps": 150.0}]
    import json
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "c.json").write_text(json.dumps(doc("collectives", copy.deepcopy(recs))))
    monkeypatch.setattr(m, "ROOT", tmp_path)
    got = m.load("h200/c")["records"]
    assert got[0]["busbw_GBps"] is None and "moves no data" in got[0]["busbw_note"]
    assert got[1]["busbw_GBps"] == 300.0 and "busbw_note" not in got[1]
    assert json.loads((tmp_path / "h200" / "c.json").read_text())["records"][0]["busbw_GBps"] == 24000.0


def test_side_by_side_column_names_where_it_ran():
    rec = doc("compress", [{"codec": "zstd", "MBps": 500.0}])
    t = m.side_by_side([{"codec": "zstd", "MBps": 100.0}], rec, ["codec"], "MBps")
    assert "MBps (recorded: H200 machine, host CPU)" in t.columns
