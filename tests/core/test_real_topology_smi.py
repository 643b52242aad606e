"""helpers.core.topology and helpers.core.smiparse on published nvidia-smi output (tests/data/real/, SOURCES.md there).

Expectations are the cells, names and values the sources print."""
from pathlib import Path

import pytest

from helpers.core import smiparse, topology

REAL = Path(__file__).parents[1] / "data" / "real"


def topo(name):
    return topology.parse_topo_matrix((REAL / "nvidia-smi-topo" / name).read_text())


def test_tabs_with_legend_two_gpus():
    t = topo("club3090-1229-2x5090-tabs.txt")
    assert t.devices == ("GPU0", "GPU1") and t.link("GPU0", "GPU1") == "PHB"
    assert t.cpu_affinity == ("0-63", "0-63") and t.numa_affinity == ("0", "0") and t.nic_names == ()


def test_spaces_indented_and_single_space_header():
    t = topo("club3090-1125-2gpu-spaces-indented.txt")
    assert t.devices == ("GPU0", "GPU1") and t.link("GPU1", "GPU0") == "NODE" and t.cpu_affinity[0] == "0-15"


@pytest.mark.parametrize("name, gpus, nics", [("stelline-asus-esc8000a-e12.txt", 4, 4),
                                              ("stelline-puget-threadripper-pro-wrx90.txt", 2, 2)])
def test_spaces_with_nic_legend(name, gpus, nics):
    t = topo(name)
    assert len(t.gpus) == gpus and sum(d.startswith("NIC") for d in t.devices) == nics
    assert t.nic_names[0] == ("NIC0", "mlx5_0") and len(t.nic_names) == nics
    assert all(t.link(d, d) == "X" for d in t.devices)


def test_stelline_asus_layout():
    t = topo("stelline-asus-esc8000a-e12.txt")
    assert t.link("GPU0", "GPU1") == "NODE" and t.link("GPU0", "GPU2") == "SYS"
    assert topology.nearest_nic(t, "GPU0")[1] == "NODE"


@pytest.mark.parametrize("name, match", [
    ("k8s-53497-8gpu-mlx4-spaces-excerpt.txt", "cut off"),          # the excerpt ends after GPU4
    ("nccl-933-8gpu-nv8-spaces-excerpt.txt", "cut off"),            # ends after GPU6
    ("flux-14-h100-no-header-excerpt.txt", "no header row")])       # starts at GPU5, no header
def test_partial_matrices_say_what_is_missing(name, match):
    with pytest.raises(ValueError, match=match):
        topo(name)


def test_no_matrix_is_none():
    assert topology.parse_topo_matrix("NVIDIA-SMI has failed because it couldn't communicate") is None


TABLES = {  # file: (GPUs, name of GPU 0, power cap W, memory total MiB, driver)
    "thamada-H100SXMx8.txt": (8, "NVIDIA H100 80GB HBM3", 700, 81559, "565.57.01"),
    "thamada-A100SXMx4.txt": (4, "NVIDIA A100-SXM4-80GB", 500, 81920, "555.42.02"),
    "thamada-H100NVLx2.txt": (2, "NVIDIA H100 NVL", 310, 95830, "550.54.14"),
    "thamada-L40S.txt": (1, "NVIDIA L40S", 350, 46068, "550.127.05"),
    "thamada-RTX4090.txt": (8, "NVIDIA GeForce RTX 4090", 450, 24564, "550.127.05"),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_plain_table(name):
    n, gpu0, cap, mem, drv = TABLES[name]
    t = smiparse.parse_table((REAL / "nvidia-smi" / name).read_text())
    assert len(t.gpus) == n and t.gpus[0].name == gpu0 and t.driver_version == drv
    assert t.gpus[0].power_cap_W == cap and t.gpus[0].memory_total_MiB == mem
    assert [g.index for g in t.gpus] == list(range(n)) and t.processes == ()


QUERIES = {  # file: (GPUs, name, architecture, FB total MiB, power limit W, max graphics clock MHz)
    "thamada-H100SXMx8.txt": (8, "NVIDIA H100 80GB HBM3", "Hopper", 81559, 700, 1980),
    "thamada-A100SXMx4.txt": (4, "NVIDIA A100-SXM4-80GB", "Ampere", 81920, 500, 1410),
    "thamada-H100NVLx2.txt": (2, "NVIDIA H100 NVL", "Hopper", 95830, 310, 1785),
    "thamada-L40S.txt": (1, "NVIDIA L40S", "Ada Lovelace", 46068, 350, 2520),
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_query_report(name):
    n, gpu, arch, mem, limit, clk = QUERIES[name]
    q = smiparse.parse_query((REAL / "nvidia-smi-q" / name).read_text())
    assert q.attached_gpus == n == len(q.gpus)
    g = q.gpus[0]
    assert (g.name, g.architecture, g.memory_total_MiB, g.power_limit_W, g.max_graphics_clock_MHz) == \
        (gpu, arch, mem, limit, clk)
    assert g.ecc_mode == "Enabled" and g.throttle_active == ("Idle",)   # idle GPUs: only "Idle" reads Active
    assert g.fields["PCI/Bus Id"] == g.bus_id


def test_l40s_idle_state():
    g = smiparse.parse_query((REAL / "nvidia-smi-q" / "thamada-L40S.txt").read_text()).gpus[0]
    assert g.perf_state == "P8" and g.power_draw_W == pytest.approx(33.44)


def test_smi_rejects_other_text():
    with pytest.raises(ValueError, match="nvidia-smi -q"):
        smiparse.parse_query("Hello")
    with pytest.raises(ValueError, match="no GPU rows"):
        smiparse.parse_table("No devices were found")


def test_capture_reads_what_the_machine_prints(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"           # replays published output: the capture path without a GPU
    fake.write_text("#!/bin/sh\ncase \"$1\" in\n"
                    f"  -q) cat {REAL}/nvidia-smi-q/thamada-L40S.txt;;\n"
                    f"  topo) cat {REAL}/nvidia-smi-topo/stelline-puget-threadripper-pro-wrx90.txt;;\n"
                    f"  *) cat {REAL}/nvidia-smi/thamada-L40S.txt;;\nesac\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{__import__('os').environ['PATH']}")
    recs, why = smiparse.capture()
    assert [r["parsed"] for r in recs] == ["1 GPU(s): NVIDIA L40S", "1 GPU(s): NVIDIA L40S", "4 devices"]
    assert "NVSMI LOG" in recs[1]["raw_text"] and "captured 3" in why


def test_capture_without_driver(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: None)
    recs, why = smiparse.capture()
    assert recs == [] and "not on PATH" in why
