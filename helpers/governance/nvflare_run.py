"""FedAvg with NVIDIA FLARE's simulator (chapter 17): the real framework, every site a process on this machine.

``run(clients, alpha, rounds)`` writes a job with NVFlare's ``NumpyFedAvgRecipe`` (server: FedAvg controller;
sites: ``helpers/governance/fl_client.py``), runs it in ``SimEnv`` inside a subprocess with a timeout, in a temporary
workspace, and returns the final global weights read from the server's model file. The subprocess keeps NVFlare's
logging and threads out of the caller, and nothing outlives the call: on timeout the process group is killed.

    python -m helpers.governance.nvflare_run --clients 3 --alpha 0.1 --rounds 3
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CLIENT = Path(__file__).resolve().parent / "fl_client.py"


def available() -> tuple[bool, str]:
    if importlib.util.find_spec("nvflare") is None:
        return False, "nvflare is not installed (pip install nvflare==2.9.0)"
    from importlib.metadata import version

    return True, f"nvflare {version('nvflare')}"


def _job(workspace: str, clients: int, alpha: float, rounds: int, epochs: int) -> None:
    """Runs inside the subprocess: build the recipe and run it in NVFlare's simulator."""
    import logging

    from nvflare.app_common.np.recipes.fedavg import NumpyFedAvgRecipe
    from nvflare.recipe.sim_env import SimEnv

    from helpers.governance import fedlearn

    logging.disable(logging.WARNING)
    recipe = NumpyFedAvgRecipe(name="fedavg", model=fedlearn.init_weights(), min_clients=clients, num_rounds=rounds,
                               train_script=str(CLIENT),
                               train_args=f"--clients {clients} --alpha {alpha} --epochs {epochs}")
    recipe.run(SimEnv(num_clients=clients, workspace_root=workspace))


def run(clients: int = 3, alpha: float = 0.1, rounds: int = 3, epochs: int = 5, timeout_s: float = 180):
    """Run the simulator; returns (global weights, seconds). Raises RuntimeError naming the failure."""
    ok, why = available()
    if not ok:
        raise RuntimeError(why)
    import time

    with tempfile.TemporaryDirectory(prefix="nvflare-") as ws:
        cmd = [sys.executable, "-m", "helpers.governance.nvflare_run", "--workspace", ws, "--clients", str(clients),
               "--alpha", str(alpha), "--rounds", str(rounds), "--epochs", str(epochs)]
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True, cwd=ws)
        try:
            log, _ = p.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise RuntimeError(f"NVFlare simulator still running after {timeout_s} s: killed (workspace {ws})")
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        dt = time.perf_counter() - t0
        models = sorted(Path(ws).rglob("server.npy"))
        if p.returncode != 0 or not models:
            tail = " | ".join(log.strip().splitlines()[-3:])
            raise RuntimeError(f"NVFlare simulator failed (exit {p.returncode}, model files {len(models)}): {tail}")
        return np.load(models[0]).reshape(-1, 3), dt


def main(argv: list[str] | None = None) -> int:
    """Run FedAvg in NVFlare's simulator (the subprocess half of ``run``)."""
    from helpers.core import cli

    ap = argparse.ArgumentParser(prog="python -m helpers nvflare", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", type=cli.nonempty_path,
                    help="simulator workspace (default: a temporary folder, removed afterwards)")
    ap.add_argument("--clients", type=cli.bounded_int(1, 64), default=3)
    ap.add_argument("--alpha", type=cli.bounded_float(0.0, 1e6, lo_open=True), default=0.1)
    ap.add_argument("--rounds", type=cli.bounded_int(1, 1000), default=3)
    ap.add_argument("--epochs", type=cli.bounded_int(1, 1000), default=5)
    a = ap.parse_args(argv)
    if a.workspace:                     # the subprocess half of run(): the caller owns the workspace
        _job(a.workspace, a.clients, a.alpha, a.rounds, a.epochs)
        return 0
    from helpers.governance import fedlearn

    w, dt = run(a.clients, a.alpha, a.rounds, a.epochs)
    xt, yt = fedlearn.make_data(2000, 1)
    print(f"NVFlare FedAvg: {a.clients} sites, alpha {a.alpha}, {a.rounds} rounds in {dt:.1f} s; "
          f"test accuracy {fedlearn.accuracy(w, xt, yt):.3f}")
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
