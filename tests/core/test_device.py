import json
import subprocess
import sys

from helpers.core import device, topology
from tests.fakes import FakeNVML, fake_torch


def test_no_gpu_clean_report():
    r = device.detect(nvml=None, torch_mod=fake_torch(0, cuda=None), smi_csv=None, topo_text=None)
    assert r.gpus == () and "no GPU found" in r.reason and "CPU build" in r.reason
    assert r.cpu.cores_logical >= 1
    json.dumps(r.to_dict())  # serialisable
    assert "CPU only" in r.summary()


def test_cli_json_on_this_machine_is_clean():
    p = subprocess.run([sys.executable, "-m", "helpers.core.device", "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert isinstance(doc["gpus"], list)
    if not doc["gpus"]:
        assert doc["reason"] and p.stderr == ""


def test_nvml_not_supported_fields_degrade_one_by_one():
    nv = FakeNVML(n=1, name="NVIDIA H200", not_supported={"power", "mig", "clocks"})
    r = device.detect(nvml=nv, torch_mod=fake_torch(1, name="NVIDIA H200"), smi_csv=None, topo_text=None)
    (g,) = r.gpus
    assert g.name == "NVIDIA H200" and g.power_limit_W is None and g.mig_mode is None
    assert g.memory_total_bytes == 80 * 2**30 and g.pcie_gen == 5 and g.sm_count == 132  # sm_count from torch
    why = "; ".join(g.unavailable)
    assert "power_limit_W: nvml: NotSupported" in why and "mig_mode" in why
    assert g.sources == ("nvml", "torch") and r.driver_version == "580.159.03" and r.nccl_version == "2.28.3"


def test_smi_fills_what_nvml_cannot():
    nv = FakeNVML(n=1, not_supported={"power"})
    csv = "0, NVIDIA H100 80GB HBM3, 81559, 580.159.03, 9.0, 1980, 2619, 700.00, Disabled, 00000000:18:00.0\n"
    r = device.detect(nvml=nv, torch_mod=fake_torch(0, cuda=None), smi_csv=csv, topo_text=None)
    assert r.gpus[0].power_limit_W == 700.0 and "nvidia-smi" in r.gpus[0].sources


def test_eight_gpus_with_nvlink_and_topology():
    nv = FakeNVML(n=8, nvlinks=18)
    r = device.detect(nvml=nv, torch_mod=fake_torch(8), smi_csv=None, topo_text=topology.sample_text("dgx-h100"))
    assert len(r.gpus) == 8 and all(g.nvlink_links_active == 18 for g in r.gpus)
    assert r.topology is not None and topology.gpu_link_counts(r.topology) == {"NV": 28}
    assert "8 × NVIDIA H100 80GB HBM3" in r.summary()
    assert "GPU 7" in device.format_report(r)


def test_pick_device_on_cpu():
    import torch

    dev, why = device.pick_device()
    assert why
    if not torch.cuda.is_available():
        assert dev.type == "cpu" and "CPU" in why
