"""helpers.core.gpuquery: the torch, nvidia-smi and cupy sources of the device report, each without the machine."""
import sys

from helpers.core import gpuquery
from tests.fakes import fake_torch


def test_smi_csv_not_supported_values():
    csv = "0, Tesla T4, 15360, 535.1, 7.5, [N/A], [N/A], [Not Supported], [N/A], 00000000:00:04.0"
    (g,) = gpuquery.parse_smi_csv(csv)
    assert g["clock_sm_max_MHz"] is None and g["power_limit_W"] is None and g["mig_mode"] is None
    assert g["memory_total_bytes"] == 15360 * 2**20 and g["compute_capability"] == "7.5"


def test_smi_csv_skips_lines_with_the_wrong_field_count():
    assert gpuquery.parse_smi_csv("0, only, three\n") == []


def test_torch_info_cpu_build_and_gpus():
    tv, tcuda, nccl, gpus, why = gpuquery.torch_info(fake_torch(0, cuda=None))
    assert tcuda is None and gpus == [] and "CPU build" in why
    tv, tcuda, nccl, gpus, why = gpuquery.torch_info(fake_torch(2, name="NVIDIA H200"))
    assert why is None and [g["name"] for g in gpus] == ["NVIDIA H200"] * 2 and gpus[1]["sm_count"] == 132


def test_run_tool_says_what_happened():
    out, why = gpuquery.run_tool(["no-such-tool-for-the-book"])
    assert out is None and why == "no-such-tool-for-the-book not on PATH"
    out, why = gpuquery.run_tool([sys.executable, "-c", "import sys; sys.stderr.write('broken\\n'); sys.exit(3)"])
    assert out is None and "failed (exit 3: broken)" in why
    out, why = gpuquery.run_tool([sys.executable, "-c", "print('ok')"])
    assert out.strip() == "ok" and why == ""


def test_cupy_status_is_a_sentence():
    assert isinstance(gpuquery.cupy_status(), str) and gpuquery.cupy_status()
