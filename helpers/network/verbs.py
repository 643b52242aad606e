"""RDMA verbs in miniature: queue pairs, memory registration, one-sided and two-sided operations (chapter 3).

A verbs program registers memory with the NIC (``ibv_reg_mr``, which returns an ``lkey`` for local use and an
``rkey`` a peer must present), creates a queue pair (QP), walks it through RESET → INIT → RTR → RTS with
``ibv_modify_qp``, posts work requests and polls a completion queue (CQ). This module simulates that for two
reliable-connected (RC) QPs in one process, with the rules the rdma-core man pages and the InfiniBand spec state:

* ``ibv_modify_qp(3)``: the only forward path is RESET → INIT → RTR → RTS; any state may go to RESET or ERR;
  each step needs its attributes (INIT: port, P_Key index, access flags; RTR: the peer's QP number and PSN, path
  MTU; RTS: timeout, retry counts, send PSN).
* ``ibv_post_recv(3)`` is refused in RESET; ``ibv_post_send(3)`` needs RTS (IB spec 1.3, vol. 1, §10.3 and
  table 93 ff.). A QP in ERR flushes what is posted with ``IBV_WC_WR_FLUSH_ERR``.
* ``ibv_reg_mr(3)``: REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE is EINVAL.
* SEND consumes a receive the peer posted (two-sided; with none there the responder answers "receiver not ready",
  and when ``rnr_retry`` runs out the sender sees ``IBV_WC_RNR_RETRY_EXC_ERR``). RDMA WRITE and READ name a remote
  address and rkey and involve no receive and no completion at the peer (one-sided); a bad rkey, a range outside
  the region or a missing access right gives ``IBV_WC_REM_ACCESS_ERR`` and moves the requester's QP to ERR.

Nothing here touches a NIC: :func:`detect_rxe` says whether this machine has one (or the soft-RoCE driver), and
the chapter says which ran.
"""
from __future__ import annotations

import enum
import itertools
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC = 1, 2, 4, 8      # enum ibv_access_flags (verbs.h)


class QPState(enum.Enum):
    RESET = "RESET"
    INIT = "INIT"
    RTR = "RTR"      # ready to receive
    RTS = "RTS"      # ready to send
    ERR = "ERR"


# ibv_modify_qp(3): forward transitions and the attributes each one requires
REQUIRED = {(QPState.RESET, QPState.INIT): {"pkey_index", "port_num", "qp_access_flags"},
            (QPState.INIT, QPState.RTR): {"dest_qp_num", "rq_psn", "path_mtu", "ah_attr"},
            (QPState.RTR, QPState.RTS): {"sq_psn", "timeout", "retry_cnt", "rnr_retry"}}


class VerbsError(ValueError):
    """A verb the spec refuses (the real library returns EINVAL); the message says what to do instead."""


@dataclass(frozen=True)
class WorkCompletion:
    wr_id: int
    status: str          # "IBV_WC_SUCCESS", "IBV_WC_REM_ACCESS_ERR", ...
    opcode: str          # "SEND", "RECV", "RDMA_WRITE", "RDMA_READ"
    byte_len: int
    qp_num: int


@dataclass
class MemoryRegion:
    buf: bytearray
    access: int
    lkey: int
    rkey: int


@dataclass
class Host:
    """One side: its memory regions and completion queue, and a count of the verbs its CPU had to call."""
    name: str
    mrs: dict[int, MemoryRegion] = field(default_factory=dict)
    cq: list[WorkCompletion] = field(default_factory=list)
    cpu_verbs: int = 0
    _keys = itertools.count(0x1000, 0x101)

    def reg_mr(self, size_bytes: int, access: int) -> MemoryRegion:
        """``ibv_reg_mr``: pin and register ``size_bytes``; returns the region with its lkey and rkey."""
        if size_bytes < 1:
            raise VerbsError(f"reg_mr size {size_bytes}: register at least one byte")
        if access & (REMOTE_WRITE | REMOTE_ATOMIC) and not access & LOCAL_WRITE:
            raise VerbsError(f"reg_mr access {access:#x}: REMOTE_WRITE/REMOTE_ATOMIC need LOCAL_WRITE too "
                             "(ibv_reg_mr(3) returns EINVAL); add verbs.LOCAL_WRITE")
        self.cpu_verbs += 1
        k = next(self._keys)
        mr = MemoryRegion(bytearray(size_bytes), access, lkey=k, rkey=k + 0x80)
        self.mrs[mr.lkey] = mr
        return mr

    def by_rkey(self, rkey: int) -> MemoryRegion | None:
        return next((m for m in self.mrs.values() if m.rkey == rkey), None)

    def poll_cq(self, n: int = 16) -> list[WorkCompletion]:
        """``ibv_poll_cq``: take up to ``n`` completions, oldest first."""
        self.cpu_verbs += 1
        got, self.cq[:] = self.cq[:n], self.cq[n:]
        return got


