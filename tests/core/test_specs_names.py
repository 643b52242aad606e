"""GPU names as real tools print them resolve to the right spec row (tests/data/real/gpu-names/, SOURCES.md).

Expectations come from the printed names themselves (capacity and form factor in the name) and from the memory
totals the sources print; never from what lookup happens to return."""
import json
import re
import warnings
from pathlib import Path

import pytest

from helpers.core import measurements, specs

REAL = Path(__file__).parents[1] / "data" / "real" / "gpu-names"

# file → [(name as printed, expected row or None)]
EXPECTED = {
    "trtllm-10278-b200-nvidia-smi.txt": [("NVIDIA B200", "B200 (HGX)")] * 2,
    "vllm-9630-gh200-480gb-collect-env.txt": [("NVIDIA GH200 480GB", "GH200 480GB")],
    "vllm-18390-gh200-144g-collect-env.txt": [("NVIDIA GH200 144G HBM3e", "GH200 144GB HBM3e")],
    "nvidia-docker-1076-v100-sxm2-32gb-q.txt": [("Tesla V100-SXM2-32GB", "V100 SXM2 32GB")],
    "nvidia-docker-914-v100-sxm2-16gb-q.txt": [("Tesla V100-SXM2-16GB", "V100 SXM2 16GB")],
    "cudalibrarysamples-104-a100-sxm4-80gb-q.txt": [("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB")],
    "bottlerocket-3873-a100-sxm4-40gb-devicequery.txt": [("NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB")],
    "akash-provider-configs-99-l40s-query.csv": [("NVIDIA L40S", "L40S")] * 2,
    "isaacsim-228-l40s-q.txt": [("NVIDIA L40S", "L40S")],
    "k8s-device-plugin-344-a10g-q.txt": [("NVIDIA A10G", None)],
    "detect-gpu-3-a10-nvml.json": [("NVIDIA A10", "A10")] * 2,
    "torch-perf-data-device-names.txt": [("NVIDIA H200", "H200 SXM"), ("NVIDIA H100 80GB HBM3", "H100 SXM"),
                                         ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"), ("NVIDIA H20", None)],
    "sn27-291-gpu-names.txt": [("NVIDIA H200", "H200 SXM"), ("NVIDIA H100 80GB HBM3", "H100 SXM"),
                               ("NVIDIA H100 PCIe", "H100 PCIe"), ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB")],
}
# MiB totals as the sources print them
MEMORY_MiB = {"trtllm-10278-b200-nvidia-smi.txt": ("B200 (HGX)", 183359),
              "akash-provider-configs-99-l40s-query.csv": ("L40S", 46068)}
MODAL = {"H100": "H100 SXM", "A100 80GB": "A100 SXM4 80GB", "A100 40GB": "A100 SXM4 40GB", "A10": "A10",
         "L40S": "L40S"}   # modal's labels → rows; L4 and T4 have no row


def names_in(path: Path) -> list[str]:
    """The GPU names printed in one output, whatever the tool: nvidia-smi table / -q, --query-gpu csv, CUDA
    deviceQuery, vLLM collect_env, NVML JSON, or a list of names."""
    text = path.read_text()
    if path.suffix == ".json":
        return [g["name"] for g in json.loads(text)]
    if path.suffix == ".csv":
        return [ln.split(",")[0].strip() for ln in text.splitlines()[1:] if ln.strip()]
    pats = [r"^\|\s+\d+\s+(.+?)\s+(?:On|Off)\s+\|",            # nvidia-smi table
            r"Product Name\s+:\s+(.+)$",                       # nvidia-smi -q
            r'^Device \d+: "(.+)"',                            # deviceQuery
            r"GPU \d+: (.+)$",                                 # collect_env
            r"设备名称：(.+)$", r"^- (NVIDIA .+)$"]              # lists
    out = []
    for ln in text.splitlines():
        for p in pats:
            m = re.search(p, ln)
            if m:
                out.append(m.group(1).strip())
                break
    return out


def test_every_file_is_expected_and_has_a_source():
    files = sorted(p.name for p in REAL.iterdir() if p.name != "SOURCES.md")
    sources = (REAL / "SOURCES.md").read_text()
    assert set(files) == set(EXPECTED) | {"modal-client-2797-memory-totals.txt"}
    for f in files:
        assert f"`{f}`" in sources


@pytest.mark.parametrize("fname", sorted(EXPECTED))
def test_real_names_resolve_to_the_right_row(fname):
    got = names_in(REAL / fname)
    assert got == [n for n, _ in EXPECTED[fname]]
    for name, row in EXPECTED[fname]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = specs.lookup(name)
        assert (s.name if s else None) == row, name


def test_capacity_in_the_name_picks_the_row():
    a40, a80 = specs.lookup("NVIDIA A100-SXM4-40GB"), specs.lookup("NVIDIA A100-SXM4-80GB")
    assert (a40.memory_GB, a40.hbm_GBps) == (40, 1555) and (a80.memory_GB, a80.hbm_GBps) == (80, 2039)
    assert specs.lookup("Tesla V100-SXM2-16GB").memory_GB == 16


@pytest.mark.parametrize("fname", sorted(MEMORY_MiB))
def test_reported_memory_matches_real_output(fname):
    row, mib = MEMORY_MiB[fname]
    assert specs.lookup(row).memory_reported_MiB == mib
    assert f"{mib}" in (REAL / fname).read_text()


def test_modal_memory_totals_and_units():
    for ln in (REAL / "modal-client-2797-memory-totals.txt").read_text().splitlines():
        m = re.match(r"- (.+?): (\d+)MiB \(([\d.]+) GB\)", ln)
        label, mib, gb = m.group(1), int(m.group(2)), float(m.group(3))
        assert mib * 2**20 / 1e9 == pytest.approx(gb, abs=0.01)          # the source's own GB = 10^9 B
        if label in MODAL:
            s = specs.lookup(MODAL[label])
            assert s.memory_reported_MiB == mib and s.memory_bytes == mib * 2**20


def test_a10_nvml_bytes_and_devicequery_bytes():
    a10 = json.loads((REAL / "detect-gpu-3-a10-nvml.json").read_text())[0]["memoryInfo"]["Total"]
    assert specs.lookup("NVIDIA A10").memory_bytes == a10
    dq = (REAL / "bottlerocket-3873-a100-sxm4-40gb-devicequery.txt").read_text()
    cuda_bytes = int(re.search(r"\((\d+) bytes\)", dq).group(1))
    assert cuda_bytes < specs.lookup("NVIDIA A100-SXM4-40GB").memory_bytes   # runtime sees less than NVML total


def test_h200_memory_is_the_recorded_size_not_141e9():
    h = specs.lookup("NVIDIA H200")
    assert h.memory_GB == 141 and h.memory_bytes > 141e9
    if "h200/device" in measurements.available():
        gpu = measurements.load("h200/device")["records"][0]["gpus"][0]
        assert gpu["name"] == "NVIDIA H200" and h.memory_bytes == gpu["memory_total_bytes"]


def test_no_bf16_uses_fp16_with_a_note_never_a_type_error():
    for name in ("Tesla V100-SXM2-32GB", "Tesla V100-SXM2-16GB"):
        peak, note = specs.lookup(name).training_peak("bf16")
        assert peak == 125 and "fp16" in note
    assert specs.lookup("NVIDIA H200").training_peak("bf16") == (989.4, "")
    with pytest.raises(ValueError, match="fp8"):
        specs.lookup("Tesla V100-SXM2-32GB").training_peak("fp8")


def test_mig_slices_and_unknown_parts_are_none_with_a_reason():
    with pytest.warns(UserWarning, match="MIG slice"):
        assert specs.lookup("NVIDIA A100-SXM4-40GB MIG 1g.5gb") is None
    with pytest.warns(UserWarning, match="not in the spec table"):
        assert specs.lookup("NVIDIA H200 NVL") is None
    with pytest.raises(ValueError):
        specs.lookup("")


def test_no_alias_is_shared_between_rows():
    seen = {}
    for s in specs.all_specs():
        for n in (s.name, *s.aliases):
            k = specs._norm(n)
            assert seen.setdefault(k, s.name) == s.name, n
