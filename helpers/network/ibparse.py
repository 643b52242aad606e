"""Parsers for InfiniBand diagnostic tools: ibstat, ibstatus, ibv_devinfo, perfquery, ibdiagnet (chapter 03).

Each parser takes the tool's text — one host's output, or many hosts' output gathered with
``pdsh -w host[01-04] ibstat`` (lines prefixed ``host: ``) — and returns plain records. The diagnoser
(:mod:`helpers.network.ibdiag`) reads them. Lines it does not know are skipped, so a newer tool version that adds a
field does not break parsing; a text with none of the expected markers raises ``ValueError`` naming the tool.

The shipped samples in ``helpers/network/data/ib/`` were written for the book in these tools' formats (infiniband-diags,
rdma-core, ibdiagnet2); :func:`load_sample` reads one scenario, :func:`capture_live` runs whichever tools exist.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "ib"
TOOLS = ("ibstat", "ibstatus", "ibv_devinfo", "perfquery", "ibdiagnet")
# Nominal per-lane signalling rate of each InfiniBand generation in Gb/s (InfiniBand Trade Association roadmap,
# https://www.infinibandta.org/infiniband-roadmap/). A standard port bundles 4 lanes ("4X"): 4X NDR = 400 Gb/s.
LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}
_PREFIX = re.compile(r"^([A-Za-z0-9_.-]+): ?(.*)$")


@dataclass(frozen=True)
class PortStatus:
    """One HCA port as ibstat (and ibstatus / ibv_devinfo, merged in) report it."""
    host: str
    ca: str
    port: int
    ca_type: str = ""
    firmware: str = ""
    state: str = ""            # Active / Down / Initializing / Armed
    physical_state: str = ""   # LinkUp / Polling / Disabled / …
    rate_Gbps: float = 0.0
    base_lid: int = 0
    sm_lid: int = 0
    port_guid: str = ""
    link_layer: str = ""
    width: str = ""            # 4X, 1X … (ibstatus)
    speed: str = ""            # NDR, HDR … (ibstatus)
    active_mtu: int = 0        # bytes (ibv_devinfo)


@dataclass(frozen=True)
class Counters:
    """One perfquery block: error and traffic counters of ``port`` on the node with ``lid``."""
    lid: int
    port: int
    values: dict = field(default_factory=dict)

    def get(self, name: str) -> int:
        return int(self.values.get(name, 0))


@dataclass(frozen=True)
class Diagnet:
    """ibdiagnet's stdout: messages per stage, the fabric summary and the warning/error table."""
    messages: dict          # stage -> [(severity "I"/"W"/"E", text)]
    summary: dict           # "Total Nodes", "IB Switches", "IB Channel Adapters" -> int
    stage_counts: dict      # stage -> (warnings, errors)
    master_sms: tuple       # one line per master SM in the fabric summary

    def issues(self, severity: str = "EW") -> list[tuple[str, str, str]]:
        """(stage, severity, text) of every warning/error message."""
        return [(st, sev, txt) for st, msgs in self.messages.items() for sev, txt in msgs if sev in severity]


def _split_hosts(text: str, default_host: str = "localhost") -> dict[str, list[str]]:
    """Group lines by their ``host: `` prefix (pdsh); unprefixed text belongs to ``default_host``."""
    groups: dict[str, list[str]] = {}
    lines = [ln for ln in text.splitlines() if not ln.startswith("#") or ln.startswith("# Port")]
    prefixed = sum(bool(_PREFIX.match(ln)) for ln in lines)
    use_prefix = bool(lines) and prefixed >= 0.9 * len([ln for ln in lines if ln.strip()])
    for ln in lines:
        m = _PREFIX.match(ln) if use_prefix else None
        host, rest = (m.group(1), m.group(2)) if m else (default_host, ln)
        groups.setdefault(host, []).append(rest)
    return groups


def _kv(line: str) -> tuple[str, str] | None:
    if ":" not in line:
        return None
    k, v = line.split(":", 1)
    return k.strip(), v.strip()


def parse_ibstat(text: str) -> list[PortStatus]:
    out = []
    for host, lines in _split_hosts(text).items():
        ca, info, port = None, {}, None
        for ln in lines + ["CA '__end__'"]:
            m = re.match(r"\s*CA '([^']+)'", ln)
            pm = re.match(r"\s*Port (\d+):\s*$", ln)
            if (m or pm) and port is not None:
                out.append(_port(host, ca, port, info))
                port = None
            if m:
                ca, info = m.group(1), {}
            elif pm:
                port, info = int(pm.group(1)), {k: v for k, v in info.items() if k in ("CA type", "Firmware version")}
            elif (kv := _kv(ln)) and ca:
                info[kv[0]] = kv[1]
    if not out:
        raise ValueError("ibstat: no \"CA '…'\" / \"Port N:\" blocks found; is this ibstat output?")
    return out


