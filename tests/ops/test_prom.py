"""The exporter and a real Prometheus: scrape, PromQL, alert rules fired by fault injection; nothing left running."""
import json
import subprocess
import urllib.request
from pathlib import Path

import pytest

from helpers.ops import exporter, promserver

DATA = Path(promserver.__file__).parent / "data"


def alive(name: str) -> list[str]:
    """Non-zombie processes whose command is exactly ``name`` (defunct entries are already dead)."""
    out = subprocess.run(["ps", "-eo", "stat=,comm="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.split()[-1] == name and not line.strip().startswith("Z")]


def test_text_format_round_trip_with_faults():
    ex = exporter.Exporter(simulated_gpus=2)
    ex.inject(gpu=1, xid=79, ecc_dbe=3, throttle="hw_thermal_slowdown")
    vals = exporter.parse_text(ex.text())
    assert vals[("DCGM_FI_DEV_XID_ERRORS", "1")] == 79 and vals[("DCGM_FI_DEV_XID_ERRORS", "0")] == 0
    assert vals[("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "1")] == 3
    assert exporter.decode_throttle(int(vals[("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "1")])) == ["hw_thermal_slowdown"]
    assert any(k[0] == "node_memory_MemTotal_bytes" for k in vals)
    with pytest.raises(ValueError, match="throttle"):
        ex.inject(throttle="too_hot")


def test_every_field_of_the_mapping_table_is_exposed():
    names = {f["dcgm"] for f in exporter.FIELDS}
    exposed = {k[0] for k in exporter.parse_text(exporter.Exporter(simulated_gpus=1).text())}
    assert names <= exposed


def test_serve_stops_listening():
    ex = exporter.Exporter(simulated_gpus=1)
    with ex.serve() as url:
        assert b"DCGM_FI_DEV_GPU_TEMP" in urllib.request.urlopen(url, timeout=5).read()
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)


@pytest.mark.skipif(promserver.find("promtool") is None, reason="promtool not installed (Debian prometheus)")
def test_promtool_check_and_unit_tests():
    for name, rc, out in promserver.check_rules():
        assert rc == 0, (name, out)


@pytest.mark.skipif(promserver.find() is None, reason="prometheus not installed (Debian prometheus)")
def test_live_prometheus_scrapes_queries_and_fires_an_alert():
    ex = exporter.Exporter(simulated_gpus=1)
    with ex.serve() as url, promserver.running([url]) as prom:
        pid = prom.proc.pid
        prom.wait_for_targets()
        r = prom.query('DCGM_FI_DEV_GPU_TEMP{modelName="simulated (no GPU)"}')
        assert len(r) == 1 and float(r[0]["value"][1]) == 30.0
        assert prom.query("count(up == 1)")[0]["value"][1] == "1"
        with pytest.raises(ValueError, match="PromQL"):
            prom.query("sum(")
        dash = json.loads((DATA / "grafana_gpu_dashboard.json").read_text())
        for panel in dash["panels"]:                  # every dashboard expression is valid PromQL
            prom.query(panel["targets"][0]["expr"])
        ex.inject(gpu=0, xid=79)
        alert = prom.wait_for_alert("GPUFellOffBus")
        assert alert["labels"]["action"] == "drain_rma" and alert["labels"]["gpu"] == "0"
    assert prom.proc.poll() is not None
    with pytest.raises(ProcessLookupError):
        import os
        os.kill(pid, 0)
    assert not alive("prometheus")


def test_config_rejects_bad_targets():
    with pytest.raises(ValueError, match="targets"):
        promserver.config(["not a url"])


def test_a_hung_promtool_is_killed_at_the_stated_timeout(tmp_path, monkeypatch, capsys):
    """A promtool that never returns (and starts a sleeper of its own): `prom check` ends at PROMTOOL_TIMEOUT_S with
    one stderr line naming the limit, and neither the fake nor its child is left running (issue 35)."""
    import os
    import time

    from helpers.core import cli

    fake = tmp_path / "promtool"
    fake.write_text(f"#!/bin/sh\nsleep 600 &\necho $! > {tmp_path}/child\nsleep 600\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.delenv("BOOK_PROGRAM_TIMEOUT_S", raising=False)
    monkeypatch.setattr(promserver, "PROMTOOL_TIMEOUT_S", 1.0)
    t0 = time.monotonic()
    assert cli.run(promserver.main, ["check"]) == 1               # a helper program that hung: exit 1, as every tool
    assert time.monotonic() - t0 < 10
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "promtool did not finish within 1 s and was killed" in err
    child = int((tmp_path / "child").read_text())

    def running() -> bool:                      # a zombie or a vanished pid is gone
        try:
            return Path(f"/proc/{child}/stat").read_text().split()[2] != "Z"
        except OSError:
            return False
    deadline = time.monotonic() + 5
    while running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(), "promtool's child outlived the killed promtool"
