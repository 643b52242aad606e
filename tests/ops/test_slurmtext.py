"""helpers.ops.slurmtext: slurm.conf/gres.conf text, jobcomp records and sacct output (real outputs; no Slurm needed)."""
from pathlib import Path

import pytest

from helpers.ops import slurmtext

REAL = Path(__file__).parents[1] / "data" / "real" / "sacct"


def test_parsable2():
    df = slurmtext.parse_sacct((REAL / "cluster-utils-87-parsable2.txt").read_text())
    assert len(df) == 16
    alloc = df[~df.is_step]
    assert (alloc.State == "COMPLETED").all() and len(alloc) == 4
    steps0 = df[df.JobID.str.endswith(".0")]
    assert (steps0.State == "CANCELLED").all() and (steps0.signal == 10).all()


def test_fixed_width_with_blank_cells():
    df = slurmtext.parse_sacct((REAL / "soperator-321-fixed-width.txt").read_text())
    assert len(df) == 7 and list(df.columns[:3]) == ["JobID", "JobName", "AllocCPUS"]
    assert df.loc[df.JobID == "20", "MaxRSS"].item() == ""
    assert set(df.loc[df.JobID.isin(["20", "21"]), "State"]) == {"FAILED"}
    assert df.loc[df.JobID == "22", "State"].item() == "COMPLETED"


def test_array_job_exit_codes():
    df = slurmtext.parse_sacct((REAL / "slurm-minus-9-array.txt").read_text())
    assert list(df.exit_code) == [1, 1] and list(df.State) == ["FAILED", "FAILED"]


def test_bad_sacct_text():
    with pytest.raises(ValueError):
        slurmtext.parse_sacct("")
    with pytest.raises(ValueError, match="dashes"):
        slurmtext.parse_sacct("JobID State\n1 COMPLETED\n")


def test_gres_lines():
    text = slurmtext.gres_lines("gpu01", 8)
    assert "Gres=gpu:h200:8" in text and "File=/dev/nvidia[0-7]" in text
    with pytest.raises(ValueError):
        slurmtext.gres_lines("gpu01", 0)


def test_slurm_conf_for_the_private_node():
    text = slurmtext.slurm_conf(Path("/tmp/s"), "node1", cpus=8, memory_MB=2000, gpus=2, ports=(6817, 6818))
    assert "SlurmctldPort=6817" in text and "SlurmdPort=6818" in text and "Gres=gpu:2" in text
    assert "GresTypes=gpu" in text and "JobCompLoc=/tmp/s/jobcomp.log" in text and "sched/backfill" in text
    plain = slurmtext.slurm_conf(Path("/tmp/s"), "node1", 4, 1000, 0, (1, 2), backfill=False)
    assert "GresTypes" not in plain and "Gres=" not in plain and "sched/builtin" in plain


def test_parse_jobcomp():
    (j,) = slurmtext.parse_jobcomp("JobId=3 UserId=root(0) Name=a JobState=COMPLETED StartTime=2025-01-01T00:00:01\n\n")
    assert j["JobId"] == "3" and j["JobState"] == "COMPLETED" and j["UserId"] == "root(0)"
