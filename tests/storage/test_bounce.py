"""Bounce-buffer path: measured hops on this machine, recorded rates, and the two-hop vs direct model."""
import json
from pathlib import Path

import pytest

from helpers.storage import bounce

H200 = Path(__file__).parents[2] / "assets" / "measurements" / "h200"


def test_measure_reads_file_into_host_buffer(tmp_path):
    recs = bounce.measure(str(tmp_path), 2**20, repeats=2)
    reads = [r for r in recs if r.hop == "file → host buffer"]
    assert reads and all(r.bw_GBps > 0 and r.size_bytes == 2**20 for r in reads)
    gpu = [r for r in recs if r.hop == "host buffer → GPU"]
    assert len(gpu) == len(reads)
    assert all((r.time_s is None) == ("not run" in r.note) for r in gpu)
    assert list(tmp_path.iterdir()) == []                       # temporary file removed


def test_measure_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="at least 4096"):
        bounce.measure(str(tmp_path), 10)
    with pytest.raises(ValueError, match="does not exist"):
        bounce.measure(str(tmp_path / "missing"), 2**20)


def test_rates_from_recordings():
    io = {"records": [{"pattern": "seq_read", "direct": True, "bw_MBps": 2000.0},
                      {"pattern": "seq_read", "direct": False, "bw_MBps": 9000.0}]}
    tr = {"records": [{"direction": "h2d", "pinned": True, "size_bytes": 1, "bw_GBps": 5.0},
                      {"direction": "h2d", "pinned": True, "size_bytes": 2**30, "bw_GBps": 50.0},
                      {"direction": "h2d", "pinned": False, "size_bytes": 2**30, "bw_GBps": 7.0}]}
    assert bounce.rates_from_recordings(io, tr) == (2.0, 50.0)
    gd = {"records": [{"path": "pinned memcpy", "size_bytes": 2**30, "bw_GBps": 40.0}]}
    assert bounce.rates_from_recordings(io, gpudirect_doc=gd) == (2.0, 40.0)
    with pytest.raises(ValueError, match="direct=True"):
        bounce.rates_from_recordings({"records": []}, tr)
    if (H200 / "iobench.json").exists() and (H200 / "transfer.json").exists():
        d, h = bounce.rates_from_recordings(json.loads((H200 / "iobench.json").read_text()),
                                            json.loads((H200 / "transfer.json").read_text()))
        assert d > 0 and h > 0


def test_compare_serial_vs_overlapped_vs_direct():
    serial, overlap, direct = bounce.compare(10**10, disk_GBps=2.0, h2d_GBps=50.0)
    assert serial.time_s == pytest.approx(10**10 / 2e9 + 10**10 / 50e9, rel=1e-3)
    assert overlap.time_s == pytest.approx(5.0) and direct.time_s == pytest.approx(5.0)
    assert serial.host_dram_bytes_per_byte == 2 and direct.host_dram_bytes_per_byte == 0
    with pytest.raises(ValueError, match="must be > 0"):
        bounce.compare(10, disk_GBps=0, h2d_GBps=1)
