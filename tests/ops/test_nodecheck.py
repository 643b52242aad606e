"""python -m helpers nodecheck: format detection, per-component verdicts and exit codes on real outputs; plus the
reader fixes it relies on (ipmitool hex readings, ISO-8601 Xid stamps, <unknown> process, Idle throttle reason)."""
import json
from pathlib import Path

import pytest

from helpers.ops import bmc, logs, nodecheck, noderules

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
FOLDERS = {"dcgmi-diag": "dcgmi-diag", "nvlink-status": "nvlink-status", "sinfo": "sinfo",
           "scontrol-node": "scontrol-node", "dcgm-exporter": "dcgm-exporter", "lspci": "lspci",
           "kubectl-describe-node": "kubectl-describe-node", "dmesg-xid": "dmesg-xid",
           "ipmitool-sensor": "ipmitool-sensor", "nvidia-smi-q": "nvidia-smi-q", "ipmitool-sdr": "ipmitool-sdr",
           "ipmitool-sel": "ipmitool-sel", "squeue": "squeue", "sshare": "sshare", "slurm-json": "slurm-json",
           "nvlink-errors": "nvlink-errors", "dcgmi-nvlink": "dcgmi-nvlink", "dcgmi-discovery": "dcgmi-discovery",
           "gfd-labels": "gfd-labels"}


@pytest.mark.parametrize("fmt,folder", sorted(FOLDERS.items()))
def test_every_real_file_is_detected_by_content(fmt, folder):
    files = sorted(f for f in (REAL / folder).iterdir() if f.name != "SOURCES.md")
    assert files and [nodecheck.detect(f.read_text(errors="replace")) for f in files] == [fmt] * len(files)


def test_redfish_detected():
    assert nodecheck.detect((REAL / "redfish" / "dmtf-mockup-rackmount1-thermal.json").read_text()) == "redfish-thermal"
    assert nodecheck.detect('{"PowerSupplies": []}') == "redfish-power" and nodecheck.detect("hello") is None
    # BMC sensors failed: the BlueField-3 BMC marks p0/p1 temp Health Critical (no reading). The Sensor/Fan/
    # PowerSupply files change nothing: libredfish-openbmc-nvidia-gb200-sensor-io-board0-cx7-0-port0-temp.json is
    # Health Critical too but State Absent (not a failure); ENERGY_GB_SXM6 is a counter above an UpperCritical
    assert _verdicts("redfish") == {"PSUs": "degraded", "BMC sensors": "failed", "GPUs": "healthy", "fans": "healthy"}


def _verdicts(*folders):
    return nodecheck.verdicts([f for p in nodecheck.expand([str(REAL / d) for d in folders])
                               for f in nodecheck.read_path(p)])


def test_verdict_per_component():
    v = _verdicts("dcgmi-diag", "nvlink-status", "sinfo", "scontrol-node", "lspci", "kubectl-describe-node")
    assert v == {"GPUs": "failed", "NVLink": "failed", "Slurm node": "failed", "PCIe": "degraded",
                 "K8s node": "failed"}                        # NVLink: the B200 whose NVML reports no active link


def test_named_items():
    f = nodecheck.read_path(REAL / "scontrol-node" / "unige-4287-rtx5090-drain.txt")
    assert [(x.component, x.item, x.status) for x in f] == [("Slurm node", "gpu010", "degraded")]
    assert "health_ps___blocked" in f[0].why
    f = nodecheck.read_path(REAL / "dcgmi-diag" / "go-dcgm-52-3.3.1-old-layout.txt")
    assert f[-1].status == "degraded" and "cut off" in f[-1].why
    f = nodecheck.read_path(REAL / "ipmitool-sensor" / "openbmc-3743-ok-above-threshold.txt")
    assert [(x.item, x.status) for x in f] == [("Ambient_Temp", "failed")]     # the BMC printed "ok"
    f = nodecheck.read_path(REAL / "dcgm-exporter" / "dcgm-exporter-317-a30-mig.txt")
    assert len(f) == 6 and {x.status for x in f} == {"healthy"} and "MIG 1g.6gb id 6" in f[3].item


def test_bmc_verdicts_from_sdr_and_sel():
    v = _verdicts("ipmitool-sdr", "ipmitool-sel")
    # BMC sensors: Uncorrectable ECC asserted (argon bx41-06); fans: a PSU fan went non-recoverable, then recovered;
    # PSUs: Redundancy Lost (sdr -v) and an AC loss the SEL later deasserted
    assert v == {"BMC sensors": "failed", "fans": "degraded", "PSUs": "degraded"}
    f = nodecheck.read_path(REAL / "ipmitool-sdr" / "home-assistant-ipmi-22-supermicro-list-full.txt")
    assert len(f) == 21                                                   # the 8 "ns" rows are absent, not failed


def test_bmc_hex_readings_and_na_rows():
    df = bmc.parse_ipmitool_sensor((REAL / "ipmitool-sensor" / "hpe-dl360p-pve-mods-93.txt").read_text())
    assert df.reading[0] == 1.0 and df.reading.isna()[1]          # "0x1" keeps its value; "na" is absent
    assert [x.item for x in noderules._bmc(df, "x")][:1] == ["UID Light"] and len(noderules._bmc(df, "x")) == 9
    sm = bmc.parse_ipmitool_sensor((REAL / "ipmitool-sensor" / "supermicro-ipmi-fancontrol-ng-1.txt").read_text())
    f = noderules._bmc(sm, "x")
    assert len(f) == len(sm) - 2 and all(x.status == "healthy" for x in f)   # 2 na rows: absent, not failed


