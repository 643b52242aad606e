"""helpers.storage.iobench: CLI refusals, invariants, cleanup on success, SIGINT and SIGTERM (chapter 04)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.storage import iobench, iofile
from tests.storage.test_iofile import read_only_dir

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "helpers.storage.iobench", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def test_parse_size():
    assert iobench.parse_size("256MiB") == 256 * 2**20
    assert iobench.parse_size("4096") == 4096
    assert iobench.parse_size("1.5GiB") == 3 * 2**29
    with pytest.raises(ValueError, match="'12 parsecs'"):
        iobench.parse_size("12 parsecs")


@pytest.mark.parametrize("where", ["missing", "readonly"])
def test_cli_refuses_with_one_line_and_nonzero_exit(tmp_path, where):
    path = tmp_path / "missing" if where == "missing" else read_only_dir(tmp_path)
    p = _cli("--path", str(path), "--size", "8MiB")
    out, err = p.communicate(timeout=60)
    assert p.returncode != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and "iobench" in err and "Traceback" not in err
    assert "not an existing folder" in err or "not writable" in err


def test_run_invariants_and_cleanup(tmp_path):
    with iofile.workfile(tmp_path, 4 * 2**20) as f:
        assert f.stat().st_size == 4 * 2**20
        recs = [iobench.run(f, "seq_read", 2**20, cache="cold", runtime_s=1),
                iobench.run(f, "rand_read", 4096, threads=2, cache="warm", runtime_s=0.2),
                iobench.run(f, "rand_write", 4096, runtime_s=0.2),
                iobench.run(f, "seq_write", 2**20, fsync=True, runtime_s=1)]
    assert list(tmp_path.iterdir()) == []
    for r in recs:
        assert r.ops > 0 and r.bw_MBps > 0 and r.lat_p50_us <= r.lat_p90_us <= r.lat_p99_us <= r.lat_p999_us
        assert r.iops * r.block_bytes / 1e6 == pytest.approx(r.bw_MBps, rel=1e-3)
    assert recs[0].ops == 4 and recs[0].cache == "cold" and recs[2].cache == "n/a"


def test_bad_arguments(tmp_path):
    with iofile.workfile(tmp_path, 2**20) as f:
        with pytest.raises(ValueError, match="pattern"):
            iobench.run(f, "sideways_read")
        with pytest.raises(ValueError, match="multiple of 512"):
            iobench.run(f, "seq_read", 1000)
        with pytest.raises(ValueError, match="threads=9"):
            iobench.run(f, "seq_read", 2**20 // 8, threads=9)


def test_cli_json_and_no_file_left(tmp_path):
    p = _cli("--path", str(tmp_path), "--size", "4MiB", "--runtime", "0.1", "--threads", "1,2", "--json")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    doc = json.loads(out)
    pats = {r["pattern"] for r in doc["records"]}
    assert pats == {"seq_read", "seq_write", "rand_read", "rand_write"}
    for key in ("pattern", "block_bytes", "direct", "threads", "bw_MBps", "iops", "lat_p50_us", "lat_p99_us"):
        assert key in doc["records"][0]
    assert "provenance" in doc and doc["size_bytes"] == 4 * 2**20
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_run_leaves_no_file(tmp_path, sig):
    p = _cli("--path", str(tmp_path), "--size", "32MiB", "--runtime", "5", "--threads", "1")
    deadline = time.monotonic() + 120               # generous: a loaded 2-core CI machine starts torch slowly
    while not list(tmp_path.glob("iobench-*.dat")):
        assert p.poll() is None and time.monotonic() < deadline, "work file never appeared"
        time.sleep(0.02)
    time.sleep(0.3)
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert "interrupted" in err
    assert list(tmp_path.iterdir()) == []
