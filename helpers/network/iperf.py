"""iperf3 on localhost: parse ``iperf3 -J`` JSON and run a client against a one-shot server on 127.0.0.1.

Two halves, used by chapter 15:

* :func:`parse` reads the JSON that ``iperf3 -J`` prints (versions 3.0 to 3.17 checked, TCP and UDP) into frozen
  dataclasses: one :class:`Interval` per reporting interval and one :class:`Summary` of the ``end`` block
  (bits/s sent and received, retransmits, CPU utilisation, streams, protocol, version). A document with an
  ``"error"`` key, or one that is not complete JSON (a run that was killed), raises ``ValueError`` that says so.
* :func:`run_loopback` starts ``iperf3 -s -1 -B 127.0.0.1 -p <free port>``, runs the client
  (``-c 127.0.0.1 -t N -J``, optionally ``-P``, ``-u -b``, ``-R``) and stops the server in ``finally``, so no
  server outlives the call. Loopback measures memory copies through the kernel's TCP stack, not a NIC.

CLI: ``python -m helpers iperf [--streams 1,4] [--udp --bitrate 1G] [--reverse] [--parse FILE] [--json --out F]``.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

from helpers.core import inputs, launch, procs

INSTALL_HINT = "install it with `apt-get install -y iperf3` (Debian/Ubuntu) or `dnf install iperf3`"


@dataclass(frozen=True)
class Interval:
    """One reporting interval of the client, summed over its streams (the ``sum`` block)."""
    start_s: float
    end_s: float
    bytes: int
    bits_per_second: float
    retransmits: int | None        # TCP sender only
    omitted: bool                  # inside the -O warm-up


@dataclass(frozen=True)
class Summary:
    """The ``end`` block of one run. ``received_bps`` is None when the JSON has no receiver total (old UDP)."""
    version: str
    protocol: str
    num_streams: int
    duration_s: float
    reverse: bool
    sent_bytes: int
    sent_bps: float
    received_bytes: int | None
    received_bps: float | None
    retransmits: int | None
    host_cpu_pct: float | None
    remote_cpu_pct: float | None
    jitter_ms: float | None        # UDP only
    lost_percent: float | None     # UDP only
    intervals: tuple[Interval, ...]

    @property
    def gbps(self) -> float:
        """Goodput in Gbit/s (10^9 bit/s): the receiver's rate when known, else the sender's."""
        return (self.received_bps if self.received_bps is not None else self.sent_bps) / 1e9

    @property
    def host_cpu_pct_per_gbps(self) -> float | None:
        """CPU cost: the client's CPU utilisation (% of one machine) per Gbit/s moved."""
        return None if self.host_cpu_pct is None or self.gbps == 0 else self.host_cpu_pct / self.gbps


@dataclass(frozen=True)
class Row:
    """A flat record of one run, for tables and ``--out`` documents."""
    protocol: str
    streams: int
    reverse: bool
    duration_s: float
    sent_Gbps: float
    received_Gbps: float | None
    retransmits: int | None
    host_cpu_pct: float | None
    remote_cpu_pct: float | None
    host_cpu_pct_per_Gbps: float | None
    lost_percent: float | None
    iperf_version: str


def _num(d: dict, key: str, kind=float):
    v = d.get(key)
    return None if v is None else inputs.number(v, what=f"iperf3 {key}", integer=kind is int)


def _no_constant(name: str):
    raise inputs.BadInput(f"iperf3 JSON holds {name}: not a measurement (NaN and infinity are refused)")


def _q(v, what: str, integer: bool = False):
    """A measured quantity from the JSON: a finite, non-negative number (``inputs.number``)."""
    return inputs.number(v, what=f"iperf3 {what}", integer=integer)


