"""ckptwrite stopped by SIGTERM mid-write: exit 143 and no partial checkpoint left in --path (issue 28 item 6)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers.storage import ckptwrite

ROOT = Path(__file__).resolve().parents[2]


def test_sigterm_mid_write_exits_143_and_leaves_nothing(tmp_path):
    assert ckptwrite.checkpoint_bytes(2e7) == 2.8e8
    p = subprocess.Popen([sys.executable, "-m", "helpers", "ckptwrite", "--path", str(tmp_path), "--params", "2e7",
                          "--width", "512", "--repeats", "20", "--shards", "4"], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not any(tmp_path.rglob("*")) and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)                    # the writers' folder exists: files are being written
        assert p.poll() is None, p.stderr.read()
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        assert p.returncode == 128 + signal.SIGTERM and "cleaned up" in err, err
        assert list(tmp_path.iterdir()) == []
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
