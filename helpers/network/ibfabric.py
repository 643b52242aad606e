"""Parsers for the fabric-wide InfiniBand tools — perfquery, ibdiagnet 2.x, iblinkinfo, sminfo — and the text helpers
all IB parsers share (chapter 03). :mod:`helpers.network.ibparse` re-exports them next to the per-port tools.

perfquery counters have the bit widths of the IBA PortCounters attribute (``COUNTER_BITS``): a value at the maximum
means "at least that many" (saturated), a value above it cannot come from a real port and is refused.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Nominal per-lane signalling rate of each InfiniBand generation in Gb/s (InfiniBand Trade Association roadmap,
# https://www.infinibandta.org/infiniband-roadmap/). A standard port bundles 4 lanes ("4X"): 4X NDR = 400 Gb/s.
LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}
# Width of each PortCounters error/traffic counter (InfiniBand Architecture Specification vol. 1, PortCounters
# attribute; infiniband-diags' perfquery prints them as read). 8-bit counters saturate at 255, 4-bit ones at 15.
COUNTER_BITS = {"SymbolErrorCounter": 16, "LinkErrorRecoveryCounter": 8, "LinkDownedCounter": 8, "PortRcvErrors": 16,
                "PortRcvRemotePhysicalErrors": 16, "PortRcvSwitchRelayErrors": 16, "PortXmitDiscards": 16,
                "PortXmitConstraintErrors": 8, "PortRcvConstraintErrors": 8, "LocalLinkIntegrityErrors": 4,
                "ExcessiveBufferOverrunErrors": 4, "VL15Dropped": 16}
# Per-lane signalling rate that iblinkinfo prints (Gb/s) -> generation.
LANE_SIGNAL = {2.5: "SDR", 5.0: "DDR", 10.0: "QDR", 14.0625: "FDR", 25.78125: "EDR", 53.125: "HDR", 106.25: "NDR",
               212.5: "XDR"}
_PREFIX = re.compile(r"^([A-Za-z0-9_.-]+): ?(.*)$")


@dataclass(frozen=True)
class Counters:
    """One perfquery block: error and traffic counters of ``port`` on the node with ``lid``."""
    lid: int
    port: int
    values: dict = field(default_factory=dict)

    def get(self, name: str) -> int:
        return int(self.values.get(name, 0))

    def saturated(self) -> list[str]:
        """Counters at their maximum (2^bits - 1): the true count is at least that."""
        return [k for k, b in COUNTER_BITS.items() if self.get(k) == 2 ** b - 1]


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
    if re.search(r"^-{3,} ?[^-\s]\S*? ?-{3,}\s*$", text, re.M):      # cexec/clush style "--------- n01---------"
        host = default_host
        for ln in text.splitlines():
            if (m := re.match(r"^-{3,} ?([^-\s]\S*?) ?-{3,}\s*$", ln)):
                host = m.group(1)
            elif not ln.startswith("*"):
                groups.setdefault(host, []).append(ln)
        return groups
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


_TOOL_ERR = re.compile(r"^\s*(ibpanic|ibwarn|iberror|iberror|[\w-]+: iberror)\b.*", re.I)


def _seen(text: str) -> str:
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return f"saw {len(text.splitlines())} lines, the first {first[:60]!r}" if first else "the text is empty"


def parse_perfquery(text: str, notes: list | None = None) -> list[Counters]:
    """Blocks of counters; a query that failed (``$ perfquery LID PORT`` then an ibwarn/iberror line) becomes
    ``Counters(lid, port, {"unreachable": 1})`` — the node did not answer. A block printed without its
    ``# Port counters: Lid N port M`` header takes LID and port from the command line before it."""
    notes = [] if notes is None else notes
    out, cur, asked = [], None, None
    for ln in text.splitlines():
        m = re.match(r"#\s*Port (?:extended )?counters: Lid ([0-9]+) port ([0-9]+)", ln)
        if (q := re.search(r"\bperfquery\s+(?:-\w+\s+)*([0-9]+)\s+([0-9]+)\s*$", ln)) and not ln.startswith("#"):
            asked, cur = (int(q.group(1)), int(q.group(2))), None
        elif asked and re.match(r"(ibwarn|perfquery: iberror)", ln) and "failed" in ln:
            if not (out and (out[-1].lid, out[-1].port) == asked):
                out.append(Counters(*asked, {"unreachable": 1}))
        if m:
            cur = Counters(int(m.group(1)), int(m.group(2)), {})
            out.append(cur)
        elif (c := re.match(r"(\w+):\.+(\S+)$", ln.strip())):
            if cur is None:
                if asked is None:
                    continue
                cur = Counters(*asked, {})
                out.append(cur)
                notes.append(f"perfquery block without its '# Port counters' header: lid {asked[0]} port "
                             f"{asked[1]} taken from the command line")
            v = c.group(2)
            val = int(v, 16) if v.startswith("0x") else int(v) if v.isascii() and v.isdigit() else None
            if val is None:
                continue
            name = c.group(1)
            if name in COUNTER_BITS and val > 2 ** COUNTER_BITS[name] - 1:
                raise ValueError(f"perfquery lid {cur.lid} port {cur.port}: {name} = {val}, but it is a "
                                 f"{COUNTER_BITS[name]}-bit counter (max {2 ** COUNTER_BITS[name] - 1}); "
                                 "this is not what a port reports — check the text")
            cur.values[name] = val
    if not out and "perfquery" not in text:
        raise ValueError(f"perfquery: no \"# Port counters: Lid N port M\" blocks found ({_seen(text)})")
    return out