def parse(text: str) -> Summary:
    """Parse the complete stdout of ``iperf3 -J`` (client side) into a :class:`Summary`."""
    if not text or not text.strip():
        raise ValueError("empty iperf3 output: the client printed nothing (did it start? run it with -J)")
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise ValueError(f"iperf3 output is not complete JSON ({e.msg} at char {e.pos} of {len(text)}): "
                         "the run was cut short or -J was not given; rerun with -J and let it finish") from None
    if not isinstance(doc, dict):
        raise ValueError(f"iperf3 JSON must be an object, got {type(doc).__name__}")
    if doc.get("error"):
        raise ValueError(f"iperf3 reported an error: {doc['error']}")
    start, end = doc.get("start") or {}, doc.get("end") or {}
    test = start.get("test_start")
    if not test or not end:
        raise ValueError("iperf3 JSON lacks start.test_start or end: not a finished client run "
                         "(server-side output and --json-stream lines are not supported)")
    protocol = str(test.get("protocol", "TCP")).upper()
    if "sum_sent" in end:                      # TCP, and UDP since 3.10 or so
        sent = end["sum_sent"]
        recv = end.get("sum_received")
    elif "sum" in end:                         # UDP before sum_sent/sum_received existed: sender totals + loss
        sent, recv = end["sum"], None
    else:
        raise ValueError(f"iperf3 JSON end block has none of sum_sent/sum: keys {sorted(end)}")
    udp_totals = end.get("sum") if protocol == "UDP" else None
    loss_src = recv if (recv and "lost_percent" in recv) else udp_totals or {}
    cpu = end.get("cpu_utilization_percent") or {}
    intervals = tuple(
        Interval(start_s=_q(s["start"], "interval start"), end_s=_q(s["end"], "interval end"),
                 bytes=_q(s["bytes"], "interval bytes", True),
                 bits_per_second=_q(s["bits_per_second"], "interval bits_per_second"),
                 retransmits=_num(s, "retransmits", int),
                 omitted=bool(s.get("omitted", False)))
        for s in (iv["sum"] for iv in doc.get("intervals", []) if "sum" in iv))
    return Summary(
        version=str(start.get("version", "unknown")), protocol=protocol,
        num_streams=_q(test.get("num_streams", 1), "num_streams", True),
        duration_s=_q(sent.get("seconds", test.get("duration", 0)), "duration (seconds)"),
        reverse=bool(test.get("reverse", 0)),
        sent_bytes=_q(sent["bytes"], "sent bytes", True), sent_bps=_q(sent["bits_per_second"], "sent bits_per_second"),
        received_bytes=None if recv is None else _q(recv["bytes"], "received bytes", True),
        received_bps=None if recv is None else _q(recv["bits_per_second"], "received bits_per_second"),
        retransmits=_num(sent, "retransmits", int) if protocol == "TCP" else None,
        host_cpu_pct=_num(cpu, "host_total"), remote_cpu_pct=_num(cpu, "remote_total"),
        jitter_ms=_num(loss_src, "jitter_ms"), lost_percent=_num(loss_src, "lost_percent"),
        intervals=intervals)


def row(s: Summary) -> Row:
    return Row(protocol=s.protocol, streams=s.num_streams, reverse=s.reverse, duration_s=round(s.duration_s, 3),
               sent_Gbps=s.sent_bps / 1e9, received_Gbps=None if s.received_bps is None else s.received_bps / 1e9,
               retransmits=s.retransmits, host_cpu_pct=s.host_cpu_pct, remote_cpu_pct=s.remote_cpu_pct,
               host_cpu_pct_per_Gbps=s.host_cpu_pct_per_gbps, lost_percent=s.lost_percent, iperf_version=s.version)


# ---------------------------------------------------------------- running it on 127.0.0.1

_RATE = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
RATE_RANGE_bps = (1e3, 1e12)       # 1 Kbit/s .. 1 Tbit/s: anything outside is a typo (0 would mean "unlimited")


def bitrate_bps(text: str) -> float:
    """Bits/s of an iperf3 ``-b`` rate (``100M``, ``1G``, ``2.5G/10`` with a burst of 10 packets; K/M/G/T are
    powers of 1000, as iperf3 reads them); ValueError naming the value, the syntax and the range otherwise."""
    s = str(text).strip()
    lo, hi = RATE_RANGE_bps
    fix = ("give bits/s as iperf3's -b takes them: a number with an optional K, M, G or T (x1000) and an optional "
           "/burst, from 1K to 1T (e.g. 100M, 1G, 10G/8)")
    rate, _, burst = s.partition("/")
    scale = 1000 ** "KMGT".index(rate[-1].upper()) * 1000 if rate[-1:].upper() in ("K", "M", "G", "T") else 1
    digits = rate[:-1] if scale > 1 else rate
    if not _RATE.fullmatch(digits) or ("/" in s and not (burst.isascii() and burst.isdigit())):
        raise ValueError(f"bitrate {s[:40]!r} is not a rate: {fix}")
    try:
        bps = inputs.number(digits, what=f"bitrate {s[:40]!r}") * scale
    except inputs.BadInput as e:
        raise ValueError(f"{e}: {fix}") from None
    if not lo <= bps <= hi:
        raise ValueError(f"bitrate {s[:40]!r} = {bps:g} bit/s is out of range: {fix}")
    if burst and not 1 <= int(burst) <= 1000:
        raise ValueError(f"bitrate {s[:40]!r}: the burst after '/' must be 1..1000 packets")
    return bps