class QueuePair:
    """An RC queue pair of ``host``; ``connect``-ed to a peer by the RTR attributes, as the real ones are."""
    _nums = itertools.count(0x11)

    def __init__(self, host: Host):
        self.host, self.num, self.state = host, next(self._nums), QPState.RESET
        self.attrs: dict = {}
        self.peer: QueuePair | None = None
        self.recvs: list[tuple[int, int, int, int]] = []        # (wr_id, lkey, offset, length)
        self.rnr_naks = 0

    def modify(self, to: QPState, **attrs) -> None:
        """``ibv_modify_qp``: refuse a transition the spec does not allow, or one missing a required attribute."""
        self.host.cpu_verbs += 1
        if to in (QPState.RESET, QPState.ERR):
            if to is QPState.ERR:
                self._flush()
            self.state, self.recvs = to, ([] if to is QPState.RESET else self.recvs)
            return
        need = REQUIRED.get((self.state, to))
        if need is None:
            raise VerbsError(f"modify_qp {self.state.value} → {to.value} is not a legal transition; "
                             "the path is RESET → INIT → RTR → RTS (ibv_modify_qp(3))")
        missing = need - attrs.keys()
        if missing:
            raise VerbsError(f"modify_qp {self.state.value} → {to.value} needs {sorted(missing)}")
        self.attrs.update(attrs)
        self.state = to

    def post_recv(self, wr_id: int, mr: MemoryRegion, offset: int = 0, length: int | None = None) -> None:
        """``ibv_post_recv``: hand the NIC a buffer for the next incoming SEND (legal from INIT on)."""
        self.host.cpu_verbs += 1
        if self.state is QPState.RESET:
            raise VerbsError("post_recv in RESET: move the QP to INIT first (ibv_post_recv(3))")
        length = len(mr.buf) - offset if length is None else length
        self.recvs.append((wr_id, mr.lkey, offset, length))
        if self.state is QPState.ERR:
            self._flush()

    def post_send(self, wr_id: int, opcode: str, mr: MemoryRegion, offset: int = 0, length: int | None = None,
                  remote_addr: int = 0, rkey: int = 0) -> None:
        """``ibv_post_send`` of SEND, RDMA_WRITE or RDMA_READ; the transfer and its completions happen at once."""
        self.host.cpu_verbs += 1
        if opcode not in ("SEND", "RDMA_WRITE", "RDMA_READ"):
            raise VerbsError(f"opcode {opcode!r}: use SEND, RDMA_WRITE or RDMA_READ")
        if self.state is not QPState.RTS:
            raise VerbsError(f"post_send in {self.state.value}: a QP sends only in RTS (ibv_post_send(3))")
        length = len(mr.buf) - offset if length is None else length
        if mr.lkey not in self.host.mrs or offset + length > len(mr.buf):
            return self._fail(wr_id, opcode, "IBV_WC_LOC_PROT_ERR")
        peer = self.peer
        local = mr.buf[offset:offset + length]
        if opcode == "SEND":
            if not peer.recvs:
                self.rnr_naks += 1
                if self.rnr_naks > self.attrs.get("rnr_retry", 0):
                    return self._fail(wr_id, opcode, "IBV_WC_RNR_RETRY_EXC_ERR")
                return None                                       # the real NIC retries after min_rnr_timer
            rid, lkey, roff, rlen = peer.recvs.pop(0)
            if length > rlen:
                peer.host.cq.append(WorkCompletion(rid, "IBV_WC_LOC_LEN_ERR", "RECV", 0, peer.num))
                peer.modify(QPState.ERR)
                return self._fail(wr_id, opcode, "IBV_WC_REM_INV_REQ_ERR")
            peer.host.mrs[lkey].buf[roff:roff + length] = local
            peer.host.cq.append(WorkCompletion(rid, "IBV_WC_SUCCESS", "RECV", length, peer.num))
        else:
            need = REMOTE_WRITE if opcode == "RDMA_WRITE" else REMOTE_READ
            target = peer.host.by_rkey(rkey)
            if (target is None or not target.access & need or not peer.attrs["qp_access_flags"] & need
                    or remote_addr < 0 or remote_addr + length > len(target.buf)):
                return self._fail(wr_id, opcode, "IBV_WC_REM_ACCESS_ERR")
            if opcode == "RDMA_WRITE":
                target.buf[remote_addr:remote_addr + length] = local
            else:
                mr.buf[offset:offset + length] = target.buf[remote_addr:remote_addr + length]
        self.host.cq.append(WorkCompletion(wr_id, "IBV_WC_SUCCESS", opcode, length, self.num))
        return None

    def _fail(self, wr_id, opcode, status) -> None:
        self.host.cq.append(WorkCompletion(wr_id, status, opcode, 0, self.num))
        self.state = QPState.ERR
        self._flush()

    def _flush(self) -> None:
        for rid, *_ in self.recvs:
            self.host.cq.append(WorkCompletion(rid, "IBV_WC_WR_FLUSH_ERR", "RECV", 0, self.num))
        self.recvs = []


