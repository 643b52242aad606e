"""Real single-node Slurm (helpers.ops.slurm) and the simulator against Slurm (sacct parsing: test_slurmtext)."""
import os
import subprocess
from pathlib import Path

import pytest

from helpers.ops import schedsim, slurm

HAVE, WHY = slurm.available()


def alive(*names: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "stat=,comm="], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if ln.split()[-1] in names and not ln.strip().startswith("Z")]


@pytest.mark.skipif(not HAVE, reason=WHY)
def test_real_slurm_runs_jobs_binds_gres_drains_and_stops():
    with slurm.cluster(cpus=8, gpus=2) as c:
        conf = Path(c.env["SLURM_CONF"])
        pids = [p.pid for p in c.procs.values()]
        a = c.sbatch("#!/bin/bash\necho GPUS=$CUDA_VISIBLE_DEVICES\n", gpus=2)
        b = c.sbatch("#!/bin/bash\nexit 3\n")
        long = c.sbatch("#!/bin/bash\nsleep 60\n")
        recs = {int(r["JobId"]): r for r in c.wait([a, b])}
        assert recs[a]["JobState"] == "COMPLETED" and c.output(a).strip() == "GPUS=0,1"
        assert recs[b]["JobState"] == "FAILED" and recs[b]["ExitCode"] == "3:0"
        assert c.run("srun", "-n", "2", "hostname").count("\n") == 2
        c.drain("health: test")
        assert "drain" in c.node_state()[0] and c.node_state()[1] == "health: test"
        c.resume()
        assert "drain" not in c.node_state()[0]
        assert any(j["job_id"] == str(long) for j in c.squeue())
    for pid in pids:                                   # the daemons, and the still-running job, are gone
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not slurm.leftovers(conf)
    assert not alive("slurmctld", "slurmd", "munged", "slurmstepd")


@pytest.mark.skipif(not HAVE, reason=WHY)
@pytest.mark.parametrize("policy", ["backfill", "fifo"])
def test_simulator_order_equals_slurms(policy):
    trace = schedsim.slurm_check_trace()
    with slurm.cluster(cpus=8, backfill=policy == "backfill") as c:
        real = slurm.run_trace(c, trace)
    sim = schedsim.simulate(trace, 8, policy)
    assert schedsim.start_ranks(real) == schedsim.start_ranks({j.id: j.start_s for j in sim.jobs})


@pytest.mark.skipif(not HAVE, reason=WHY)
def test_srun_four_rank_allreduce_with_the_books_collectives_tool():
    import sys

    from helpers.core import launch

    with slurm.cluster(cpus=8) as c:
        script = (f"#!/bin/bash\nexport MASTER_ADDR=127.0.0.1 MASTER_PORT={launch.free_port()}\n"
                  f"srun {sys.executable} -m helpers collectives --op all_reduce --min-bytes 1K --max-bytes 4K "
                  "--iters 2 --warmup 1\n")
        job = c.sbatch(script, name="allreduce4", extra=("--ntasks=4",), time_min=5)
        rec = c.wait([job], timeout_s=280)[0]
        out = c.output(job)
    assert rec["JobState"] == "COMPLETED" and rec["ProcCnt"] == "4", out[-800:]
    rows = [ln.split() for ln in out.splitlines() if ln.strip().startswith("all_reduce")]
    assert rows and all(r[1] == "4" and r[-1] == "True" for r in rows)      # world size 4, result correct