def _port(host, ca, port, info) -> PortStatus:
    num = lambda k: int(info.get(k, "0") or 0, 0)  # noqa: E731  (decimal or 0x… hex)
    return PortStatus(host, ca, port, info.get("CA type", ""), info.get("Firmware version", ""),
                      info.get("State", ""), info.get("Physical state", ""), float(info.get("Rate", 0) or 0),
                      num("Base lid"), num("SM lid"), info.get("Port GUID", ""), info.get("Link layer", ""))


def parse_ibstatus(text: str) -> list[dict]:
    """[{host, ca, port, state, physical_state, rate_Gbps, width, speed, base_lid, sm_lid}]"""
    out = []
    for host, lines in _split_hosts(text).items():
        cur = None
        for ln in lines:
            m = re.match(r"\s*Infiniband device '([^']+)' port (\d+) status:", ln)
            if m:
                cur = {"host": host, "ca": m.group(1), "port": int(m.group(2))}
                out.append(cur)
            elif cur and (kv := _kv(ln)):
                k, v = kv
                if k == "rate":
                    r = re.match(r"([\d.]+) Gb/sec \((\d+X) (\w+)\)", v)
                    if r:
                        cur.update(rate_Gbps=float(r.group(1)), width=r.group(2), speed=r.group(3))
                elif k in ("state", "phys state"):
                    cur["state" if k == "state" else "physical_state"] = v.split(":", 1)[-1].strip()
                elif k in ("base lid", "sm lid"):
                    cur[k.replace(" ", "_")] = int(v, 16)
    if not out:
        raise ValueError("ibstatus: no \"Infiniband device '…' port N status:\" lines found")
    return out


def parse_ibv_devinfo(text: str) -> list[dict]:
    """[{host, ca, port, fw_ver, vendor_part_id, state, active_mtu, max_mtu, link_layer}]"""
    out = []
    for host, lines in _split_hosts(text).items():
        dev = {}
        for ln in lines:
            kv = _kv(ln)
            if not kv:
                continue
            k, v = kv
            if k == "hca_id":
                dev = {"host": host, "ca": v}
            elif k == "port" and dev:
                out.append({**dev, "port": int(v)})
            elif k in ("fw_ver", "vendor_part_id") and dev:
                dev[k] = v
            elif out and out[-1]["ca"] == dev.get("ca") and k in ("state", "active_mtu", "max_mtu", "link_layer"):
                out[-1][k] = int(v.split()[0]) if k.endswith("mtu") else v
    if not out:
        raise ValueError("ibv_devinfo: no \"hca_id:\" / \"port:\" entries found")
    return out


def parse_perfquery(text: str) -> list[Counters]:
    """Blocks of counters; a query that failed (``$ perfquery LID PORT`` then an ibwarn/iberror line) becomes
    ``Counters(lid, port, {"unreachable": 1})`` — the node did not answer."""
    out, cur, asked = [], None, None
    for ln in text.splitlines():
        m = re.match(r"#\s*Port (?:extended )?counters: Lid (\d+) port (\d+)", ln)
        if (q := re.match(r"\$\s*perfquery\s+(?:-\w+\s+)*(\d+)\s+(\d+)", ln)):
            asked, cur = (int(q.group(1)), int(q.group(2))), None
        elif asked and re.match(r"(ibwarn|perfquery: iberror)", ln) and "failed" in ln:
            if not (out and (out[-1].lid, out[-1].port) == asked):
                out.append(Counters(*asked, {"unreachable": 1}))
        if m:
            cur = Counters(int(m.group(1)), int(m.group(2)), {})
            out.append(cur)
        elif cur is not None and (c := re.match(r"(\w+):\.+(\S+)$", ln.strip())):
            v = c.group(2)
            cur.values[c.group(1)] = int(v, 16) if v.startswith("0x") else int(v)
    if not out and "perfquery" not in text:
        raise ValueError("perfquery: no \"# Port counters: Lid N port M\" blocks found")
    return out


def parse_ibdiagnet(text: str) -> Diagnet:
    messages: dict = {}
    summary, counts, sms = {}, {}, []
    stage, sep = None, False
    for ln in text.splitlines():
        s = ln.strip()
        if re.fullmatch(r"-{10,}", s):
            sep = True
            continue
        if sep and s and not s.startswith("-"):
            stage, sep = s, False
            messages.setdefault(stage, [])
            continue
        sep = False
        if stage == "Summary":
            m = re.match(r"-I- (.+?)\s{2,}(\d+)\s+(\d+)", s)
            if m:
                counts[m.group(1).strip()] = (int(m.group(2)), int(m.group(3)))
            continue
        if stage == "Fabric Summary":
            if (m := re.match(r"(Total Nodes|IB Switches|IB Channel Adapters)\s*:\s*(\d+)", s)):
                summary[m.group(1)] = int(m.group(2))
            elif s.startswith("Master SM:"):
                sms.append(s)
            continue
        m = re.match(r"-([IWE])- (.*)", s)
        if m and stage:
            messages[stage].append((m.group(1), m.group(2)))
        elif m and (d := re.search(r"(\d+) nodes \((\d+) Switches & (\d+) CA-s\) discovered", s)):
            summary.setdefault("Total Nodes", int(d.group(1)))
    if not messages and not summary:
        raise ValueError("ibdiagnet: no stage headers or fabric summary found")
    return Diagnet(messages, summary, counts, tuple(sms))