def parse_ibdiagnet(text: str) -> Diagnet:
    """ibdiagnet 2.x stdout. The older ibutils ibdiagnet 1.x (``Loading IBDIAGNET from …``) is refused by name."""
    if re.search(r"Loading IBDIAGNET from:.*ibdiagnet1|^-I-{3,}\s*$", text, re.M):
        raise ValueError("ibdiagnet: this is ibdiagnet 1.x (ibutils) output; the book reads ibdiagnet 2.x "
                         "(ibutils2 / DOCA, 'Load Plugins from:' … '-I- Stages Warnings Errors'); run ibdiagnet2")
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
            m = re.match(r"-I- (.+?)\s{2,}([0-9]+)\s+([0-9]+)", s)
            if m:
                counts[m.group(1).strip()] = (int(m.group(2)), int(m.group(3)))
            continue
        if stage == "Fabric Summary":
            if (m := re.match(r"(Total Nodes|IB Switches|IB Channel Adapters)\s*:\s*([0-9]+)", s)):
                summary[m.group(1)] = int(m.group(2))
            elif s.startswith("Master SM:"):
                sms.append(s)
            continue
        m = re.match(r"-([IWE])- (.*)", s)
        if m and stage:
            messages[stage].append((m.group(1), m.group(2)))
        elif m and (d := re.search(r"([0-9]+) nodes \(([0-9]+) Switches & ([0-9]+) CA-s\) discovered", s)):
            summary.setdefault("Total Nodes", int(d.group(1)))
    if not messages and not summary:
        raise ValueError(f"ibdiagnet: no stage headers or fabric summary found ({_seen(text)})")
    return Diagnet(messages, summary, counts, tuple(sms))


