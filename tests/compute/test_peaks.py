"""helpers.compute.peaks: device names, datasheet peaks and the CPU's cache size (no hardware needed)."""
import pytest
import torch

from helpers.compute import peaks


def test_peak_lookup():
    p, note = peaks.peak("NVIDIA H200", "bf16")
    assert p == pytest.approx(989.4) and "H200" in note
    p, note = peaks.peak("NVIDIA Mystery", "bf16")
    assert p is None and "not in" in note
    assert peaks.peak("NVIDIA H200", "", what="hbm_GBps")[0] == 4800


def test_a_cpu_has_a_name_and_no_peak():
    name = peaks.device_name(torch.device("cpu"))
    assert name.startswith("CPU: ")
    p, note = peaks.peak(name, "fp32")
    assert p is None and "no datasheet peak" in note


def test_llc_bytes_is_a_cache_size():
    assert 2**10 <= peaks.llc_bytes() <= 2**34