@dataclass
class Snapshot:
    """Everything gathered about a fabric: any subset of the tools (None = not run)."""
    source: str
    ports: list = field(default_factory=list)           # PortStatus (ibstat, with ibstatus/devinfo merged in)
    counters: list = field(default_factory=list)        # Counters
    diagnet: Diagnet | None = None
    tools: tuple = ()


def snapshot(texts: dict[str, str], source: str) -> Snapshot:
    """Parse {tool: text} and merge the per-port views (ibstatus adds width/speed, ibv_devinfo the MTU)."""
    unknown = set(texts) - set(TOOLS)
    if unknown:
        raise ValueError(f"unknown tool(s) {sorted(unknown)}: supported are {TOOLS}")
    ports = {(p.host, p.ca, p.port): p for p in parse_ibstat(texts["ibstat"])} if "ibstat" in texts else {}
    extra = {}
    for rec in parse_ibstatus(texts["ibstatus"]) if "ibstatus" in texts else []:
        extra.setdefault((rec["host"], rec["ca"], rec["port"]), {}).update(
            width=rec.get("width", ""), speed=rec.get("speed", ""), rate_Gbps=rec.get("rate_Gbps", 0.0))
    for rec in parse_ibv_devinfo(texts["ibv_devinfo"]) if "ibv_devinfo" in texts else []:
        extra.setdefault((rec["host"], rec["ca"], rec["port"]), {}).update(
            active_mtu=rec.get("active_mtu", 0), firmware=rec.get("fw_ver", ""))
    import dataclasses

    for key, upd in extra.items():
        base = ports.get(key) or PortStatus(*key)
        ports[key] = dataclasses.replace(base, **{k: v for k, v in upd.items() if v and not (
            k in ("rate_Gbps", "firmware") and getattr(base, k))})
    return Snapshot(source, list(ports.values()),
                    parse_perfquery(texts["perfquery"]) if "perfquery" in texts else [],
                    parse_ibdiagnet(texts["ibdiagnet"]) if "ibdiagnet" in texts else None, tuple(sorted(texts)))


def scenarios() -> list[str]:
    """Names of the shipped sample scenarios ("healthy" first)."""
    names = sorted({p.name.split(".")[0] for p in DATA.glob("*.txt")})
    return ["healthy"] + [n for n in names if n != "healthy"] if "healthy" in names else names


def load_sample(name: str) -> Snapshot:
    files = sorted(DATA.glob(f"{name}.*.txt"))
    if not files:
        raise ValueError(f"no sample scenario {name!r}; shipped: {scenarios()}")
    return snapshot({f.name.split(".")[1]: f.read_text() for f in files}, f"sample: {name}")


def sample_text(name: str, tool: str) -> str:
    path = DATA / f"{name}.{tool}.txt"
    if not path.exists():
        raise ValueError(f"scenario {name!r} has no {tool} sample; it has "
                         f"{sorted(p.name.split('.')[1] for p in DATA.glob(name + '.*.txt'))}")
    return path.read_text()


def capture_live(timeout_s: float = 60.0) -> tuple[Snapshot | None, str]:
    """Run the tools found on PATH on this host. (None, reason) when none is installed.

    ibdiagnet sweeps the whole fabric and needs root; perfquery without arguments reads the local port."""
    cmds = {"ibstat": ["ibstat"], "ibstatus": ["ibstatus"], "ibv_devinfo": ["ibv_devinfo"],
            "perfquery": ["perfquery"], "ibdiagnet": ["ibdiagnet"]}
    found = {t: c for t, c in cmds.items() if shutil.which(c[0])}
    if not found:
        return None, ("no InfiniBand tools on PATH (ibstat, ibstatus, ibv_devinfo, perfquery, ibdiagnet: "
                      "packages infiniband-diags, rdma-core/ibverbs-utils, ibdiagnet from DOCA/MLNX_OFED)")
    texts, notes = {}, []
    for tool, cmd in found.items():
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            notes.append(f"{tool}: timed out after {timeout_s:.0f} s")
            continue
        if r.returncode == 0 and r.stdout.strip():
            texts[tool] = r.stdout
        else:
            notes.append(f"{tool}: exit {r.returncode}: {(r.stderr or r.stdout).strip()[:120]}")
    if "ibstat" not in texts and not texts:
        return None, "; ".join(notes) or "the tools printed nothing"
    return snapshot(texts, "live: this host"), "; ".join(notes) or f"ran {sorted(texts)}"
