"""Parsers for InfiniBand diagnostic tools: ibstat, ibstatus, ibv_devinfo, perfquery, ibdiagnet 2.x, iblinkinfo, sminfo
(chapter 03).

Each parser takes the tool's text — one host's output, or many hosts' output gathered with
``pdsh -w host[01-04] ibstat`` (lines prefixed ``host: ``) — and returns plain records. The diagnoser
(:mod:`helpers.network.ibdiag`) reads them. Lines it does not know are skipped, so a newer tool version that adds a
field does not break parsing; a text with none of the expected markers raises ``ValueError`` naming the tool and what
it saw. Output that stops part-way (``ibpanic:``/``ibwarn:`` lines, a block cut off) is kept and reported in
``Snapshot.notes`` — never dropped silently. Ethernet (RoCE) ports of a ConnectX appear in ibstat too: they are
kept with ``link_layer == "Ethernet"`` and carry no LID and no subnet manager, so the diagnoser leaves them out of
every InfiniBand rule. The fabric-wide tools (perfquery, ibdiagnet, iblinkinfo, sminfo) are parsed in
:mod:`helpers.network.ibfabric` and re-exported here.

The shipped samples in ``helpers/network/data/ib/`` were written for the book in these tools' formats (infiniband-diags,
rdma-core, ibdiagnet2); :func:`load_sample` reads one scenario, :func:`capture_live` runs whichever tools exist.
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from helpers.network.ibfabric import (COUNTER_BITS, LANE_GBPS, LANE_SIGNAL, Counters, Diagnet, Link,  # noqa: F401
                                     SMInfo, _kv, _seen, _split_hosts, _TOOL_ERR, parse_ibdiagnet,
                                     parse_iblinkinfo, parse_perfquery, parse_sminfo)

DATA = Path(__file__).resolve().parent / "data" / "ib"
TOOLS = ("ibstat", "ibstatus", "ibv_devinfo", "perfquery", "ibdiagnet", "iblinkinfo", "sminfo")


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


def parse_ibstat(text: str, notes: list | None = None) -> list[PortStatus]:
    """Ports of ``ibstat``; ``notes`` (a list) collects what was cut off or reported as an error on the way."""
    notes = [] if notes is None else notes
    out = []
    for host, lines in _split_hosts(text).items():
        ca, info, port = None, {}, None
        for ln in lines + ["CA '__end__'"]:
            if _TOOL_ERR.match(ln):
                notes.append(f"ibstat on {host}: {ln.strip()[:120]}")
                continue
            m = re.match(r"\s*CA '([^']+)'", ln)
            pm = re.match(r"\s*Port ([0-9]+):\s*$", ln)
            if (m or pm) and port is not None:
                if "Link layer" not in info:
                    notes.append(f"ibstat on {host}: {ca} port {port} is cut off after "
                                 f"{list(info)[-1] if info else 'its header'} (partial output)")
                out.append(_port(host, ca, port, info))
                port = None
            if m:
                ca, info = m.group(1), {}
            elif pm:
                port, info = int(pm.group(1)), {k: v for k, v in info.items() if k in ("CA type", "Firmware version")}
            elif (kv := _kv(ln)) and ca:
                info[kv[0]] = kv[1]
    if not out:
        raise ValueError(f"ibstat: no \"CA '…'\" / \"Port N:\" blocks found ({_seen(text)}); is this ibstat output?")
    return out


def _port(host, ca, port, info) -> PortStatus:
    def num(k):
        v = (info.get(k) or "0").strip()
        return int(v, 0) if re.fullmatch(r"0x[0-9a-fA-F]+|[0-9]+", v) else 0
    return PortStatus(host, ca, port, info.get("CA type", ""), info.get("Firmware version", ""),
                      info.get("State", ""), info.get("Physical state", ""), _f(info.get("Rate", "")),
                      num("Base lid"), num("SM lid"), info.get("Port GUID", ""), info.get("Link layer", ""))


def _f(v: str) -> float:
    m = re.match(r"\s*([0-9.]+)", v or "")
    return float(m.group(1)) if m else 0.0


_STATE = {"ACTIVE": "Active", "DOWN": "Down", "INIT": "Initializing", "ARMED": "Armed", "PORT_ACTIVE": "Active",
          "PORT_DOWN": "Down", "PORT_INIT": "Initializing", "PORT_ARMED": "Armed"}


def parse_ibstatus(text: str) -> list[dict]:
    """[{host, ca, port, state, physical_state, rate_Gbps, width, speed, base_lid, sm_lid, link_layer}]"""
    out = []
    for host, lines in _split_hosts(text).items():
        cur = None
        for ln in lines:
            m = re.match(r"\s*Infiniband device '([^']+)' port ([0-9]+) status:", ln)
            if m:
                cur = {"host": host, "ca": m.group(1), "port": int(m.group(2))}
                out.append(cur)
            elif cur and (kv := _kv(ln)):
                k, v = kv
                if k == "rate":
                    r = re.match(r"([0-9.]+) Gb/sec \(([0-9]+X) (\w+)\)", v)
                    if r:
                        cur.update(rate_Gbps=float(r.group(1)), width=r.group(2), speed=r.group(3))
                elif k in ("state", "phys state"):
                    s = v.split(":", 1)[-1].strip()
                    cur["state" if k == "state" else "physical_state"] = _STATE.get(s.upper(), s)
                elif k in ("base lid", "sm lid"):
                    cur[k.replace(" ", "_")] = int(v, 16)
                elif k == "link_layer":
                    cur["link_layer"] = v
    if not out:
        raise ValueError(f"ibstatus: no \"Infiniband device '…' port N status:\" lines found ({_seen(text)})")
    return out


def parse_ibv_devinfo(text: str) -> list[dict]:
    """[{host, ca, port, fw_ver, vendor_part_id, state, active_mtu, max_mtu, link_layer, sm_lid, port_lid}]"""
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
            elif out and out[-1]["ca"] == dev.get("ca") and k in ("state", "active_mtu", "max_mtu", "link_layer",
                                                                  "sm_lid", "port_lid"):
                out[-1][k] = (int(v.split()[0]) if k.endswith(("mtu", "lid")) else
                              _STATE.get(v.split()[0], v) if k == "state" else v)
    if not out:
        raise ValueError(f"ibv_devinfo: no \"hca_id:\" / \"port:\" entries found ({_seen(text)})")
    return out


@dataclass
class Snapshot:
    """Everything gathered about a fabric: any subset of the tools (None = not run)."""
    source: str
    ports: list = field(default_factory=list)           # PortStatus (ibstat, with ibstatus/devinfo merged in)
    counters: list = field(default_factory=list)        # Counters
    diagnet: Diagnet | None = None
    tools: tuple = ()
    links: list = field(default_factory=list)           # Link (iblinkinfo)
    sms: list = field(default_factory=list)             # SMInfo (sminfo)
    notes: list = field(default_factory=list)           # partial output, tool errors met while parsing

    @property
    def ib_ports(self) -> list:
        """The InfiniBand ports (Ethernet/RoCE ports of the same adapters left out)."""
        return [p for p in self.ports if p.link_layer != "Ethernet"]


def snapshot(texts: dict[str, str], source: str) -> Snapshot:
    """Parse {tool: text} and merge the per-port views (ibstatus adds width/speed/state, ibv_devinfo the MTU)."""
    import dataclasses

    unknown = set(texts) - set(TOOLS)
    if unknown:
        raise ValueError(f"unknown tool(s) {sorted(unknown)}: supported are {TOOLS}")
    notes: list = []
    ports = ({(p.host, p.ca, p.port): p for p in parse_ibstat(texts["ibstat"], notes)} if "ibstat" in texts else {})
    extra = {}
    for rec in parse_ibstatus(texts["ibstatus"]) if "ibstatus" in texts else []:
        extra.setdefault((rec["host"], rec["ca"], rec["port"]), {}).update(
            width=rec.get("width", ""), speed=rec.get("speed", ""), rate_Gbps=rec.get("rate_Gbps", 0.0),
            state=rec.get("state", ""), physical_state=rec.get("physical_state", ""),
            link_layer=rec.get("link_layer", ""), base_lid=rec.get("base_lid", 0), sm_lid=rec.get("sm_lid", 0))
    for rec in parse_ibv_devinfo(texts["ibv_devinfo"]) if "ibv_devinfo" in texts else []:
        extra.setdefault((rec["host"], rec["ca"], rec["port"]), {}).update(
            active_mtu=rec.get("active_mtu", 0), firmware=rec.get("fw_ver", ""),
            **{k: rec[k] for k in ("state", "link_layer") if rec.get(k)})
    for key, upd in extra.items():
        base = ports.get(key) or PortStatus(*key)
        keep = ("rate_Gbps", "firmware", "state", "physical_state", "link_layer", "base_lid", "sm_lid")
        ports[key] = dataclasses.replace(base, **{k: v for k, v in upd.items() if v and not (
            k in keep and getattr(base, k))})
    counters = parse_perfquery(texts["perfquery"], notes) if "perfquery" in texts else []
    return Snapshot(source, list(ports.values()), counters,
                    parse_ibdiagnet(texts["ibdiagnet"]) if "ibdiagnet" in texts else None, tuple(sorted(texts)),
                    parse_iblinkinfo(texts["iblinkinfo"]) if "iblinkinfo" in texts else [],
                    parse_sminfo(texts["sminfo"]) if "sminfo" in texts else [], notes)


def scenarios() -> list[str]:
    """Names of the shipped sample scenarios ("healthy" first)."""
    names = sorted({p.name.split(".")[0] for p in DATA.glob("*.txt")})
    return ["healthy"] + [n for n in names if n != "healthy"] if "healthy" in names else names


def load_sample(name: str) -> Snapshot:
    if name not in scenarios():                  # a name from the fixed list: never a glob ('*') or a path ('../')
        raise ValueError(f"no sample scenario {name!r}; shipped: {scenarios()}")
    files = sorted(DATA.glob(f"{name}.*.txt"))
    if not files:
        raise ValueError(f"no sample scenario {name!r}; shipped: {scenarios()}")
    return snapshot({f.name.split(".")[1]: f.read_text() for f in files}, f"sample: {name}")


def sample_text(name: str, tool: str) -> str:
    if name not in scenarios() or not tool.isidentifier():
        raise ValueError(f"no sample {name!r}/{tool!r}; shipped scenarios: {scenarios()}")
    path = DATA / f"{name}.{tool}.txt"
    if not path.exists():
        raise ValueError(f"scenario {name!r} has no {tool} sample; it has "
                         f"{sorted(p.name.split('.')[1] for p in DATA.glob(name + '.*.txt'))}")
    return path.read_text()


def capture_live(timeout_s: float = 60.0) -> tuple[Snapshot | None, str]:
    """Run the tools found on PATH on this host. (None, reason) when none is installed.

    ibdiagnet sweeps the whole fabric and needs root; perfquery without arguments reads the local port."""
    cmds = {"ibstat": ["ibstat"], "ibstatus": ["ibstatus"], "ibv_devinfo": ["ibv_devinfo"],
            "perfquery": ["perfquery"], "ibdiagnet": ["ibdiagnet"], "iblinkinfo": ["iblinkinfo"],
            "sminfo": ["sminfo"]}
    found = {t: c for t, c in cmds.items() if shutil.which(c[0])}
    if not found:
        return None, ("no InfiniBand tools on PATH (ibstat, ibstatus, ibv_devinfo, perfquery, ibdiagnet, iblinkinfo, sminfo: "
                      "packages infiniband-diags, rdma-core/ibverbs-utils, ibdiagnet from DOCA/MLNX_OFED)")
    from helpers.core import inputs

    texts, notes = {}, []
    for tool, cmd in found.items():
        try:                                     # process group killed past the limit; output capped
            r = inputs.run_program(cmd, timeout_s=timeout_s, max_bytes=64 * 2**20)
        except inputs.ProgramFailed as e:
            notes.append(f"{tool}: {e}")
            continue
        if r.returncode == 0 and r.stdout.strip():
            texts[tool] = r.stdout
        else:
            notes.append(f"{tool}: exit {r.returncode}: {(r.stderr or r.stdout).strip()[:120]}")
    if "ibstat" not in texts and not texts:
        return None, "; ".join(notes) or "the tools printed nothing"
    return snapshot(texts, "live: this host"), "; ".join(notes) or f"ran {sorted(texts)}"
