"""The text Slurm reads and writes: ``slurm.conf``/``gres.conf`` lines, jobcomp records and ``sacct`` output
(chapters 13 and 27).

    from helpers.ops import slurmtext
    slurmtext.slurm_conf(Path("/tmp/x"), "node1", cpus=8, memory_MB=2000, gpus=2, ports=(6817, 6818))
    slurmtext.gres_lines("gpu01", 8)                  # what a real 8-GPU node declares
    slurmtext.parse_sacct(text)                       # --parsable2 or the fixed-width table → DataFrame

``helpers.ops.slurm`` writes the first for its private one-node cluster and reads finished jobs with
:func:`parse_jobcomp` (``jobcomp/filetxt``: a laptop lab has no slurmdbd for ``sacct``); :func:`parse_sacct` reads
real ``sacct`` output from clusters that have one. Pure text in, text or tables out: nothing here needs Slurm.
"""
from __future__ import annotations

import re
from pathlib import Path


# ---- configuration ------------------------------------------------------------------------------------------

def slurm_conf(tmp: Path, host: str, cpus: int, memory_MB: int, gpus: int, ports: tuple[int, int],
               backfill: bool = True) -> str:
    """The slurm.conf of a private one-node cluster whose files all live under ``tmp`` (see ``helpers.ops.slurm``):
    daemons on 127.0.0.1 at ``ports`` (slurmctld, slurmd), jobcomp instead of slurmdbd, ``gpus`` stand-in GPUs."""
    gres = f" Gres=gpu:{gpus}" if gpus else ""
    lines = [
        "ClusterName=book", f"SlurmctldHost={host}(127.0.0.1)", "SlurmUser=root", "AuthType=auth/munge",
        f"AuthInfo=socket={tmp / 'munge' / 'munge.socket'}", "CommunicationParameters=NoInAddrAny",
        f"SlurmctldPort={ports[0]}", f"SlurmdPort={ports[1]}",
        f"StateSaveLocation={tmp / 'state'}", f"SlurmdSpoolDir={tmp / 'spool'}",
        f"SlurmctldPidFile={tmp / 'slurmctld.pid'}", f"SlurmdPidFile={tmp / 'slurmd.pid'}",
        f"SlurmctldLogFile={tmp / 'slurmctld.log'}", f"SlurmdLogFile={tmp / 'slurmd.log'}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU", "DefMemPerCPU=100", "SlurmdParameters=config_overrides", "ReturnToService=2",
        f"SchedulerType=sched/{'backfill' if backfill else 'builtin'}",
        "SchedulerParameters=bf_interval=1,bf_resolution=1,sched_interval=1,defer_batch",
        "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/filetxt",
        f"JobCompLoc={tmp / 'jobcomp.log'}", "JobAcctGatherType=jobacct_gather/none", "MpiDefault=none",
        "InactiveLimit=0", "KillWait=2", "MinJobAge=300", "SlurmctldTimeout=30", "SlurmdTimeout=30",
        "GresTypes=gpu" if gpus else "",
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_MB}{gres} State=UNKNOWN",
        f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP",
    ]
    return "\n".join(x for x in lines if x) + "\n"


def gres_lines(node: str, gpus: int, gpu_type: str = "h200", cpus: int = 128, memory_MB: int = 2_000_000) -> str:
    """The slurm.conf and gres.conf lines of a GPU node (what a real 8-GPU server would declare)."""
    if gpus < 1:
        raise ValueError(f"gpus={gpus}: a GPU node declares at least one GPU")
    return (f"# slurm.conf\nGresTypes=gpu\nNodeName={node} CPUs={cpus} RealMemory={memory_MB} "
            f"Gres=gpu:{gpu_type}:{gpus} State=UNKNOWN\n"
            f"# gres.conf\nNodeName={node} Name=gpu Type={gpu_type} File=/dev/nvidia[0-{gpus - 1}]\n")


# ---- parsing ------------------------------------------------------------------------------------------------

def parse_jobcomp(text: str) -> list[dict[str, str]]:
    """jobcomp/filetxt lines (``JobId=3 UserId=root(0) … JobState=COMPLETED … StartTime=… EndTime=…``)."""
    out = []
    for line in text.splitlines():
        if line.strip():
            out.append(dict(re.findall(r"(\w+)=(\S*)", line)))
    return out


def parse_sacct(text: str):
    """``sacct`` output, either ``--parsable2`` (``|``-separated) or the default fixed-width table (header, dashes),
    into a DataFrame; ``ExitCode`` ``a:b`` becomes ``exit_code`` and ``signal``; steps (``123.batch``) keep their id."""
    import pandas as pd

    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ValueError("empty sacct output")
    if "|" in lines[0]:
        header = lines[0].split("|")
        rows = [ln.split("|") for ln in lines[1:]]
        rows = [r[:len(header)] for r in rows]
        df = pd.DataFrame(rows, columns=header)
    else:
        if len(lines) < 2 or not set(lines[1].replace(" ", "")) <= {"-"}:
            raise ValueError("fixed-width sacct output needs its header and the dashes line under it")
        spans, pos = [], 0
        for m in re.finditer(r"-+", lines[1]):
            spans.append((m.start(), m.end()))
            pos = m.end()
        header = [lines[0][a:b + 1].strip() for a, b in spans]
        rows = [[ln[a:b + 1].strip() for a, b in spans] for ln in lines[2:]]
        df = pd.DataFrame(rows, columns=header)
    if "ExitCode" in df:
        parts = df["ExitCode"].str.split(":", expand=True)
        df["exit_code"], df["signal"] = parts[0].astype(int), parts[1].astype(int)
    if "JobID" in df:
        df["is_step"] = df["JobID"].str.contains(r"\.", regex=True)
    return df
