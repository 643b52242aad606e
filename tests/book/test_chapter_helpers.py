"""Tests of the chapter 01-02 helpers: overview, clustermap, hardware, nodewiring (fast, no timing assertions)."""
import copy
import json

import pytest

from helpers.core import device, measurements, specs, topology
from helpers.compute import roofline
from helpers.figures import clustermap, hardware, nodewiring, overview
from tests.fakes import FakeNVML, fake_torch


@pytest.fixture(scope="module")
def h200_record():
    return measurements.load("h200/device")["records"][0]


# ---------------------------------------------------------------- overview (chapter 01)

def test_report_roundtrip_and_compare(h200_record):
    rep = overview.report_from_dict(h200_record)
    assert rep.gpus[0].name == "NVIDIA H200" and rep.gpus[0].sm_count == 132
    assert "NVIDIA H200" in device.format_report(rep)
    fake = device.detect(nvml=FakeNVML(n=8, nvlinks=18), torch_mod=fake_torch(8), smi_csv=None,
                         topo_text=topology.sample_text("dgx-h100"))
    again = overview.report_from_dict(json.loads(json.dumps(fake.to_dict())))
    assert again.topology == fake.topology and again.gpus == fake.gpus
    table = overview.compare_reports({"a": rep, "b": h200_record})
    assert list(table.columns) == ["a", "b"] and table.loc["SMs per GPU", "a"] == "132"
    with pytest.raises(ValueError, match="not a device report"):
        overview.report_from_dict({"gpus": []})


def test_fleet_check_finds_planted_faults(h200_record, tmp_path):
    fleet = {f"n{i}": copy.deepcopy(h200_record) for i in range(3)}
    assert overview.fleet_check(fleet) == []
    fleet["n1"]["driver_version"] = "1.0"
    fleet["n2"]["gpus"][0]["pcie_width"] = 8
    problems = overview.fleet_check(fleet)
    assert len(problems) == 2 and "n1" in problems[0] and "x8" in problems[1]
    with pytest.raises(ValueError, match="≥ 2 nodes"):
        overview.fleet_check({"only": h200_record})
    for node, rep in fleet.items():                 # `device --out` documents, each in its node's folder
        (tmp_path / node).mkdir()
        (tmp_path / node / "report.json").write_text(json.dumps({"provenance": {"host": node}, "records": [rep]}))
    assert overview.main(["fleet", *map(str, sorted(tmp_path.glob("*/report.json")))]) == 1   # keyed by host
    (tmp_path / "twin.json").write_text(json.dumps({"provenance": {"host": "n0"}, "records": [fleet["n0"]]}))
    with pytest.raises(ValueError, match="both reports of host 'n0'"):
        overview.main(["fleet", str(tmp_path / "n0" / "report.json"), str(tmp_path / "twin.json")])
    (tmp_path / "plain.json").write_text(json.dumps(fleet["n0"]))     # `device --json`: names no host
    with pytest.raises(ValueError, match="does not name its host"):
        overview.main(["fleet", str(tmp_path / "plain.json"), str(tmp_path / "n1" / "report.json")])


def test_speedups_and_limits():
    recs = measurements.load("h200/backends")["records"]
    t = overview.speedups(recs)
    base = t[t.engine == "torch-cpu"]["speedup_vs_torch-cpu"]
    assert (base == 1.0).all() and (t[t.engine == "torch-cuda"]["speedup_vs_torch-cpu"] > 1).all()
    with pytest.raises(ValueError, match="baseline engine"):
        overview.speedups(recs, baseline="tpu")
    lim = overview.limits_table(recs, specs.lookup("H200")).set_index("work")
    assert 0 < lim.loc["matmul", "share of limit"] <= 1 and 0 < lim.loc["elementwise", "share of limit"] <= 1


def test_kernel_table_bounds():
    roof = roofline.from_spec(specs.lookup("H200"), dtypes=("fp32",))
    t = overview.kernel_table(roof, [roofline.gemm_kernel(8192, 8192, 8192, "fp32"),
                                     roofline.elementwise_kernel("axpb", 2**20, 2, 2, "fp32")])
    assert list(t.bound) == ["compute", "memory"]


def test_sizing_matches_formula():
    (r,) = overview.size_jobs({"70B": 70e9}, [2e12], ["H200 SXM"], mfu=0.4, days=30)
    expected = 6 * 70e9 * 2e12 / (30 * 86400 * 989.4e12 * 0.4)
    assert r.gpus_needed == pytest.approx(expected) and r.gpus_whole_nodes % 8 == 0
    assert r.gpus_whole_nodes >= r.gpus_needed > r.gpus_whole_nodes - 8
    with pytest.raises(ValueError, match="no BF16 peak"), pytest.warns(UserWarning):
        overview.size_jobs({"x": 1e9}, [1e12], ["Mystery GPU"])
    fig = overview.sizing_figure(7e9, 1e12, ["H200 SXM", "A100"])
    assert len(fig.data) == 2


def test_recorded_missing_prints_note(capsys):
    assert overview.recorded("h200/does-not-exist") is None
    assert "no recorded measurement" in capsys.readouterr().out


# ---------------------------------------------------------------- clustermap (chapter 01)

