"""sinfo and scontrol show node, read on real outputs (tests/data/real) and on the forms the real files lack."""
from pathlib import Path

from helpers.ops import slurmread

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def test_sinfo_default_states():
    rows = slurmread.parse_sinfo((REAL / "sinfo" / "arjuna-69-default.txt").read_text())
    assert len(rows) == 9 and rows[6].partition == "debug"          # "debug*" (the default partition) loses its *
    verdict = {r.state: slurmread.judge_state(r.state)[0] for r in rows}
    assert verdict == {"drng@": "degraded", "fail*": "failed", "maint": "degraded", "mix": "healthy", "idle": "healthy"}
    assert sum(r.nodes for r in rows if r.state == "fail*") == 4          # "1 cpu node (f005) fail" + c[020-022]


def test_sinfo_reasons_with_spaces():
    text = ("REASON               USER      TIMESTAMP           NODELIST\n"
            "Low RealMemory       root      2022-05-18T17:20:20 cu201\n")
    (r,) = slurmread.parse_sinfo(text)
    assert (r.reason, r.nodelist, r.state) == ("Low RealMemory", "cu201", "")


def test_scontrol_drained_gpu_node():
    (n,) = slurmread.parse_scontrol_node((REAL / "scontrol-node" / "unige-4287-rtx5090-drain.txt").read_text())
    assert (n.name, n.state, n.gpus_cfg, n.gpus_alloc) == ("gpu010", "IDLE+DRAIN", 4, 0)
    assert n.reason == "health_ps___blocked [root@2026-04-29T03:06:18]"
    assert dict(n.fields)["OS"].endswith("Fri Oct 31 13:55:05 UTC 2025")
    assert slurmread.judge_state(n.state)[0] == "degraded"


def test_judge_state_flags():
    assert slurmread.judge_state("DOWN*+DRAIN")[0] == "failed"
    assert slurmread.judge_state("IDLE+CLOUD+POWERED_DOWN")[0] == "healthy"
    assert slurmread.judge_state("idle~") == ("healthy", "powered down (power saving)")


def test_sinfo_power_saving_and_cloud_states():
    up = slurmread.parse_sinfo((REAL / "sinfo" / "pcluster-node-398-idle-powered-down.txt").read_text())
    assert [(r.partition, r.state, r.nodes) for r in up] == [("queue1", "idle~", 30), ("queue2", "idle~", 30)]
    assert {slurmread.judge_state(r.state)[0] for r in up} == {"healthy"}       # powered down to save power
    ice = slurmread.parse_sinfo((REAL / "sinfo" / "pcluster-node-398-down-ice.txt").read_text())
    assert [(r.state, r.nodes) for r in ice] == [("down#", 1), ("idle~", 15), ("down~", 14), ("idle~", 30)]
    assert [slurmread.judge_state(r.state)[0] for r in ice] == ["failed", "healthy", "failed", "healthy"]


def test_scontrol_down_and_gres_mismatch():
    (d,) = slurmread.parse_scontrol_node((REAL / "scontrol-node" / "sirepo-2136-localhost-down.txt").read_text())
    assert (d.name, d.state, d.reason, dict(d.fields)["Partitions"]) == ("localhost", "DOWN", "", "debug")
    (g,) = slurmread.parse_scontrol_node((REAL / "scontrol-node" / "awsome-distributed-ai-195-gres-lower.txt").read_text())
    assert (g.state, g.gpus_cfg, dict(g.fields)["Gres"]) == ("IDLE+DRAIN", 1, "gpu:nvidia-rtx-3090:1")
    assert g.reason == "gres/gpu count reported lower than configured (0 < 1) [slurm@2024-12-19T11:03:34]"


def test_squeue_default_and_o_format():
    (j,) = slurmread.parse_squeue((REAL / "squeue" / "rsmas-insar-581-default-pending.txt").read_text())
    assert (j.job_id, j.state, j.partition, j.user, j.nodes, j.reason, j.nodelist) == \
        ("1872107", "PD", "skx", "tg851601", 1, "Priority", "")
    (o,) = slurmread.parse_squeue((REAL / "squeue" / "rsmas-insar-581-o-format.txt").read_text())
    assert (o.job_id, o.state, dict(o.fields)["SUBMIT_TIME"]) == ("1854938", "PENDING", "2025-05-01T14:09:55")


def test_squeue_reason_with_spaces():
    text = ("JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n"
            "42 gpu train alice PD 0:00 2 (launch failed requeued held)\n")
    assert slurmread.parse_squeue(text)[0].reason == "launch failed requeued held"


def test_sshare_tree():
    rows = slurmread.parse_sshare((REAL / "sshare" / "slurm-114-sshare-a.txt").read_text())
    assert len(rows) == 11 and dict(rows[0])["FairShare"] == "0.500000" and dict(rows[0])["User"] == ""
    assert dict(rows[2]) == {"Account": "cae", "User": "", "Raw Shares": "7416", "Norm Shares": "0.741526",
                             "Raw Usage": "709", "Effectv Usage": "1.000000", "FairShare": "0.392681"}
    assert sum(dict(r)["Raw Shares"] == "parent" for r in rows) == 2
