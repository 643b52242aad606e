"""helpers.storage.fio on published fio output (tests/data/real/fio-json, fio-text; sources in SOURCES.md).

JSON expectations are what each source's own test asserts (PerfKitBenchmarker, superbench); text expectations are
the numbers fio printed."""
from pathlib import Path

import pytest

from helpers.storage import fio

REAL = Path(__file__).parents[1] / "data" / "real"


def doc(name):
    return fio.loads((REAL / "fio-json" / name).read_text())


def test_fio_2_1_4_microseconds_and_kib():
    d = doc("pkb-fio-2.1.4-five-jobs.json")
    r = fio.parse(d, "seq_write", 2**19, direct=True, threads=1, job="sequential_write")
    # PKB's fio_test: bandwidth 68118 KB/s, latency mean 477734.84 usec (clat), p50 444416 usec
    assert r.bw_MBps == pytest.approx(68118 * 1024 / 1e6, abs=0.01)
    assert r.lat_p50_us == 444416 and r.io_bytes == 361984 * 1024
    with pytest.raises(ValueError, match="no fio job named"):
        fio.parse(d, "seq_write", 2**19, direct=True, threads=1, job="nope")


def test_fio_2_17_two_jobs():
    d = doc("pkb-fio-2.17-randrw-16k.json")
    r = fio.parse(d, "rand_read", 16384, direct=True, threads=2, ioengine="libaio",
                  job="rand_16k_read_100%-io-depth-1-num-jobs-2")
    side = d["jobs"][0]["read"]
    assert r.ops == side["total_ios"] and r.iops == pytest.approx(side["iops"], abs=0.1)
    assert r.lat_p50_us == side["clat"]["percentile"]["50.000000"]           # fio 2.x: already µs


def test_fio_3_16_lat_percentiles_only():
    r = fio.parse(doc("superbench-fio-3.16-lat-percentiles.json"), "rand_read", 4096, direct=True, threads=256,
                  ioengine="libaio")
    assert r.iops == pytest.approx(85138.890741, abs=0.1)                     # superbench's assertion
    assert r.lat_p99_us == pytest.approx(2244608 / 1e3, abs=0.01) and r.lat_p999_us == pytest.approx(3620864 / 1e3, abs=0.01)
    w = fio.parse(doc("superbench-fio-3.16-lat-percentiles.json"), "rand_write", 4096, direct=True, threads=256)
    assert w.lat_p99_us == pytest.approx(2072576 / 1e3, abs=0.01)


def test_json_after_text_preamble_and_not_json():
    text = "rand: (g=0): rw=randread, bs=(R) 4096B-4096B\nfio-3.16\nStarting 1 process\n" + \
        (REAL / "fio-json" / "superbench-fio-3.16-lat-percentiles.json").read_text()   # as logs show it
    assert fio.loads(text)["fio version"] == "fio-3.16"
    with pytest.raises(ValueError, match="parse_text"):
        fio.loads("read: IOPS=84, BW=42.4MiB/s")


def text(name):
    return fio.parse_text((REAL / "fio-text" / name).read_text())


def test_text_fio_2_2_10_five_runs():
    rs = text("vps-comparison-fio-2.2.10-randread-8jobs.log")
    assert len(rs) == 5 and all(r.rw == "read" and r.jobs == 8 and r.fio_version == "2.2.10" for r in rs)
    r = rs[0]
    assert (r.iops, r.bw_Bps, r.runtime_ms, r.io_bytes) == (152764, 611058 * 1024, 6864, 4096 * 2**20)
    assert r.clat_mean_us == 825.75 and r.percentiles_us[50.0] == 692 and r.percentiles_us[99.99] == 19328


def test_text_fio_3_1_mib():
    (r,) = text("vps-comparison-fio-3.1-libaio-write-qd4.txt")
    assert (r.rw, r.iops, r.runtime_ms, r.io_bytes) == ("write", 3068, 341704, 4096 * 2**20)
    # fio prints "BW=11.0MiB/s (12.6MB/s)"; the decimal figure is the one io/runtime confirm (4096 MiB / 341.704 s)
    assert r.bw_Bps == 12.6e6 and r.io_bytes / (r.runtime_ms / 1e3) == pytest.approx(r.bw_Bps, rel=0.01)
    assert r.clat_mean_us == 1294.12 and r.percentiles_us[50.0] == 1188 and r.percentile_of == "clat"


def test_text_with_log_prefix_and_indentation():
    (r,) = text("avocado-1675-fio3-randrw-debug-prefix-excerpt.txt")
    assert (r.jobname, r.rw, r.iops, r.runtime_ms) == ("rand-readwrite", "read", 84, 3020)
    assert r.io_bytes == 128 * 2**20 and r.percentiles_us[99.9] == 173016
    (w,) = text("ocs-ci-283-fio2-randwrite-indented-excerpt.txt")
    assert (w.jobname, w.rw, w.iops, w.bw_Bps) == ("fio-rand-write", "write", 6008, 24035 * 1024)
    assert w.clat_mean_us == 5.93 and w.percentiles_us[99.99] == 10176


def test_text_rejects_other():
    with pytest.raises(ValueError, match="fio text"):
        fio.parse_text("hello")
