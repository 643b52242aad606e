"""A real single-node Slurm (Debian slurm-wlm 22.05 + munge), started and stopped by the book's own code, with jobs
submitted by ``sbatch``/``srun`` and their accounting parsed (chapters 13 and 27).

Everything — munge key and socket, slurm.conf, gres.conf, state, logs, job output — lives in one temporary folder;
the daemons listen on 127.0.0.1 on free ports (``CommunicationParameters=NoInAddrAny``), run in the foreground as
children of this process and are stopped by their PIDs in ``finally``. Without systemd the node uses
``proctrack/linuxproc`` and ``task/none``; ``SlurmdParameters=config_overrides`` lets the node declare more CPUs than
the machine has, so a 2-core laptop can play an 8-CPU node for scheduling labs (jobs only sleep).

    from helpers.ops import slurm
    with slurm.cluster(cpus=8, gpus=2) as c:
        jid = c.sbatch("#!/bin/bash\\nsleep 1\\n", cpus=2, time_min=1)
        c.wait([jid])
        c.jobs()                      # jobcomp records: id, name, state, start/end, nodes, exit code
    python -m helpers slurm demo      # the same from a shell; scripts/services/slurm.sh start|stop for a session

``sacct`` needs slurmdbd and a database, which a laptop lab does without: finished jobs are read from the jobcomp
file (``jobcomp/filetxt``). The configuration text and the parsers (``sacct`` output from real clusters) are in
``helpers.ops.slurmtext``.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from helpers.core import launch
from helpers.core import procs as core_procs
from helpers.ops import slurmtext

DAEMONS = ("munged", "slurmctld", "slurmd")


def find() -> dict[str, str | None]:
    return {t: shutil.which(t) or (f"/usr/sbin/{t}" if Path(f"/usr/sbin/{t}").exists() else None)
            for t in (*DAEMONS, "sbatch", "srun", "squeue", "scontrol", "sinfo")}


def available() -> tuple[bool, str]:
    missing = [t for t, p in find().items() if p is None]
    if missing:
        return False, f"not installed: {', '.join(missing)} (Debian: apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return False, "a private Slurm needs root here (slurmd starts jobs as their users); run as root or in CI"
    return True, "slurm-wlm and munge present"


class Cluster:
    def __init__(self, tmp: Path, host: str, env: dict[str, str], procs: dict[str, subprocess.Popen]):
        self.tmp, self.host, self.env, self.procs = tmp, host, env, procs

    def run(self, *cmd: str, timeout_s: float = 60.0, check: bool = True, input: str | None = None) -> str:
        p = subprocess.run(list(cmd), capture_output=True, text=True, env=self.env, timeout=timeout_s, input=input)
        if check and p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-600:]}")
        return p.stdout

    def sbatch(self, script: str, name: str = "book", cpus: int = 1, time_min: int = 1, gpus: int = 0,
               extra: tuple[str, ...] = ()) -> int:
        """Submit ``script`` (its text) and return the job id; output goes to the cluster's folder."""
        args = ["sbatch", "--parsable", f"--job-name={name}", f"--cpus-per-task={cpus}", f"--time={time_min}",
                f"--output={self.tmp / 'out' / '%j.out'}", f"--chdir={self.tmp / 'out'}", *extra]
        if gpus:
            args.append(f"--gres=gpu:{gpus}")
        return int(self.run(*args, input=script).strip().split(";")[0])

    def squeue(self) -> list[dict[str, str]]:
        out = self.run("squeue", "--noheader", "--format=%i|%j|%T|%C|%S|%r")
        keys = ("job_id", "name", "state", "cpus", "start_time", "reason")
        return [dict(zip(keys, line.split("|"))) for line in out.splitlines() if line.strip()]

    def wait(self, job_ids: list[int], timeout_s: float = 120.0) -> list[dict[str, str]]:
        """Until every job in ``job_ids`` is in the jobcomp file (finished); returns their records."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            done = {int(j["JobId"]): j for j in self.jobs()}
            if all(j in done for j in job_ids):
                return [done[j] for j in job_ids]
            time.sleep(0.3)
        raise TimeoutError(f"jobs {job_ids} not finished after {timeout_s} s; queue: {self.squeue()}")

    def jobs(self) -> list[dict[str, str]]:
        path = self.tmp / "jobcomp.log"
        return slurmtext.parse_jobcomp(path.read_text()) if path.exists() else []

    def node_state(self) -> tuple[str, str]:
        out = self.run("sinfo", "--noheader", "-N", "--format=%T|%E", "-n", self.host)
        state, _, reason = out.strip().partition("|")
        return state, reason

    def drain(self, reason: str) -> None:
        self.run("scontrol", "update", f"nodename={self.host}", "state=drain", f"reason={reason}")

    def resume(self) -> None:
        self.run("scontrol", "update", f"nodename={self.host}", "state=resume")

    def output(self, job_id: int) -> str:
        return (self.tmp / "out" / f"{job_id}.out").read_text()


def leftovers(conf: Path) -> list[int]:
    """PIDs of processes started for this cluster (their environment names its slurm.conf): job steps included."""
    tag = f"SLURM_CONF={conf}".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if tag in (d / "environ").read_bytes().split(b"\0"):
                    pids.append(int(d.name))
            except OSError:
                continue
    return pids


def _stop(procs: dict[str, subprocess.Popen], env: dict[str, str] | None, conf: Path) -> None:
    if env is not None and procs.get("slurmctld") is not None and procs["slurmctld"].poll() is None:
        subprocess.run(["scancel", "--full", "--partition=debug"], env=env, capture_output=True, timeout=20)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            q = subprocess.run(["squeue", "--noheader"], env=env, capture_output=True, text=True, timeout=10)
            if q.returncode != 0 or not q.stdout.strip():
                break
            time.sleep(0.3)
    for name in ("slurmd", "slurmctld", "munged"):
        core_procs.stop_process(procs.get(name), timeout_s=15)
    for pid in leftovers(conf):                # a job step that outlived slurmd: ours, stopped by its PID
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)


@contextlib.contextmanager
def cluster(cpus: int = 8, gpus: int = 0, memory_MB: int = 2000, backfill: bool = True, timeout_s: float = 60.0):
    """A private one-node Slurm for the duration of the block (see the module docstring)."""
    ok, why = available()
    if not ok:
        raise FileNotFoundError(why)
    tools = find()
    tmp = Path(tempfile.mkdtemp(prefix="slurm-"))
    procs: dict[str, subprocess.Popen] = {}
    host = socket.gethostname().split(".")[0]
    env = None
    conf = tmp / "slurm.conf"
    try:
        for d in ("state", "spool", "out", "munge"):
            (tmp / d).mkdir()
        tmp.chmod(0o755)
        munge = pwd.getpwnam("munge")
        key = tmp / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        for p in (tmp / "munge", key):
            os.chown(p, munge.pw_uid, munge.pw_gid)
        (tmp / "munge").chmod(0o700)
        key.chmod(0o400)
        conf.write_text(slurmtext.slurm_conf(tmp, host, cpus, memory_MB, gpus, (launch.free_port(), launch.free_port()), backfill))
        if gpus:             # stand-in GPUs: character devices like /dev/null (1,3); Slurm binds them, nothing computes
            for i in range(gpus):
                os.mknod(tmp / f"nvidia{i}", stat.S_IFCHR | 0o666, os.makedev(1, 3))
            (tmp / "gres.conf").write_text(f"AutoDetect=off\nNodeName={host} Name=gpu File={tmp}/nvidia[0-{gpus - 1}]\n")
        env = {**os.environ, "SLURM_CONF": str(conf)}
        log = open(tmp / "daemons.log", "w")
        m = tmp / "munge"
        procs["munged"] = subprocess.Popen(
            ["setpriv", f"--reuid={munge.pw_uid}", f"--regid={munge.pw_gid}", "--clear-groups", tools["munged"],
             "--foreground", "--force", f"--socket={m / 'munge.socket'}", f"--key-file={key}",
             f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}", f"--seed-file={m / 'munged.seed'}"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        _wait(lambda: (m / "munge.socket").exists(), procs, "munged", tmp / "munge" / "munged.log", timeout_s)
        for d in ("slurmctld", "slurmd"):
            procs[d] = subprocess.Popen([tools[d], "-D", "-f", str(conf)], env=env, stdout=log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        c = Cluster(tmp, host, env, procs)

        def node_up() -> bool:
            p = subprocess.run([tools["sinfo"], "--noheader", "-N", "--format=%T"], env=env, capture_output=True,
                               text=True, timeout=10)
            return p.returncode == 0 and p.stdout.strip().rstrip("*") in ("idle", "mixed", "allocated")
        _wait(node_up, procs, "slurmd", tmp / "slurmd.log", timeout_s)
        yield c
    finally:
        _stop(procs, env, conf)
        shutil.rmtree(tmp, ignore_errors=True)


def _wait(ready, procs, name: str, log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        dead = [n for n, p in procs.items() if p.poll() is not None]
        if dead:
            tail = log.read_text()[-800:] if log.exists() else ""
            raise RuntimeError(f"{', '.join(dead)} exited during start-up; {log.name}: {tail}")
        if time.monotonic() > deadline:
            tail = log.read_text()[-800:] if log.exists() else ""
            raise TimeoutError(f"{name} not ready after {timeout_s} s; {log.name}: {tail}")
        time.sleep(0.2)


def run_trace(c: Cluster, jobs, timeout_s: float = 120.0) -> dict[int, float]:
    """Submit a schedsim trace (``size`` = CPUs, ``runtime_s`` = a sleep, ``limit_s`` = ``--time``) held, release
    it at once so Slurm sees the whole queue together, and return {trace id: start time in s after the first start}."""
    import datetime as dt

    ids = {}
    for j in jobs:
        if j.limit_s % 60:
            raise ValueError(f"job {j.id}: limit_s={j.limit_s} is not whole minutes (Slurm keeps --time in minutes)")
        ids[c.sbatch(f"#!/bin/bash\nsleep {j.runtime_s:g}\n", name=f"trace{j.id}", cpus=j.size,
                     time_min=int(j.limit_s // 60), extra=("--hold",))] = j.id
    c.run("scontrol", "release", ",".join(str(k) for k in ids))
    recs = c.wait(list(ids), timeout_s=timeout_s)
    starts = {ids[int(r["JobId"])]: dt.datetime.fromisoformat(r["StartTime"]).timestamp() for r in recs}
    t0 = min(starts.values())
    return {k: v - t0 for k, v in starts.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers slurm", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check", help="say whether a private Slurm can start here")
    sub.add_parser("demo", help="start a one-node Slurm, run two jobs, print their records, stop it")
    args = ap.parse_args(argv)
    ok, why = available()
    if args.cmd == "check" or not ok:
        print(why)
        return 0 if ok else 1
    with cluster(cpus=4) as c:
        ids = [c.sbatch("#!/bin/bash\nhostname; echo $SLURM_JOB_ID\n", name=f"demo{i}") for i in range(2)]
        for j in c.wait(ids):
            print({k: j.get(k) for k in ("JobId", "Name", "JobState", "StartTime", "EndTime", "ExitCode")})
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