def test_history_has_sources_and_figure():
    ms = clustermap.history()
    assert ms == sorted(ms, key=lambda m: (m.year, m.kind)) and all(m.source.startswith("https://") for m in ms)
    assert len(clustermap.timeline_figure().data) == 4


def test_cluster_graph_counts():
    g = clustermap.cluster_graph(n_gpu_nodes=4, rails=2, spines=2, storage_servers=2)
    s = clustermap.network_summary(g).set_index("network")
    assert s.loc["compute", "links"] == 4 * 2 + 2 * 2
    assert s.loc["out-of-band", "links"] == 4 + 2 + 2          # GPU nodes, storage servers, login + head
    with pytest.raises(ValueError, match="n_gpu_nodes=0"):
        clustermap.cluster_graph(n_gpu_nodes=0)
    assert len(clustermap.cluster_figure(g).data) == len(clustermap.NETWORKS) + 4


# ---------------------------------------------------------------- hardware (chapter 02)

def test_derived_peaks_match_datasheets():
    a = hardware.derive_peaks(hardware.SM_DESIGNS["A100 SXM4 80GB"])
    assert a.fp32_tflops_derived == pytest.approx(19.5, rel=0.01)
    assert a.fp16_tflops_derived == pytest.approx(312, rel=0.01)
    h = hardware.derive_peaks(hardware.SM_DESIGNS["H200 SXM"], clock_MHz=1980)
    assert h.fp32_tflops_derived == pytest.approx(67, rel=0.01)
    assert h.fp16_datasheet_clock_MHz == pytest.approx(1830, abs=1)
    with pytest.raises(ValueError, match="clock_MHz"):
        hardware.derive_peaks(hardware.SM_DESIGNS["H200 SXM"])


def test_hbm_from_clock_and_checkpoint():
    assert hardware.hbm_GBps_from_clock(3201, 6016) == pytest.approx(4814, abs=1)   # REFERENCE_NUMBERS §3
    with pytest.raises(ValueError):
        hardware.hbm_GBps_from_clock(0, 6016)
    assert hardware.checkpoint_bytes(1e9) == 14e9


def test_price_table():
    t = hardware.price_table({"H200": 2.0, "A100": 1.0})
    assert t.loc["H200 SXM", "USD_per_bf16_TFLOPs"] == pytest.approx(2.0 / 989.4)
    assert hardware.price_table({"A100": 1.0}, "fp8").loc["A100 SXM4 80GB", "USD_per_fp8_TFLOPs"] is None
    with pytest.raises(ValueError, match="positive"):
        hardware.price_table({"H200": 0})
    with pytest.raises(ValueError, match="not in the spec table"), pytest.warns(UserWarning):
        hardware.price_table({"Mystery": 1.0})
    assert len(hardware.spec_figure().data) > 1


def test_transfer_figure_with_recording():
    recs = measurements.load("h200/transfer")["records"]
    fig = hardware.transfer_figure(None, recs, specs.pcie_GBps(5, 16))
    assert len(fig.data) == 4                                 # h2d/d2h × pinned/pageable


# ---------------------------------------------------------------- nodewiring (chapter 02)

def test_bisection_of_the_two_server_designs():
    nv, pcie = nodewiring.node_graph("nvswitch"), nodewiring.node_graph("pcie-switch")
    assert nodewiring.bisection_GBps(nv) == pytest.approx(1200)
    assert nodewiring.bisection_GBps(pcie) == pytest.approx(2 * specs.pcie_GBps(4, 16))
    assert nodewiring.bisection_GBps(nodewiring.node_graph("pcie-switch", inter_socket_GBps=40)) == pytest.approx(40)
    pair = nodewiring.pair_bandwidth(nv)
    assert pair.loc["GPU0", "GPU7"] == pytest.approx(300) and pair.shape == (8, 8)
    with pytest.raises(ValueError, match="design="):
        nodewiring.node_graph("mesh")
    assert len(nodewiring.node_figure(nv).data) > 3


def test_fat_tree_boundaries():
    two = nodewiring.fat_tree(2048, 64)
    assert (two.levels, two.leaf_switches, two.spine_switches) == (2, 64, 32)
    three = nodewiring.fat_tree(2049, 64)
    assert three.levels == 3 and three.max_endpoints == 64**3 // 4
    full = nodewiring.fat_tree(64**3 // 4, 64)
    assert (full.leaf_switches, full.spine_switches, full.core_switches) == (2048, 2048, 1024)   # k³/4 fat-tree
    with pytest.raises(ValueError, match="exceed"):
        nodewiring.fat_tree(64**3 // 4 + 1, 64)
    with pytest.raises(ValueError, match="radix"):
        nodewiring.fat_tree(100, 7)


def test_nic_table_and_heatmap():
    t = nodewiring.nic_table(topology.sample("dgx-h100"))
    assert list(t["path"].unique()) == ["PXB"] and t.set_index("gpu").loc["GPU5", "NIC device"] == "mlx5_9"
    assert nodewiring.nic_table(topology.sample("h200-1gpu")).empty
    fig = nodewiring.topology_heatmap(topology.sample("dgx-h100"))
    assert len(fig.data[0].z) == 20
    one = nodewiring.topology_heatmap(topology.sample("h200-1gpu"))      # what the H200 machine's live cell draws
    assert [list(r) for r in one.data[0].z] == [[0]]
