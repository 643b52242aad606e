"""helpers.figures.gpuprops (chapter 02): what a GPU reports about itself, and the memory hierarchy built from it."""
import json
import sys
from types import SimpleNamespace

from helpers.figures import gpuprops


def test_gpu_properties_on_cpu_and_with_a_fake_gpu(monkeypatch, tmp_path):
    import torch

    if not torch.cuda.is_available():
        recs, why = gpuprops.gpu_properties()
        assert recs == [] and "no CUDA GPU" in why
        assert gpuprops.main(["--out", str(tmp_path / "p.json")]) == 0
        assert json.loads((tmp_path / "p.json").read_text())["records"] == []
    props = SimpleNamespace(name="NVIDIA H200", multi_processor_count=132, warp_size=32,
                            max_threads_per_multi_processor=2048, shared_memory_per_multiprocessor=233472,
                            L2_cache_size=0, memory_bus_width=6016, memory_clock_rate=3201000, total_memory=150 * 2**30)
    monkeypatch.setitem(sys.modules, "cupy", None)           # no cupy: only the fake torch answers, even on a GPU box
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: props)
    (p,), why = gpuprops.gpu_properties()
    assert why is None and p.sm_count == 132 and p.memory_bus_width_bits == 6016 and p.memory_clock_MHz == 3201
    assert p.l2_cache_bytes is None                          # 0 means "not reported", never a real size
    assert p.sources == ("torch",)


def test_memory_hierarchy_prefers_reported_values():
    rec = {"sm_count": 132, "regs_per_sm": 65536, "shared_mem_per_sm_bytes": 233472, "l2_cache_bytes": 62914560,
           "total_memory_bytes": 150109880320, "props_source": "recorded"}
    rows = {r.level: r for r in gpuprops.memory_hierarchy(rec)}
    assert rows["L2 cache"].capacity_bytes == 62914560 and rows["L2 cache"].source == "recorded"
    assert rows["registers (32-bit × regs)"].gpu_total_bytes == 65536 * 4 * 132
    assert rows["shared memory, one block (opt-in)"].source.startswith("Hopper whitepaper")
    bare = {r.level: r for r in gpuprops.memory_hierarchy(None)}
    assert all(r.source.startswith("Hopper whitepaper") for r in bare.values()) and "HBM" not in bare
