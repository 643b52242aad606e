import json
import warnings

import pytest

from helpers.core import measurements, results, specs, timing, topology
from helpers.compute import transfer


def test_spec_rows_have_sources_and_sane_numbers():
    for s in specs.all_specs():
        assert s.source.startswith("https://")
        assert s.memory_GB > 0 and s.hbm_GBps > 0 and s.tdp_W > 0
        if s.bf16_tflops and s.fp32_tflops:
            assert s.bf16_tflops > s.fp32_tflops


def test_h200_lookup_and_ridge():
    h = specs.lookup("NVIDIA H200")
    assert h.name == "H200 SXM" and h.memory_GB == 141
    assert h.ridge_flop_per_byte("bf16") == pytest.approx(206, abs=1)   # REFERENCE_NUMBERS §5
    assert specs.lookup("NVIDIA H100 80GB HBM3").ridge_flop_per_byte("bf16") == pytest.approx(295, abs=1)


def test_unknown_gpu_is_unknown_with_warning():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert specs.lookup("NVIDIA H100 NVL") is None
    assert any("not in the spec table" in str(x.message) for x in w)


def test_pcie_bandwidth():
    assert specs.pcie_GBps(5, 16) == pytest.approx(63.0, abs=0.1)
    assert specs.pcie_GBps(4, 16) == pytest.approx(31.5, abs=0.1)
    with pytest.raises(ValueError):
        specs.pcie_GBps(9)


def test_timing_cpu():
    t = timing.time_fn(lambda: sum(range(1000)), warmup=1, repeats=5)
    assert t.clock == "perf_counter" and t.repeats == 5 and 0 < t.min_s <= t.median_s <= t.max_s
    with pytest.raises(ValueError):
        timing.time_fn(lambda: None, repeats=0)


def test_cuda_graph_replays_what_it_captured():
    """timing.cuda_graph (used by compute.membw and kernels.gpulaunch): on a GPU the replay recomputes the captured
    calls into the graph's output; without CUDA capture fails loudly (callers fall back and say so)."""
    import torch

    with pytest.raises(ValueError, match="inner=0"):
        timing.cuda_graph(lambda: None, inner=0)
    if not torch.cuda.is_available():
        with pytest.raises((RuntimeError, AssertionError)):
            timing.cuda_graph(lambda: None)
        return
    x = torch.ones(1024, device="cuda")
    calls = []
    replay, out = timing.cuda_graph(lambda: calls.append(1) or x * 2 + 1, inner=3, warmup=2)
    assert len(calls) == 2 + 3                            # warm-up calls, then the captured ones (traced once each)
    x.fill_(4)
    replay()
    torch.cuda.synchronize()
    assert torch.equal(out, torch.full_like(x, 9))        # the replay read the new x


def test_topology_sample_and_nearest_nic():
    s = topology.sample("dgx-h100")
    assert s.gpus == tuple(f"GPU{i}" for i in range(8))
    assert topology.nearest_nic(s, "GPU0") == ("NIC0", "PXB")
    assert s.numa_affinity[:8] == ("0",) * 4 + ("1",) * 4
    assert topology.nvlinks(s.link("GPU0", "GPU7")) == 18
    with pytest.raises(FileNotFoundError, match="known samples"):
        topology.sample("nope")


def test_topology_rejects_truncated_matrix():
    text = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-7\n"
    with pytest.raises(ValueError, match="matrix"):
        topology.parse_topo_matrix(text)
    assert topology.parse_topo_matrix("no matrix here") is None


def test_results_document_roundtrip(tmp_path):
    recs = transfer.measure([2**16], repeats=2)
    doc = results.document(recs, "transfer")
    assert doc["provenance"]["torch"] and doc["records"][0]["size_bytes"] == 2**16
    (tmp_path / "x").mkdir()
    path = results.save(doc, tmp_path / "x" / "t.json")
    assert json.loads(path.read_text())["kind"] == "transfer"
    assert list(tmp_path.rglob("*.tmp")) == []


def test_parse_size():
    assert transfer.parse_size("64MiB") == 64 * 2**20 and transfer.parse_size("4096") == 4096
    with pytest.raises(ValueError, match="64MiB"):
        transfer.parse_size("lots")


def test_recorded_measurements_have_provenance():
    for name in measurements.available():
        doc = measurements.load(name)
        for key in ("device", "date_utc", "command", "torch"):
            assert doc["provenance"].get(key), (name, key)
        assert measurements.label(doc)
    with pytest.raises(FileNotFoundError, match="recorded"):
        measurements.load("nowhere/nothing")


def test_topology_with_ansi_header_single_gpu():
    s = topology.sample("h200-1gpu")   # as printed on the H200 machine, header underlined with ANSI codes
    assert s.devices == ("GPU0",) and s.cpu_affinity == ("0-15",) and topology.gpu_link_counts(s) == {}