def test_xid_iso_stamp_and_unknown_process():
    line = ("2024-05-02T10:11:12.123456+00:00 gpu7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
            "name=<unknown>, GPU has fallen off the bus.")
    ev = logs.xid_events(line)
    assert ev.time[0] == "2024-05-02T10:11:12.123456+00:00" and ev.process[0] is None and ev.xid[0] == 79


def test_smi_idle_stays_among_throttle_reasons():
    from helpers.core.smiparse import parse_query

    g = parse_query((REAL / "nvidia-smi-q" / "thamada-L40S.txt").read_text()).gpus[0]
    assert "Idle" in g.throttle_active


def test_cli_exit_codes(tmp_path, capsys):
    assert nodecheck.main([str(REAL / "lspci" / "lact-593-9070xt-full-link.txt")]) == 0
    assert "PCIe: healthy" in capsys.readouterr().out
    assert nodecheck.main([str(REAL / "sinfo"), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdicts"] == {"Slurm node": "failed"} or doc.get("meta", {}).get("verdicts") == {"Slurm node": "failed"}
    bad = tmp_path / "notes.txt"
    bad.write_text("nothing a node tool prints\n")
    assert nodecheck.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "notes.txt: unknown format" in err and "dcgmi-diag" in err
    assert nodecheck.main([str(tmp_path / "missing")]) == 2


def test_remaining_real_files_by_name():
    """The files the other tests read only as a folder, each against its SOURCES.md row."""
    from helpers.core.smiparse import parse_query

    df = bmc.parse_ipmitool_sensor((REAL / "ipmitool-sensor" / "home-assistant-ipmi-33-discrete-hex.txt").read_text())
    assert (df.unit == "discrete").sum() == 8 and (df.reading[df.unit == "discrete"] == 0).all()
    assert dict(zip(df.name, df.reading))["CPU0_Margin_Temp"] == 16 and \
        (dict(zip(df.name, df.reading))["PS1_Power"], dict(zip(df.name, df.reading))["PS2_Power"]) == (100, 110)
    for name, n, product in (("thamada-H100SXMx8.txt", 8, "NVIDIA H100 80GB HBM3"),
                             ("thamada-A100SXMx4.txt", 4, "NVIDIA A100-SXM4-80GB"),
                             ("thamada-H100NVLx2.txt", 2, "NVIDIA H100 NVL")):
        gpus = parse_query((REAL / "nvidia-smi-q" / name).read_text()).gpus
        assert len(gpus) == n and {g.name for g in gpus} == {product}
    rf = {f.split("rackmount1-")[1][:-5]: nodecheck.read_path(REAL / "redfish" / f)
          for f in ("dmtf-mockup-rackmount1-power.json", "dmtf-mockup-rackmount1-system.json",
                    "dmtf-mockup-rackmount1-processor-cpu1.json", "dmtf-mockup-rackmount1-processor-fpga1.json")}
    assert [(x.component, x.status, x.why) for x in rf["power"]] == [("PSUs", "degraded", "Health Warning, output 325 W")]
    assert [(x.item, x.status) for x in rf["system"]] == [("system web483", "healthy")]
    assert rf["processor-cpu1"][0].item.startswith("CPU CPU1") and rf["processor-cpu1"][0].status == "healthy"
    assert [(x.component, x.item, x.status) for x in rf["processor-fpga1"]] == [("GPUs", "FPGA FPGA1 Stratix 10",
                                                                                "healthy")]


def test_every_real_file_is_listed_in_sources_and_read_by_name():
    """Every real output of a nodecheck format is in its SOURCES.md and is opened by name in a test of tests/ops."""
    tests = "".join(p.read_text() for p in Path(__file__).parent.glob("test_*.py"))
    for folder in sorted(set(FOLDERS.values()) | {"redfish"}):
        sources = (REAL / folder / "SOURCES.md").read_text()
        for f in sorted((REAL / folder).iterdir()):
            if f.name != "SOURCES.md":
                assert f"`{f.name}`" in sources, f"{folder}/{f.name} is not in SOURCES.md"
                assert f.name in tests, f"{folder}/{f.name} is opened by no test in tests/ops by name"


def test_exporter_xid_in_look_alike_digits_is_refused():
    """Issue 35: an Xid label in Arabic-Indic digits was read as Xid 79 (a drain); it is refused, 79 still drains."""
    line = 'DCGM_EXP_XID_ERRORS_COUNT{{gpu="0",xid="{}"}} 1\n'
    (f,) = noderules._exporter(line.format("79"), "scrape")
    assert f.status == "failed" and "Xid 79" in f.why
    with pytest.raises(ValueError, match="not an integer"):
        noderules._exporter(line.format("\u0667\u0669"), "scrape")


def test_wrong_folder_is_refused_not_walked(tmp_path, monkeypatch, capsys):
    """Issue 35: `nodecheck /` walked the whole disk and ended in PermissionError (exit 1); '' meant the cwd."""
    from helpers.core import cli

    for i in range(4):
        (tmp_path / f"f{i}.txt").write_text("x\n")
    monkeypatch.setattr(nodecheck, "MAX_FILES", 3)
    assert cli.run(nodecheck.main, [str(tmp_path)]) == 2
    assert "more than 3 files" in capsys.readouterr().err
    assert cli.run(nodecheck.main, [""]) == 2
    assert "empty path" in capsys.readouterr().err
