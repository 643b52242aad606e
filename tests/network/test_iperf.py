"""helpers.network.iperf: the `iperf3 -J` parser on real outputs, bad input, and the localhost runner."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers.network import iperf

REAL = Path(__file__).parents[1] / "data" / "real" / "iperf3"


def load(name: str) -> iperf.Summary:
    return iperf.parse((REAL / name).read_text(encoding="utf-8"))


def test_sources_list_every_file():
    listed = (REAL / "SOURCES.md").read_text(encoding="utf-8")
    for f in REAL.glob("*.json"):
        assert f"`{f.name}`" in listed, f"{f.name} is not described in SOURCES.md"


def test_iperf_3_0_11_tcp():  # thiezn/iperf3-python tests/results.json
    s = load("iperf-3.0.11-tcp-iperf3python.json")
    assert (s.version, s.protocol, s.num_streams, s.reverse) == ("iperf 3.0.11", "TCP", 1, False)
    assert s.sent_bps == 935992000.0 and s.received_bps == 934268000.0
    assert s.retransmits == 0
    assert s.host_cpu_pct == pytest.approx(1.66812) and s.remote_cpu_pct == pytest.approx(4.15082)
    assert len(s.intervals) == 13 and s.jitter_ms is None and s.lost_percent is None


def test_iperf_3_1_3_udp_old_layout():  # end.sum only, loss in it
    s = load("iperf-3.1.3-udp-selfhealing.json")
    assert (s.version, s.protocol) == ("iperf 3.1.3", "UDP")
    assert s.sent_bps == pytest.approx(834711189.017002) and s.sent_bytes == 81920000
    assert s.received_bps is None and s.retransmits is None
    assert s.lost_percent == pytest.approx(0.690276) and s.jitter_ms == pytest.approx(0.092)
    assert s.host_cpu_pct == pytest.approx(17.76954)
    assert s.gbps == pytest.approx(0.834711189017002)   # falls back to the sender's rate
    assert [i.bytes for i in s.intervals] == [81920000]


def test_iperf_3_9_tcp_with_omit():
    s = load("iperf-3.9-tcp-gcp.json")
    assert s.version == "iperf 3.9" and s.duration_s == pytest.approx(10.00001)
    assert s.sent_bps == pytest.approx(361758358.24164176)
    assert s.received_bps == pytest.approx(361828847.70807552)
    assert s.retransmits == 0 and s.host_cpu_pct == pytest.approx(2.3079730140403569)
    omitted = [i.omitted for i in s.intervals]
    assert omitted[:2] == [True, True] and not any(omitted[2:])      # -O 3 warm-up intervals flagged
    assert s.intervals[0].retransmits == 0 and s.intervals[0].bytes == 20504448


def test_recorded_here_streams_and_udp():
    p1, p4 = load("recorded-here-iperf-3.12-tcp-P1.json"), load("recorded-here-iperf-3.12-tcp-P4.json")
    assert (p1.num_streams, p4.num_streams) == (1, 4) and p4.version == "iperf 3.12"
    for s in (p1, p4):
        assert s.received_bps > 0 and s.host_cpu_pct_per_gbps > 0 and s.retransmits is not None
    u = load("recorded-here-iperf-3.12-udp-1G.json")
    assert u.protocol == "UDP" and u.received_bps is not None and u.lost_percent is not None
    assert u.received_bytes <= u.sent_bytes
    r = iperf.row(p4)
    assert r.streams == 4 and r.received_Gbps == pytest.approx(p4.received_bps / 1e9)


@pytest.mark.parametrize("name, words", [
    ("recorded-here-iperf-3.12-refused.json", "reported an error: unable to connect"),
    ("recorded-here-iperf-3.12-truncated.json", "not complete JSON"),
])
def test_real_bad_outputs(name, words):
    with pytest.raises(ValueError, match=words):
        load(name)


@pytest.mark.parametrize("text, words", [
    ("", "empty"), ("[1, 2]", "must be an object"), ('{"start": {}, "end": {}}', "lacks start.test_start"),
    ('{"start": {"test_start": {"protocol": "TCP"}}, "end": {"streams": []}}', "none of sum_sent"),
])
def test_bad_input(text, words):
    with pytest.raises(ValueError, match=words):
        iperf.parse(text)


def test_client_command_validates():
    cmd = iperf.client_command("iperf3", 5999, streams=4, udp=True, bitrate="2G", reverse=True)
    assert cmd[:3] == ["iperf3", "-c", "127.0.0.1"] and "-J" in cmd and cmd[cmd.index("-P") + 1] == "4"
    assert cmd[cmd.index("-b") + 1] == "2G" and "-u" in cmd and "-R" in cmd
    with pytest.raises(ValueError, match="streams=0"):
        iperf.client_command("iperf3", 5999, streams=0)


def test_missing_iperf3_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(iperf.shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="apt-get install -y iperf3"):
        iperf.run_loopback()


def _iperf3_servers() -> list[str]:
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.startswith(("iperf3 -s", iperf.find_iperf3() or "\0"))]


@pytest.mark.skipif(iperf.find_iperf3() is None, reason="iperf3 is not installed (apt-get install -y iperf3)")
def test_run_loopback_tcp_and_udp_leaves_no_server():
    before = _iperf3_servers()
    s = iperf.run_loopback(streams=2, duration_s=1)
    assert s.protocol == "TCP" and s.num_streams == 2 and s.received_bps > 0
    u = iperf.run_loopback(udp=True, bitrate="100M")
    assert u.protocol == "UDP" and u.sent_bps > 0
    assert _iperf3_servers() == before


@pytest.mark.skipif(iperf.find_iperf3() is None, reason="iperf3 is not installed (apt-get install -y iperf3)")
def test_cli_parse_and_bad_file(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "helpers", "iperf", "--parse",
                         str(REAL / "iperf-3.9-tcp-gcp.json"), "--json"], capture_output=True, text=True)
    assert ok.returncode == 0 and '"iperf_version": "iperf 3.9"' in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "helpers", "iperf", "--parse",
                          str(REAL / "recorded-here-iperf-3.12-truncated.json")], capture_output=True, text=True)
    assert bad.returncode == 2 and "not complete JSON" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("bad, words", [
    ("fast", "not a rate"), ("-1", "not a rate"), ("0", "out of range"), ("1e308", "out of range"),
    ("1e400", "not a finite number"), ("nan", "not a rate"), ("2T", "out of range"), ("\u0661G", "not a rate"),
    ("1G/0", "burst"), ("1G/", "not a rate")])
def test_bitrate_must_be_a_plausible_rate(bad, words, capsys):
    """Issue 35: --bitrate fast, negative, zero and 1e308 ran; a rate is 1K..1T bit/s, stated in the message."""
    from helpers.core import cli

    with pytest.raises(ValueError, match=words):
        iperf.bitrate_bps(bad)
    assert cli.run(iperf.main, [f"--bitrate={bad}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--bitrate" in err[0] and ("1K to 1T" in err[0] or "burst" in err[0])
    with pytest.raises(ValueError, match=words):
        iperf.client_command("iperf3", 5999, udp=True, bitrate=bad)


def test_good_bitrates_pass_as_typed():
    assert [iperf.bitrate_bps(b) for b in ("100M", "1G", "2.5g", "10G/8", "1e9", "1K", "1T")] == \
        [1e8, 1e9, 2.5e9, 1e10, 1e9, 1e3, 1e12]
    assert iperf._bitrate_arg(" 1G ") == "1G"
