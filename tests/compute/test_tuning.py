"""helpers.compute.tuning: read-only node settings, on a book-written tree, this machine and real nvidia-smi -q."""
import os
from pathlib import Path

import pytest

from helpers.compute import tuning

REAL = Path(__file__).parents[1] / "data" / "real" / "nvidia-smi-q"


def _write(root, rel, text):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture
def node(tmp_path):
    """A book-written copy of the files a 2-socket node exposes (labelled: not a real node's files)."""
    for cpu in range(4):
        _write(tmp_path, f"sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor",
               "performance\n" if cpu < 3 else "powersave\n")
    for n, cpus in ((0, "0-1"), (1, "2-3")):
        _write(tmp_path, f"sys/devices/system/node/node{n}/cpulist", cpus + "\n")
        _write(tmp_path, f"sys/devices/system/node/node{n}/meminfo",
               f"Node {n} MemTotal:       {2**20 * 8} kB\nNode {n} MemFree: 1 kB\n")
    _write(tmp_path, "sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n")
    _write(tmp_path, "sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never\n")
    _write(tmp_path, "proc/interrupts",
           "           CPU0       CPU1       CPU2       CPU3\n"
           "  24:          1          0          0          0  IO-APIC   5-edge      ACPI:Ged\n"
           " 120:     500000         10          0          0  PCI-MSIX  mlx5_comp0@pci:0000:17:00.0\n"
           " 121:         10       9000          0          0  PCI-MSIX  nvme0q1\n"
           "NMI:          0          0          0          0   Non-maskable interrupts\n"
           "LOC:    9999999    9999999    9999999    9999999   Local timer interrupts\n")
    _write(tmp_path, "proc/irq/120/smp_affinity_list", "0-1\n")
    return str(tmp_path)


def test_tree_read(node):
    assert tuning.governors(node) == {"performance": 3, "powersave": 1}
    nodes = tuning.numa_nodes(node)
    assert [(n["node"], n["cpus"], n["mem_total_kB"]) for n in nodes] == [(0, "0-1", 2**23), (1, "2-3", 2**23)]
    irqs = tuning.busiest_irqs(node, top=2)
    assert [i["irq"] for i in irqs] == [120, 121]             # NMI / LOC are per-CPU counters, skipped
    assert irqs[0]["total"] == 500010 and irqs[0]["affinity"] == "0-1"
    assert irqs[1]["affinity"] == tuning.NOT_EXPOSED
    rows = {r.setting: r for r in tuning.report(node)}
    assert rows["Transparent huge pages"].value_here == "always"
    assert rows["THP defrag"].value_here == "madvise"
    assert "performance (3 CPUs)" in rows["CPU frequency governor"].value_here
    assert all(r.source.startswith("https://") for r in rows.values())


def test_missing_files_say_not_exposed(tmp_path):
    rows = tuning.report(str(tmp_path))
    assert rows and all(tuning.NOT_EXPOSED in r.value_here for r in rows)


def test_this_machine_never_raises():
    rows = tuning.report("/", tuning.smi_query())
    assert {"CPU frequency governor", "Transparent huge pages"} <= {r.setting for r in rows}
    assert all(r.value_here for r in rows)


@pytest.mark.parametrize("name,n,app_graphics", [("thamada-H100SXMx8.txt", 8, "1980 MHz"),
                                                  ("thamada-A100SXMx4.txt", 4, "1140 MHz"),
                                                  ("thamada-H100NVLx2.txt", 2, "1785 MHz")])
def test_real_nvidia_smi_q(name, n, app_graphics):
    gpus = tuning.gpu_driver((REAL / name).read_text())
    assert len(gpus) == n                                     # SOURCES.md: attached GPUs
    assert all(g["persistence"] == "Enabled" for g in gpus)   # "Persistence Mode : Enabled" in each report
    assert gpus[0]["app_graphics"] == app_graphics
    rows = tuning.report("/nonexistent-root", (REAL / name).read_text())
    assert sum("persistence mode" in r.setting for r in rows) == n


def test_bad_smi_text_is_a_clear_error():
    with pytest.raises(ValueError, match="nvidia-smi -q"):
        tuning.gpu_driver("hello")


def test_cli(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert tuning.main(["--root", str(tmp_path), "--out", str(out)]) == 0
    assert out.exists() and os.path.getsize(out) > 0