@dataclass(frozen=True)
class Link:
    """One line of ``iblinkinfo``: a port and what it is cabled to."""
    node: str                 # the CA/switch the line belongs to ("CA: …:" / "Switch: …:" header, or -l's name)
    lid: int | None
    port: int
    width: str                # "4X" … ("" when the port is down)
    lane_Gbps: float          # per-lane signalling rate as printed (25.78125 = EDR)
    state: str                # Active / Down / Initialize / Armed
    physical_state: str       # LinkUp / Polling / Disabled …
    peer_lid: int | None
    peer_port: int | None
    peer: str

    @property
    def speed(self) -> str:
        return LANE_SIGNAL.get(self.lane_Gbps, "")

    @property
    def rate_Gbps(self) -> float:
        """Nominal data rate of the link: lanes × the generation's lane rate (4X EDR = 100)."""
        lanes = int(self.width.rstrip("X")) if self.width[:-1].isascii() and self.width[:-1].isdigit() else 0
        return lanes * LANE_GBPS.get(self.speed, 0)


_LINK = re.compile(r"^\s*(?:(0x[0-9a-f]+)\s+)?(?:\"([^\"]*)\"\s+)?(\d+)?\s+(\d+)\[[^\]]*\]\s*==\(\s*(?:(\d+X)\s+([\d.]+)"
                   r"\s*Gbps\s+)?(\w+)/\s*(\w+)\s*\)==>\s*(?:(0x[0-9a-f]+)\s+)?(\d+)?\s*(\d+)?\[[^\]]*\]\s*\"([^\"]*)\"", re.A)


def parse_iblinkinfo(text: str) -> list[Link]:
    out, node = [], ""
    for ln in text.splitlines():
        if (h := re.match(r"^\s*(?:CA|Switch):\s*(?:0x[0-9a-f]+\s+)?(.+?):\s*$", ln)):
            node = h.group(1).strip()
            continue
        m = _LINK.match(ln)
        if m:
            g = m.groups()
            out.append(Link(g[1].strip() if g[1] else node, int(g[2]) if g[2] else None, int(g[3]), g[4] or "",
                            float(g[5]) if g[5] else 0.0, g[6], g[7], int(g[9]) if g[9] else None,
                            int(g[10]) if g[10] else None, g[11]))
    if not out:
        raise ValueError(f"iblinkinfo: no \"LID PORT[ ] ==( 4X … Gbps Active/ LinkUp)==> …\" lines found ({_seen(text)})")
    return out


@dataclass(frozen=True)
class SMInfo:
    host: str
    sm_lid: int
    sm_guid: str
    activity: int
    priority: int
    state: str                # SMINFO_MASTER / SMINFO_STANDBY / SMINFO_DISCOVER / SMINFO_NOTACT


def parse_sminfo(text: str) -> list[SMInfo]:
    """``sminfo`` (one line per queried SM, pdsh prefixes allowed; a bare ``sminfo: sm lid …`` line is the local
    host's, not a host called "sminfo")."""
    out = []
    for host, lines in _split_hosts(text).items():
        joined = " ".join(lines)          # some logs wrap the line after "priority N"
        if host == "sminfo":              # the tool's own prefix was taken for a pdsh host prefix
            host, joined = "localhost", "sminfo: " + " sminfo: ".join(lines)
        for m in re.finditer(r"sminfo:\s+sm lid ([0-9]+)\s+sm guid (0x[0-9a-fA-F]+),\s+activity count ([0-9]+)\s+"
                             r"priority ([0-9]+)\s+state [0-9]+\s+(SMINFO_\w+)", joined):
            out.append(SMInfo(host, int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)), m.group(5)))
    if not out:
        errs = [ln.strip() for ln in text.splitlines() if _TOOL_ERR.match(ln)]
        err = next((e for e in errs if "iberror" in e), errs[0] if errs else "")
        if err:                           # "sminfo: iberror: failed: query", "ibwarn: [..] mad_rpc_open_port: …"
            raise ValueError(f"sminfo failed, no SMInfo was read: {err[:120]!r}. Check that ib_umad is loaded and "
                             "/dev/infiniband/umad* readable (run as root), the port is Active, and an SM "
                             "(opensm or the switch's) is running")
        raise ValueError(f"sminfo: no \"sminfo: sm lid N sm guid …, activity count … state N SMINFO_…\" line ({_seen(text)})")
    return out
