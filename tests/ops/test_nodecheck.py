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
           "ipmitool-sel": "ipmitool-sel", "squeue": "squeue", "sshare": "sshare"}


@pytest.mark.parametrize("fmt,folder", sorted(FOLDERS.items()))
def test_every_real_file_is_detected_by_content(fmt, folder):
    files = sorted(f for f in (REAL / folder).iterdir() if f.name != "SOURCES.md")
    assert files and [nodecheck.detect(f.read_text(errors="replace")) for f in files] == [fmt] * len(files)


def test_redfish_detected():
    assert nodecheck.detect((REAL / "redfish" / "dmtf-mockup-rackmount1-thermal.json").read_text()) == "redfish-thermal"
    assert nodecheck.detect('{"PowerSupplies": []}') == "redfish-power" and nodecheck.detect("hello") is None
    assert _verdicts("redfish") == {"PSUs": "degraded", "BMC sensors": "healthy", "GPUs": "healthy", "fans": "healthy"}


def _verdicts(*folders):
    return nodecheck.verdicts([f for p in nodecheck.expand([str(REAL / d) for d in folders])
                               for f in nodecheck.read_path(p)])


def test_verdict_per_component():
    v = _verdicts("dcgmi-diag", "nvlink-status", "sinfo", "scontrol-node", "lspci", "kubectl-describe-node")
    assert v == {"GPUs": "failed", "NVLink": "degraded", "Slurm node": "failed", "PCIe": "degraded",
                 "K8s node": "failed"}


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
    assert v == {"BMC sensors": "degraded", "fans": "healthy", "PSUs": "degraded"}   # Board_Temp lnc; Redundancy Lost
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
