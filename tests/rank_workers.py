"""Worker functions for the launcher tests (importable, so spawn's child processes can load them)."""
import os
import time


def crash_on_one_hang_on_other(ctx):
    if ctx.rank == 1:
        raise ValueError("planted failure on rank 1")
    time.sleep(3600)  # rank 0 hangs: the launcher must kill it


def hang_on_rank(ctx, rank):
    if ctx.rank == rank:
        time.sleep(3600)
    return ctx.rank


def die_hard(ctx):
    if ctx.rank == 0:
        os._exit(7)  # no traceback: a segfault-like death
    time.sleep(3600)


def env_of(ctx):
    return {"rank": ctx.rank, "world": ctx.world_size, "backend": ctx.backend}


def stop_self_on_rank(ctx, rank):
    """The rank SIGSTOPs itself after joining (as a frozen or suspended process would); the others then wait in a
    collective for it."""
    import signal

    import torch
    import torch.distributed as dist

    if ctx.rank == rank:
        os.kill(os.getpid(), signal.SIGSTOP)
    dist.all_reduce(torch.ones(1))
    return ctx.rank


def start_child_and_hang(ctx, pidfile, hang_rank=None):
    """Each rank starts a long-lived child (as a data loader or a server would), records its pid, then hangs (only
    ``hang_rank`` hangs when given; the others return)."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    with open(f"{pidfile}.{ctx.rank}", "w") as f:
        f.write(str(child.pid))
    if hang_rank is None or ctx.rank == hang_rank:
        time.sleep(3600)
    return ctx.rank


def fill_tmp_and_hang(ctx):
    """Each rank writes into its TMPDIR and its inductor cache folder (as torch.compile would), says so, then hangs."""
    import tempfile
    from pathlib import Path

    cache = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"kernel{ctx.rank}.py").write_text("# a cached kernel")
    Path(tempfile.mkstemp(prefix="scratch-")[1]).write_text("x")
    print("ready", flush=True)                  # into the rank's log: the test waits for it
    time.sleep(3600)


def kill_self_on_rank(ctx, rank):
    """The rank is killed with SIGKILL (as the OOM killer would); the others then fail in a collective."""
    import signal

    import torch.distributed as dist

    dist.barrier()
    if ctx.rank == rank:
        os.kill(os.getpid(), signal.SIGKILL)
    dist.barrier()
    time.sleep(3600)


if __name__ == "__main__":      # `python -m tests.rank_workers`: env_of is __main__.env_of here, resolved by the launcher
    import json

    from helpers.core import launch

    print(json.dumps(launch.run(env_of, 2, timeout_s=60).results))
