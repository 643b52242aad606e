"""dcgmi diag, nvidia-smi nvlink --status and the DCGM exporter's text, read on real outputs (tests/data/real)."""
from pathlib import Path

import pytest

from helpers.ops import dcgmread

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def _diag(name):
    return dcgmread.parse_dcgmi_diag((REAL / "dcgmi-diag" / name).read_text())


def test_diag_pass_new_layout():
    r = _diag("dcgm-124-r2-pass-4.4.2.txt")
    assert (r.dcgm_version, r.driver_version, r.complete) == ("4.4.2", "580.105.08", True)
    assert [(t.category, t.test, t.result, t.gpu_results) for t in r.tests] == [
        ("Deployment", "software", "Pass", (("GPU0", "Pass"),)), ("Hardware", "memory", "Pass", (("GPU0", "Pass"),)),
        ("Integration", "pcie", "Pass", (("GPU0", "Pass"),))]


def test_diag_fail_with_warnings_and_cut_off():
    r = _diag("dcgm-253-pcie-fail-4.2.3-cut.txt")
    assert r.dcgm_version == "4.2.3" and not r.complete
    pcie = r.tests[-1]
    assert (pcie.test, pcie.result, len(pcie.warnings), len(pcie.gpu_results)) == ("pcie", "Fail", 4, 4)
    assert "child process (152)" in pcie.warnings[0]


def test_diag_b200_eight_gpus():
    r = _diag("dcgm-253-b200-pcie-fail-4.4.1.txt")
    assert r.complete and [t.result for t in r.tests] == ["Pass", "Pass", "Fail"]
    assert len(r.tests[0].gpu_results) == 8 and len(r.tests[2].warnings) == 1
    assert r.tests[2].warnings[0].endswith("Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun "
                                           "diagnostics.")                  # re-joined across DCGM's 45-column wrap


def test_diag_old_layout_cut_off():
    r = _diag("go-dcgm-52-3.3.1-old-layout.txt")
    assert r.dcgm_version == "3.3.1" and not r.complete
    assert len(r.tests) == 7 and {t.result for t in r.tests} == {"Pass"} and r.tests[0].test == "Denylist"


def test_diag_rejects_other_text():
    with pytest.raises(ValueError, match="dcgmi diag"):
        dcgmread.parse_dcgmi_diag("hello\n")


def test_nvlink_inactive_links():
    links = dcgmread.parse_nvlink_status((REAL / "nvlink-status" / "azhpc-diagnostics-73-v100-inactive.txt").read_text())
    assert len(links) == 6 and {lk.gpu for lk in links} == {"GPU 3: Tesla V100-SXM2-32GB"}
    assert [lk.link for lk in links if lk.speed_GBps is None] == [3, 5]
    assert links[0].speed_GBps == pytest.approx(25.781)


def test_exporter_mig_series_do_not_overwrite():
    s = dcgmread.parse_prometheus((REAL / "dcgm-exporter" / "dcgm-exporter-317-a30-mig.txt").read_text())
    assert len(s) == 6 == len(dcgmread.series(s))          # series differ only in GPU_I_ID: six, not two
    assert {x.label("GPU_I_ID") for x in s} == {"3", "4", "5", "6"} and {x.type for x in s} == {"gauge"}
    assert s[0].label("Hostname") == "yg-data-k8s-gpu-a30-node-test-test0003.mt" and all(x.value == 0 for x in s)


def test_exporter_nvlink_and_names_as_printed():
    s = dcgmread.parse_prometheus((REAL / "dcgm-exporter" / "dcgm-149-a100-nvlink-tx.txt").read_text())
    assert len(s) == 4 and {x.name for x in s} == {"DCGM_FI_PROF_NVLINK_TX_BYTES"}
    assert {x.label("modelName") for x in s} == {"NVIDIA A100-SXM4-40GB"}
    x = dcgmread.parse_prometheus((REAL / "dcgm-exporter" / "dcgm-exporter-239-xid-active.txt").read_text())
    assert len(x) == 1 and x[0].name == "DCGM_FI_DEV_XID_ERRORS_ACTIVE" and x[0].type == "untyped"
    assert (x[0].label("xid"), x[0].label("DCGM_FI_DRIVER_VERSION"), x[0].value) == ("42", "545.29.02", 1.0)


def test_prometheus_counter_keeps_its_name():
    text = "# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter\nDCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\",a=\"x\\\"y\"} 7\n"
    (s,) = dcgmread.parse_prometheus(text)
    assert (s.name, s.type, s.value, s.label("a")) == ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", 7.0, 'x"y')
    with pytest.raises(ValueError, match="line 1"):
        dcgmread.parse_prometheus("not a sample at all {\n")


def test_exporter_v100_sm_clock():
    s = dcgmread.parse_prometheus((REAL / "dcgm-exporter" / "dcgm-exporter-250-v100-sm-clock.txt").read_text())
    assert [(x.label("gpu"), x.value, x.type) for x in s] == [("0", 135.0, "gauge"), ("1", 135.0, "gauge")]
    assert {x.label("Hostname") for x in s} == {"r6i3n0"}


def test_nvlink_tab_indented_a100():
    links = dcgmread.parse_nvlink_status((REAL / "nvlink-status" / "nccl-tests-228-a100-tabs.txt").read_text())
    assert len(links) == 24 and len({lk.gpu for lk in links}) == 2 and {lk.speed_GBps for lk in links} == {25.0}


def test_prometheus_values_are_ascii_numbers():
    """Issue 35: float() takes '٧٩' and '1_0'; a scrape's value must be an ASCII number (or NaN/±Inf)."""
    for bad in ("\u0667\u0669", "1_0", "abc"):
        with pytest.raises(ValueError, match="line 1: value .* is not a number"):
            dcgmread.parse_prometheus(f'DCGM_FI_DEV_XID_ERRORS{{gpu="0"}} {bad}\n')
    assert dcgmread.parse_prometheus('x{gpu="0"} 79\n')[0].value == 79.0
