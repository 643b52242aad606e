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


# ---- round 2: more real outputs (tests/data/real/*/SOURCES.md says where each comes from) --------------------

def test_sinfo_triton_docs_drain_drng_and_not_responding():
    rows = slurmread.parse_sinfo((REAL / "sinfo" / "aalto-triton-docs-default-drng.txt").read_text())
    assert [(r.partition, r.state, r.nodes, r.nodelist) for r in rows] == [
        ("interactive", "drng", 2, "pe[1-2]"), ("jupyter-long", "drng", 2, "pe[1-2]"),
        ("jupyter-short", "drng", 2, "pe[1-2]"), ("grid", "drain", 1, "pe76")]
    assert {slurmread.judge_state(r.state)[0] for r in rows} == {"degraded"}
    dbg = slurmread.parse_sinfo((REAL / "sinfo" / "aalto-triton-docs-debug-drain-star.txt").read_text())
    assert [(r.state, r.nodelist) for r in dbg] == [("drain*", "wsm1"), ("drain", "pe3"), ("idle", "pe83")]
    assert [slurmread.judge_state(r.state)[0] for r in dbg] == ["failed", "degraded", "healthy"]


def test_sinfo_node_long_form_after_its_date_line():
    (r,) = slurmread.parse_sinfo((REAL / "sinfo" / "galaxy-gat2016-sinfo-Nel.txt").read_text())
    assert (r.nodelist, r.nodes, r.partition, r.state, r.reason) == ("localhost", 1, "debug", "idle", "")


def test_sinfo_list_reasons_real_cluster():
    rows = slurmread.parse_sinfo((REAL / "sinfo" / "unige-3623-baobab-sinfo-R.txt").read_text())
    assert len(rows) == 23 and {r.state for r in rows} == {""}          # -R without -l prints no STATE column
    assert (rows[0].reason, rows[0].user, rows[0].timestamp, rows[0].nodelist) == \
        ("issue-6277 : Not res", "slurm", "2024-08-26T14:28:56", "cpu[002,005,007-008,045-056,058-059,061-062]")
    assert (rows[3].reason, rows[3].nodelist) == ("Not responding", "cpu285")
    assert [(r.reason, r.nodelist) for r in rows[-4:]] == [("Kill task failed", "gpu012"), ("Kill task failed",
                                                           "gpu018"), ("Kill task failed", "gpu025"), ("issue-6299", "gpu047")]
    assert slurmread.judge_reason("Not responding")[0] == "failed"
    assert [slurmread.judge_reason(r.reason)[0] for r in rows].count("failed") == 1      # cpu285 only


def test_sinfo_list_reasons_long_with_state_and_uid():
    rows = slurmread.parse_sinfo((REAL / "sinfo" / "unige-3629-bamboo-sinfo-R-l.txt").read_text())
    assert [(r.reason, r.user, r.state, r.nodelist) for r in rows] == [
        ("Not responding", "slurm(200)", "down*", "cpu[014,038]"),
        ("health_BEEGFS__tcp_c", "root(0)", "drng", "cpu[018-021,023-024,026-027,029-030,033-034,036-037,039,041-043]"),
        ("health_BEEGFS__tcp_c", "root(0)", "drng", "cpu[017,028,035,040]"),
        ("health_BEEGFS__tcp_c", "root(0)", "drain", "cpu025")]
    assert rows[3].timestamp == "2024-09-09T09:35:58"
    assert [slurmread.judge_state(r.state)[0] for r in rows] == ["failed", "degraded", "degraded", "degraded"]


def test_scontrol_not_responding_and_gpus_from_gres():
    (n,) = slurmread.parse_scontrol_node(
        (REAL / "scontrol-node" / "slurm-exporter-198-gpu02-down-not-responding.txt").read_text())
    assert (n.name, n.state, n.reason) == ("gpu02", "DOWN+NOT_RESPONDING", "")   # the excerpt ends before Reason=
    assert n.gpus_cfg == 8                      # no CfgTRES in the excerpt: Gres=gpu:1080:7,gpu:block:1
    assert slurmread.judge_state(n.state) == ("failed", "down; slurmd not responding")


def test_scontrol_one_line_per_node():
    nodes = slurmread.parse_scontrol_node(
        (REAL / "scontrol-node" / "slurm-exporter-24.11.7-show-nodes-oneliner.txt").read_text())
    assert len(nodes) == 20 and nodes[0].name == "na1" and nodes[-1].name == "nb10"
    by = {n.name: n for n in nodes}
    assert by["na1"].state == "MIXED+DYNAMIC_NORM" and dict(by["na1"].fields)["Partitions"] == "cpu,debug,high"
    assert dict(by["na1"].fields)["OS"].endswith("Thu Jun 18 21:54:43 UTC 2026")
    # CfgTRES=cpu=32,mem=15867M,billing=32 tracks no gres/gpu: the GPUs come from Gres=
    assert (by["nb1"].gpus_cfg, by["nb9"].gpus_cfg, by["na1"].gpus_cfg) == (4, 4, 0)
    assert {slurmread.judge_state(n.state)[0] for n in nodes} == {"healthy"}


def test_gres_gpus_forms():
    assert slurmread.gres_gpus("gpu:nvidia_geforce_rtx_5090:4(S:0-3),VramPerGpu:no_consume:32G") == 4
    assert slurmread.gres_gpus("gpu:4") == 4 and slurmread.gres_gpus("(null)") == 0


def test_squeue_running_and_array_pending():
    (j,) = slurmread.parse_squeue((REAL / "squeue" / "galaxy-gat2016-running.txt").read_text())
    assert (j.job_id, j.state, j.partition, j.user, j.nodes, j.nodelist, j.reason) == \
        ("3", "R", "debug", "galaxygu", 1, "localhost", "")
    (a,) = slurmread.parse_squeue((REAL / "squeue" / "slurmtools-2-array-pending.txt").read_text())
    assert (a.job_id, a.state, a.partition, a.user, a.reason) == ("31180452_[0-467]", "PD", "norm", "skobes",
                                                                  "Priority")


def test_sshare_real_sites_and_custom_columns():
    labs = slurmread.parse_sshare((REAL / "sshare" / "rcic-uci-hpc3-ten-labs.txt").read_text())
    assert len(labs) == 10 and [dict(r)["Account"] for r in labs][:2] == ["caoph_lab", "dmobley_lab"]
    w = dict(labs[-1])
    assert (w["Account"], w["RawShares"], w["RawUsage"], w["EffectvUsage"], w["FairShare"]) == \
        ("weil21_lab", "1", "21466384467", "0.143373", "")       # an 11-digit usage fills its column
    (u,) = slurmread.parse_sshare((REAL / "sshare" / "rcic-uci-hpc3-npw-user.txt").read_text())
    assert dict(u)["FairShare"] == "0.315013" and dict(u)["User"] == "npw"
    fmt = slurmread.parse_sshare((REAL / "sshare" / "rcic-uci-hpc3-npw-format.txt").read_text())
    assert [tuple(dict(r).values()) for r in fmt] == [("npw", "", "0.000265", "0.000012", ""),
                                                      ("npw", "npw", "1.000000", "0.000012", "0.315013")]
    tree = slurmread.parse_sshare((REAL / "sshare" / "ml-engineering-stas-fairshare.txt").read_text())
    assert [(dict(r)["Account"], dict(r)["User"], dict(r)["FairShare"]) for r in tree] == \
        [("root", "", ""), ("all", "", ""), ("all", "stas", "0.288889")]
