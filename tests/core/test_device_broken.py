"""`python -m helpers device --json` survives a broken environment (issue 18): valid JSON, and a reason that says
what actually happened — pynvml that raises on import, nvidia-smi that hangs, fails or prints non-UTF-8."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _device_json(tmp_path, smi_script: str | None, pynvml_src: str | None):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # on a GPU machine the real nvidia-smi (in /usr/bin) and torch would still see the GPU: a stub that finds no
    # driver stands in for it, and CUDA_VISIBLE_DEVICES hides the GPU from torch, so each case tests only its fault
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\n" + (smi_script if smi_script is not None else "exit 127") + "\n")
    smi.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "BOOK_TOOL_TIMEOUT_S": "2", "CUDA_VISIBLE_DEVICES": ""}
    if pynvml_src is not None:
        mod = tmp_path / "mods"
        mod.mkdir()
        (mod / "pynvml.py").write_text(pynvml_src)
        env["PYTHONPATH"] = f"{mod}:{env.get('PYTHONPATH', '')}"
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "helpers", "device", "--json"], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=120)
    return p, json.loads(p.stdout), time.monotonic() - t0


@pytest.mark.parametrize("case, smi, nvml, expect", [
    ("pynvml raises on import", None, "raise RuntimeError('libnvidia-ml.so.1: cannot open shared object')\n",
     "nvidia-ml-py failed to import (RuntimeError"),
    ("nvidia-smi hangs", "sleep 60", None, "did not answer within 2 s (killed)"),
    ("nvidia-smi fails", "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.' >&2; exit 9",
     None, "nvidia-smi failed (exit 9: NVIDIA-SMI has failed"),
    ("nvidia-smi prints non-UTF-8", "printf '\\377\\376garbage\\n'", None, "nvidia-smi lists 0 GPUs"),
])
def test_device_json_survives(tmp_path, case, smi, nvml, expect):
    p, doc, elapsed = _device_json(tmp_path, smi, nvml)
    assert p.returncode == 0, p.stderr
    assert doc["gpus"] == [] and expect in doc["reason"], (case, doc["reason"])
    assert "Traceback" not in p.stderr
    if smi == "sleep 60":
        assert elapsed < 30                      # killed, not waited for
