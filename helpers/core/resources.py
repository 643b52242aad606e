"""Up-front resource checks: a size the machine cannot hold is refused before the run starts (every sized tool).

A tool estimates the bytes its arguments need with the same formulas it runs on (``helpers.formulas``, its own
shapes), then calls :func:`require_memory` / :func:`require_disk` before allocating anything:

    resources.require_memory(2**n * 16, what=f"a {n}-qubit state vector (complex128)", flag="--qubits")

Too much is refused with the book's bad-input error (:class:`NotEnough`, a ``ValueError``: exit 2, one line) naming
the bytes needed, what the machine has and the flag to change — instead of the run being killed by the kernel's
out-of-memory killer, or a disk filling up, minutes later. What the machine has:

* memory: ``MemAvailable`` of ``/proc/meminfo``, capped by the cgroup's ``memory.max`` (a container's limit);
* GPU memory: ``torch.cuda.mem_get_info`` of the device, when the run is on a GPU;
* disk: ``os.statvfs`` of the folder (or its nearest existing parent) — the blocks an unprivileged user may use.

Only a fraction is offered (:data:`MEMORY_FRACTION`, :data:`DISK_FRACTION`): Python, torch and the page cache need
the rest. Imports no other helper.
"""
from __future__ import annotations

import os
from pathlib import Path

MEMORY_FRACTION = 0.8
DISK_FRACTION = 0.9


class NotEnough(ValueError):
    """A size argument needs more memory or disk than the machine has (bad input: change the flag)."""


def fmt_bytes(n: float) -> str:
    """``1.5 GiB``: binary units, as the book's units legend writes memory sizes."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def _cgroup_limit() -> int | None:
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:
            return int(text)
    return None


def available_memory_bytes() -> int:
    """Memory a new allocation can get now: MemAvailable, capped by the cgroup limit (a container's)."""
    avail = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:                           # no /proc (macOS): total physical memory
        avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limit = _cgroup_limit()
    return min(avail, limit) if limit else avail


def available_gpu_bytes(device: str | int | None = None) -> int | None:
    """Free memory of a CUDA device (``torch.cuda.mem_get_info``); None when no GPU is in use."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        import torch                             # noqa: F811 - only when a GPU run asks
    if not torch.cuda.is_available():
        return None
    free, _total = torch.cuda.mem_get_info(torch.device(device if device is not None else "cuda"))
    return int(free)


def free_disk_bytes(path: str | os.PathLike) -> int:
    """Bytes an unprivileged user may still write where ``path`` is (or would be created)."""
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    st = os.statvfs(p)
    return st.f_bavail * st.f_frsize


def require_memory(bytes_needed: float, *, what: str, flag: str, device: str | None = None,
                   fraction: float = MEMORY_FRACTION) -> int:
    """Refuse (:class:`NotEnough`) when ``bytes_needed`` exceeds ``fraction`` of the memory available — of the
    GPU when ``device`` is a CUDA device, else of the host. Returns the bytes available."""
    on_gpu = device is not None and str(device).startswith("cuda")
    avail = available_gpu_bytes(device) if on_gpu else None
    where = "free on the GPU" if avail is not None else "available"
    if avail is None:
        avail = available_memory_bytes()
    if bytes_needed > fraction * avail:
        raise NotEnough(f"{what} needs {fmt_bytes(bytes_needed)} of memory but this machine has "
                        f"{fmt_bytes(avail)} {where} (the limit is {fraction:.0%} of it, "
                        f"{fmt_bytes(fraction * avail)}): lower {flag}")
    return avail


def require_disk(path: str | os.PathLike, bytes_needed: float, *, what: str, flag: str,
                 fraction: float = DISK_FRACTION) -> int:
    """Refuse (:class:`NotEnough`) when ``bytes_needed`` exceeds ``fraction`` of the free space at ``path``.
    Returns the bytes free."""
    free = free_disk_bytes(path)
    if bytes_needed > fraction * free:
        raise NotEnough(f"{what} needs {fmt_bytes(bytes_needed)} on disk but {path} has {fmt_bytes(free)} free "
                        f"(the limit is {fraction:.0%} of it, {fmt_bytes(fraction * free)}): lower {flag} "
                        "or write to a larger filesystem")
    return free