def connect(a: QueuePair, b: QueuePair, access: int = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ,
            rnr_retry: int = 7) -> None:
    """The usual bring-up of an RC pair: each side RESET → INIT → RTR (with the other's QP number) → RTS."""
    for me, other in ((a, b), (b, a)):
        me.modify(QPState.INIT, pkey_index=0, port_num=1, qp_access_flags=access)
    for me, other in ((a, b), (b, a)):
        me.modify(QPState.RTR, dest_qp_num=other.num, rq_psn=0, path_mtu=4096, ah_attr={"dlid": other.num})
        me.peer = other
    for me in (a, b):
        me.modify(QPState.RTS, sq_psn=0, timeout=14, retry_cnt=7, rnr_retry=rnr_retry)


def demo(size_bytes: int = 4096) -> list[dict]:
    """Move one buffer three ways between two hosts and count what each side's CPU did and saw."""
    rows = []
    for op in ("SEND", "RDMA_WRITE", "RDMA_READ"):
        a, b = Host("initiator"), Host("target")
        qa, qb = QueuePair(a), QueuePair(b)
        connect(qa, qb)
        src, dst = a.reg_mr(size_bytes, LOCAL_WRITE), b.reg_mr(size_bytes, LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ)
        pattern = bytes(i % 251 for i in range(size_bytes))
        (dst if op == "RDMA_READ" else src).buf[:] = pattern
        before = (a.cpu_verbs, b.cpu_verbs)
        if op == "SEND":
            qb.post_recv(1, dst)
        qa.post_send(2, op, src, remote_addr=0, rkey=dst.rkey)
        ca, cb = a.poll_cq(), b.poll_cq() if op == "SEND" else []
        landed = (src if op == "RDMA_READ" else dst).buf == pattern
        rows.append({"op": op, "kind": "two-sided" if op == "SEND" else "one-sided", "size_bytes": size_bytes,
                     "data_correct": landed, "initiator_verbs": a.cpu_verbs - before[0],
                     "target_verbs": b.cpu_verbs - before[1], "initiator_completions": len(ca),
                     "target_completions": len(cb)})
    return rows


def detect_rxe() -> tuple[bool, str]:
    """Whether this machine has an RDMA device (a NIC or soft-RoCE ``rxe``), and how we know."""
    ib = Path("/sys/class/infiniband")
    if ib.is_dir() and any(ib.iterdir()):
        return True, f"RDMA devices in {ib}: {', '.join(sorted(p.name for p in ib.iterdir()))}"
    if shutil.which("rdma") is None:
        return False, "no RDMA device and no `rdma` tool (iproute2): the simulator runs instead"
    try:
        p = subprocess.run(["rdma", "link", "show"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"`rdma link show` failed ({type(e).__name__}): the simulator runs instead"
    msg = (p.stderr or p.stdout).strip().splitlines()
    return False, (f"no RDMA device; `rdma link show` says: {msg[0] if msg else 'nothing'} — the kernel here "
                   "offers no RDMA netlink (so no `rdma link add rxe0 type rxe`): the simulator runs instead")



def pingpong(device: str | None = None, iters: int = 1000, size_bytes: int = 4096, timeout_s: float = 20.0) -> str:
    """A real RC ping-pong through the verbs library (rdma-core's ``ibv_rc_pingpong``) between two processes on this
    host, over ``device`` (the first RDMA device if None; an ``rxe`` device works). Returns the client's report."""
    import time

    from helpers.core import launch

    ok, why = detect_rxe()
    if not ok:
        raise ValueError(f"no RDMA device to ping-pong over: {why}")
    exe = shutil.which("ibv_rc_pingpong")
    if exe is None:
        raise ValueError("ibv_rc_pingpong is missing: install rdma-core's ibverbs-utils (apt install ibverbs-utils)")
    dev = device or sorted(p.name for p in Path("/sys/class/infiniband").iterdir())[0]
    port = launch.free_port()
    args = [exe, "-d", dev, "-g", "0", "-p", str(port), "-n", str(iters), "-s", str(size_bytes)]
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(0.5)
        client = subprocess.run(args + ["127.0.0.1"], capture_output=True, text=True, timeout=timeout_s)
        if client.returncode != 0:
            raise ValueError(f"ibv_rc_pingpong on {dev} failed (rc {client.returncode}): "
                             f"{(client.stderr or client.stdout).strip()[-300:]}")
        return client.stdout.strip()
    finally:
        server.kill()
        server.wait(timeout=5)

# The software stack from a training job down to the wire: (layer, components, bracket it belongs to);
# helpers.figures.network.stack_figure draws it
STACK = [("framework", "PyTorch · DeepSpeed · Megatron", None),
         ("communication libraries", "NCCL · NVSHMEM · UCX · cuFile (GPUDirect Storage)", "Magnum IO"),
         ("in-network / plug-ins", "SHARP (collectives in the switch) · nccl-rdma-sharp · nvidia-peermem", "Magnum IO"),
         ("user-space verbs", "rdma-core: libibverbs · librdmacm · provider (mlx5, rxe)", "OFED"),
         ("kernel", "ib_core · mlx5_ib · rdma_rxe (soft-RoCE) · dma-buf · GPU driver", "OFED"),
         ("diagnostics and SM", "ibstat · perfquery · ibdiagnet · OpenSM", "OFED"),
         ("hardware", "ConnectX HCA / NIC · BlueField DPU · GPU · PCIe switch · NVLink", None)]