def _bitrate_arg(text: str) -> str:
    """``--bitrate``: checked at parse time (see :func:`bitrate_bps`), passed to iperf3 as typed."""
    try:
        bitrate_bps(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text.strip()


def find_iperf3() -> str | None:
    """The iperf3 executable on PATH, or None."""
    return shutil.which("iperf3")


def client_command(exe: str, port: int, streams: int = 1, duration_s: int = 1, udp: bool = False,
                   bitrate: str | None = None, reverse: bool = False) -> list[str]:
    """The client's argv (shown by the chapter; the same flags work between two real hosts)."""
    if streams < 1 or streams > 128:
        raise ValueError(f"streams={streams}: use 1..128 parallel streams (-P)")
    if duration_s < 1 or duration_s > 60:
        raise ValueError(f"duration_s={duration_s}: use 1..60 s on localhost (-t)")
    if bitrate is not None:
        bitrate_bps(bitrate)
    cmd = [exe, "-c", "127.0.0.1", "-p", str(port), "-t", str(duration_s), "-J"]
    if streams > 1:
        cmd += ["-P", str(streams)]
    if udp:
        cmd += ["-u", "-b", bitrate or "1G"]
    elif bitrate:
        cmd += ["-b", bitrate]
    if reverse:
        cmd.append("-R")
    return cmd


def run_loopback(streams: int = 1, duration_s: int = 1, udp: bool = False, bitrate: str | None = None,
                 reverse: bool = False, connect_timeout_s: float = 5.0) -> Summary:
    """Start a one-shot server on 127.0.0.1:<free port>, run one client, parse it; the server never outlives it."""
    exe = find_iperf3()
    if exe is None:
        raise FileNotFoundError(f"iperf3 is not on PATH; {INSTALL_HINT}")
    port = launch.free_port()
    cmd = client_command(exe, port, streams, duration_s, udp, bitrate, reverse)
    server = subprocess.Popen([exe, "-s", "-1", "-B", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + connect_timeout_s
        while True:        # retry until the server listens; a refused connect does not use up its one test
            out = inputs.run_program(cmd, timeout_s=duration_s + 30, max_bytes=64 * 2**20)   # hung: exit 1
            try:
                return parse(out.stdout)
            except ValueError as e:
                refused = "refused" in out.stdout or "refused" in str(e)
                if not refused or time.monotonic() > deadline or server.poll() is not None:
                    err = server.stderr.read() if server.poll() is not None and server.stderr else ""
                    raise RuntimeError(f"iperf3 client on port {port} failed: {e}"
                                       + (f"; server said: {err.strip()}" if err.strip() else "")) from None
                time.sleep(0.1)
    finally:
        procs.stop_process(server, timeout_s=3)
        if server.stderr:
            server.stderr.close()


def main(argv=None) -> int:
    from helpers.core import cli, results

    ap = argparse.ArgumentParser(prog="python -m helpers iperf", description=__doc__.split("\n")[0])
    ap.add_argument("--parse", metavar="FILE", type=cli.nonempty_path,
                    help="parse a saved `iperf3 -J` output instead of running on localhost")
    ap.add_argument("--streams", type=cli.csv_of(cli.bounded_int(1, 128)), default=[1, 4],
                    help="parallel streams to run, comma-separated (default 1,4)")
    ap.add_argument("--time", type=cli.bounded_int(1, 60), default=1, help="seconds per run (default 1)")
    ap.add_argument("--udp", action="store_true", help="UDP instead of TCP (with --bitrate)")
    ap.add_argument("--bitrate", type=_bitrate_arg,
                    help="target rate in bit/s, iperf3 syntax, 1K..1T (e.g. 100M, 1G); UDP defaults to 1G")
    ap.add_argument("--reverse", action="store_true", help="server sends, client receives (-R)")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    if a.parse:
        summaries = [parse(inputs.read_text(a.parse, what="iperf3 -J output"))]
    else:
        summaries = [run_loopback(n, a.time, a.udp, a.bitrate, a.reverse) for n in a.streams]
    results.emit([row(s) for s in summaries], "iperf3_loopback" if not a.parse else "iperf3_parsed", a)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
