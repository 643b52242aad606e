"""NVLink and GPU-inventory views read on real outputs: nvidia-smi nvlink -e and --status (the B200 whose NVML
reports every link inactive), dcgmi nvlink -s, dcgmi discovery -l (tests/data/real/*/SOURCES.md)."""
from pathlib import Path

import pytest

from helpers.ops import dcgmread, nodecheck, nvlinkread

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def _findings(folder):
    return [x for f in nodecheck.expand([str(REAL / folder)]) for x in nodecheck.read_path(f)]


def test_nvlink_error_counters_h100_elided_and_gb300():
    h = nvlinkread.parse_nvlink_errors((REAL / "nvlink-errors" / "ml-engineering-h100-elided.txt").read_text())
    assert h.elided and {c[1] for c in h.counters} == {0, 1, 17} and len(h.counters) == 9
    assert {c[2] for c in h.counters} == {"Replay Errors", "Recovery Errors", "CRC Errors"} and not h.nonzero()
    assert h.counters[0][0] == "GPU 0: NVIDIA H100 80GB HBM3"
    g = nvlinkread.parse_nvlink_errors((REAL / "nvlink-errors" / "srt-slurm-307-gb300-excerpt.txt").read_text())
    assert g.counters == (("GPU 0: NVIDIA GB300", 0, "Replay Errors", 0), ("GPU 0: NVIDIA GB300", 0,
                          "Recovery Errors", 0), ("GPU 0: NVIDIA GB300", 0, "CRC Errors", 0)) and not g.elided
    assert {x.status for x in _findings("nvlink-errors") if "V100" not in x.item} == {"healthy"}


def test_nvlink_error_counters_v100_nonzero_real():
    e = nvlinkread.parse_nvlink_errors((REAL / "nvlink-errors" / "scuffedsquared-v100-crc-65535.txt").read_text())
    assert len(e.counters) == 36 and not e.elided             # 2 GPUs x 6 links x 3 counters, blank lines between
    assert e.nonzero() == (("GPU 0: Tesla V100-SXM2-32GB-LS", 3, "Replay Errors", 211),
                           ("GPU 2: Tesla V100-SXM2-32GB-LS", 0, "Replay Errors", 2),
                           ("GPU 2: Tesla V100-SXM2-32GB-LS", 0, "CRC Errors", 65535))
    f = nodecheck.read_path(REAL / "nvlink-errors" / "scuffedsquared-v100-crc-65535.txt")
    assert [(x.item, x.status) for x in f] == [("GPU 0: Tesla V100-SXM2-32GB-LS", "degraded"),
                                               ("GPU 2: Tesla V100-SXM2-32GB-LS", "degraded")]
    assert "CRC Errors 65535" in f[1].why


def test_nonzero_counter_is_degraded():
    text = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 3: Replay Errors: 142\n\t Link 3: CRC Errors: 0\n"
    assert nvlinkread.parse_nvlink_errors(text).nonzero() == (("GPU 0: NVIDIA H100 80GB HBM3", 3, "Replay Errors",
                                                               142),)


def test_nvlink_status_new_variants():
    (b,) = dcgmread.parse_nvlink_status((REAL / "nvlink-status" / "gpud-1085-b200-all-links-inactive.txt").read_text())
    assert (b.gpu, b.link, b.speed_GBps) == ("GPU 2: NVIDIA B200", -1, None)
    gb = dcgmread.parse_nvlink_status((REAL / "nvlink-status" / "k8s-test-infra-371-gb200-gpu0.txt").read_text())
    assert len(gb) == 18 and {lk.speed_GBps for lk in gb} == {53.125}
    h = dcgmread.parse_nvlink_status((REAL / "nvlink-status" / "ml-engineering-h100-elided.txt").read_text())
    assert [(lk.link, lk.speed_GBps) for lk in h] == [(0, 26.562), (17, 26.562)]      # "[...]" between them
    f = {x.item: x for x in _findings("nvlink-status")}
    assert f["GPU 2: NVIDIA B200"].status == "failed" and "all links inactive" in f["GPU 2: NVIDIA B200"].why
    assert f["GPU 0: NVIDIA H100 80GB HBM3"].status == "healthy" and "elides" in f["GPU 0: NVIDIA H100 80GB HBM3"].why


def test_dcgmi_nvlink_down_and_up():
    d = nvlinkread.parse_dcgmi_nvlink((REAL / "dcgmi-nvlink" / "dcgm-198-two-gpus-all-down.txt").read_text())
    assert [e for e, _ in d.entities] == ["gpuId 0", "gpuId 1"] and not d.switches_found
    assert d.down() == {"gpuId 0": list(range(18)), "gpuId 1": list(range(18))}
    u = nvlinkread.parse_dcgmi_nvlink((REAL / "dcgmi-nvlink" / "dcgm-exporter-576-h100-eight-gpus-up.txt").read_text())
    assert len(u.entities) == 8 and all(st == ("U",) * 18 for _, st in u.entities) and u.down() == {}
    assert nodecheck.verdicts(_findings("dcgmi-nvlink")) == {"NVLink": "failed"}


def test_dcgmi_discovery_null_names_and_elided_table():
    d = nvlinkread.parse_dcgmi_discovery((REAL / "dcgmi-discovery" / "dcgm-229-h100-name-null-excerpt.txt").read_text())
    assert (d.found, d.active_only, d.complete) == (4, False, False)
    assert [g[0] for g in d.gpus] == [0, 1, 2] and len(d.unnamed()) == 3
    assert d.gpus[1][2:] == ("00000000:5D:00.0", "GPU-75c4ee16-a840-6f6c-9a7b-5ed8f41598b8")
    k = nvlinkread.parse_dcgmi_discovery(
        (REAL / "dcgmi-discovery" / "kempnerpulse-15-h100-eight-gpus-excerpt.txt").read_text())
    assert (k.found, k.active_only, k.gpus) == (8, True, ((0, "NVIDIA H100 80GB HBM3", "00000000:19:00.0", "GPU-..."),))
    f = _findings("dcgmi-discovery")
    assert {x.status for x in f if "dcgm-229" in x.source} == {"degraded"}
    assert {x.status for x in f if "kempnerpulse" in x.source} == {"healthy"}      # elided, not missing


def test_refusals_name_the_format():
    for fn, msg in ((nvlinkread.parse_nvlink_errors, "nvlink -e"), (nvlinkread.parse_dcgmi_nvlink, "dcgmi nvlink"),
                    (nvlinkread.parse_dcgmi_discovery, "dcgmi discovery")):
        with pytest.raises(ValueError, match=msg):
            fn("hello\n")
