"""helpers.storage.fio: command line, parsing of a real fio 3.33 JSON result, and a tiny live comparison (chapter 04)."""
import json
from pathlib import Path

import pytest

from helpers.storage import fio, iofile

SAMPLE = Path(__file__).parents[1] / "data" / "fio-3.33-randread-psync.json"


def test_parse_real_fio_json():
    r = fio.parse(json.loads(SAMPLE.read_text()), "rand_read", 4096, direct=True, threads=1)
    assert r.engine == "fio/psync" and r.ops == 8462 and r.io_bytes == 8462 * 4096
    assert r.iops == pytest.approx(8453.5, abs=0.1)
    assert r.bw_MBps == pytest.approx(34.63, abs=0.01)
    assert r.lat_p50_us == pytest.approx(54.53, abs=0.01)
    assert r.lat_p50_us <= r.lat_p90_us <= r.lat_p99_us <= r.lat_p999_us


def test_parse_rejects_other_json():
    with pytest.raises(ValueError, match="not a fio JSON"):
        fio.parse({"jobs": []}, "rand_read", 4096, direct=True, threads=1)


def test_command_matches_the_helpers_test():
    cmd = fio.command("/tmp/a:b.dat", "rand_read", 4096, direct=True, threads=4, runtime_s=1.5, size_bytes=2**20)
    assert "--rw=randread" in cmd and "--bs=4096" in cmd and "--direct=1" in cmd and "--numjobs=4" in cmd
    assert "--ioengine=psync" in cmd and "--allow_file_create=0" in cmd and "--runtime=1500ms" in cmd
    assert "--filename=/tmp/a\\:b.dat" in cmd
    with pytest.raises(ValueError, match="libaio"):
        fio.command("/x", "rand_read", 4096, direct=True, iodepth=8, size_bytes=2**20)


def test_available_gives_a_reason():
    ok, why = fio.available()
    assert isinstance(ok, bool) and why


@pytest.mark.skipif(not fio.available()[0], reason="fio not installed")
def test_live_comparison_on_the_same_file(tmp_path):
    with iofile.workfile(tmp_path, 8 * 2**20) as f:
        ok, _ = iofile.direct_supported(f)
        comps, raw = fio.compare(f, fio.CASES[:2], runtime_s=0.2, direct_ok=ok)
    assert list(tmp_path.iterdir()) == []
    assert [c.metric for c in comps] == ["bw_MBps", "iops"]
    assert all(c.helpers > 0 and c.fio > 0 and c.ratio > 0 for c in comps)
    assert {r.engine for r in raw} == {"helpers", "fio/psync"}
