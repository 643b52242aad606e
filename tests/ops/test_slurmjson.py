"""Slurm --json outputs (scontrol show node, sinfo, squeue, and slurmrestd's nodes/jobs answers) in the schemas Slurm
21.08 (OpenAPI v0.0.37), 23.02 (data_parser v0.0.39), 23.11 (v0.0.40), 24.05 (v0.0.41), 24.11 (v0.0.42) and 25.11
(v0.0.44) print, read on real outputs (tests/data/real/slurm-json); expectations
are the files' own fields."""
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from helpers.ops import nodecheck, slurmjson, slurmread

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "slurm-json"


def test_scontrol_show_node_json_25_11():
    d = slurmjson.parse_slurm_json((REAL / "charmed-hpc-scontrol-show-node-25.11.0.json").read_text())
    assert (d.kind, d.release, d.data_parser) == ("nodes", "25.11.0", "data_parser/v0.0.44")
    (n,) = d.nodes
    at = datetime.fromtimestamp(1769096589, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")   # reason_changed_at
    assert (n.name, n.state, n.reason) == ("compute-0", "DOWN+DYNAMIC_NORM", f"Not responding [slurm@{at}]")
    assert slurmread.judge_state(n.state)[0] == "failed" and dict(n.fields)["tres"] == "cpu=8,mem=15986M,billing=8"


def test_sinfo_json_21_08_state_strings():
    d = slurmjson.parse_slurm_json((REAL / "rivos-exporter-sinfo-21.08.5.json").read_text())
    assert (d.kind, d.release, d.data_parser) == ("nodes", "21.08.5", "openapi/v0.0.37")
    assert [(n.name.split(".")[0], n.state) for n in d.nodes] == [("cs2", "MIXED"), ("cs3", "IDLE"),
                                                                  ("cs4", "ALLOCATED"), ("cs5", "DOWN")]
    assert [slurmread.judge_state(n.state)[0] for n in d.nodes] == ["healthy", "healthy", "healthy", "failed"]


def test_sinfo_json_23_02_grouped_rows():
    d = slurmjson.parse_slurm_json((REAL / "rivos-exporter-sinfo-dataparser-23.02.4-drain.json").read_text())
    (r,) = d.sinfo
    at = datetime.fromtimestamp(1705613872, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    assert (d.kind, d.release, r.partition, r.state, r.nodes) == ("sinfo", "23.02.4", "hw", "ALLOCATED+DRAIN", 10)
    assert r.nodelist.split(",")[:2] == ["cs62", "cs63"] and r.reason == f"IT-4461 [root@{at}]"
    assert slurmread.judge_state(r.state)[0] == "degraded"
    (lo,) = slurmjson.parse_slurm_json((REAL / "rivos-exporter-sinfo-dataparser-23.02.5-localhost.json").read_text()).sinfo
    assert (lo.partition, lo.state, lo.nodelist, lo.reason) == ("debug", "ALLOCATED", "localhost", "")


def test_squeue_json_21_08():
    d = slurmjson.parse_slurm_json((REAL / "rivos-exporter-squeue-21.08.5.json").read_text())
    assert d.kind == "jobs" and [(j.job_id, j.state, j.partition, j.user, j.nodes, j.nodelist, j.reason)
                                 for j in d.jobs] == [("26515966", "RUNNING", "hw-l", "bkd", 1, "cs75", ""),
                                                      ("58948420", "PENDING", "hw-m", "bkd", 1, "", "Dependency")]


def test_detected_and_judged_by_nodecheck():
    files = sorted(REAL.glob("*.json"))
    assert {nodecheck.detect(f.read_text()) for f in files} == {"slurm-json"}
    v = nodecheck.verdicts([x for f in files for x in nodecheck.read_path(f)])
    assert v == {"Slurm node": "failed"}                      # compute-0 and cs5 are DOWN


def test_refuses_what_is_not_slurm_json():
    with pytest.raises(ValueError, match="no 'nodes', 'sinfo' or 'jobs'"):
        slurmjson.parse_slurm_json('{"Temperatures": []}')
    err = json.dumps({"meta": {}, "errors": [{"error": "Unable to contact slurm controller"}], "nodes": []})
    with pytest.raises(ValueError, match="Unable to contact"):
        slurmjson.parse_slurm_json(err)


def test_slurmrestd_24_05_job_state_list_gpu_job():
    """The data_parser document squeue --json prints from 23.02 on (job_state a list, node_count {set, number}), as
    slurmrestd served it for one GPU job (Slurm-web's captured assets)."""
    text = (REAL / "slurm-web-slurmrestd-24.05.3-job-gpus-running.json").read_text()
    d = slurmjson.parse_slurm_json(text)
    assert (d.kind, d.release, d.data_parser) == ("jobs", "24.05.3", "data_parser/v0.0.41")
    (j,) = d.jobs
    assert (j.job_id, j.state, j.partition, j.user, j.nodes, j.nodelist, j.reason) == \
        ("9", "RUNNING", "gpu", "dperez", 1, "gpu1", "")
    assert dict(j.fields)["tres_alloc_str"] == "cpu=1,mem=512M,node=1,billing=1"
    assert json.loads(text)["jobs"][0]["gres_detail"] == ["gpu:h100:4(IDX:0-3)"]
    assert nodecheck.detect(text) == "slurm-json"


def test_squeue_json_25_11_from_the_command_line():
    """A real `squeue --json` of 23.02 or later (meta.command ["squeue"], not slurmrestd): Slurm 25.11.4, v0.0.44."""
    text = (REAL / "ursa-bifrost-squeue-25.11.4.json").read_text()
    d = slurmjson.parse_slurm_json(text)
    assert (d.kind, d.release, d.data_parser, d.command) == ("jobs", "25.11.4", "data_parser/v0.0.44", ("squeue",))
    (j,) = d.jobs
    assert (j.job_id, j.state, j.partition, j.user, j.nodes, j.nodelist, j.reason) == \
        ("260", "RUNNING", "computehigh", "alice_ucr_edu", 1, "ucrslurmcl-c3nodeset-0", "")
    assert dict(j.fields)["tres_alloc_str"] == "cpu=22,mem=87054M,node=1,billing=22"
    assert nodecheck.detect(text) == "slurm-json"


def test_slurmrestd_23_11_nodes_down_not_responding_and_drained():
    """slurmrestd /nodes of a production cluster (talapas, Slurm 23.11.1, v0.0.40): two DOWN+NOT_RESPONDING, two
    IDLE+DRAIN with their reasons; reason_changed_at is a {set, infinite, number} object."""
    d = slurmjson.parse_slurm_json((REAL / "lcrownover-exporter-slurmrestd-23.11.1-nodes-talapas.json").read_text())
    assert (d.kind, d.release, d.data_parser, d.command) == ("nodes", "23.11.1", "data_parser/v0.0.40", ())
    assert len(d.nodes) == 12
    at = lambda t: datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")  # noqa: E731
    bad = [(n.name, n.state, n.reason) for n in d.nodes if slurmread.judge_state(n.state)[0] != "healthy"]
    assert bad == [("dtn1", "DOWN+NOT_RESPONDING", f"Not responding [slurm@{at(1710797454)}]"),
                   ("dtn2", "DOWN+NOT_RESPONDING", f"Not responding [slurm@{at(1710797454)}]"),
                   ("n0164", "IDLE+DRAIN", f"Kill task failed [root@{at(1722018902)}]"),
                   ("n0999", "IDLE+DRAIN", f"gpu_board [root@{at(1722024275)}]")]
    assert [slurmread.judge_state(s)[0] for _, s, _ in bad] == ["failed", "failed", "degraded", "degraded"]


def test_slurmrestd_23_11_jobs_running_and_pending():
    d = slurmjson.parse_slurm_json((REAL / "lcrownover-exporter-slurmrestd-23.11.1-jobs-talapas.json").read_text())
    assert (d.kind, d.release, d.data_parser) == ("jobs", "23.11.1", "data_parser/v0.0.40")
    assert [(j.job_id, j.state, j.partition, j.user, j.nodes, j.nodelist, j.reason) for j in d.jobs] == \
        [("7745162", "RUNNING", "preempt", "rdennis", 1, "n0180", ""),
         ("7725337", "PENDING", "preempt", "rdennis", 1, "", "Resources")]


def test_slurmrestd_24_11_nodes_v0_0_42():
    d = slurmjson.parse_slurm_json((REAL / "slurm-web-slurmrestd-24.11.5-nodes-v0.0.42.json").read_text())
    assert (d.kind, d.release, d.data_parser) == ("nodes", "24.11.5", "data_parser/v0.0.42")
    assert [(n.name, n.state) for n in d.nodes] == [("cn1", "IDLE"), ("cn2", "IDLE"), ("cn3", "DOWN"),
                                                    ("cn4", "IDLE+DRAIN"), ("ia1", "IDLE+COMPLETING"), ("ia2", "IDLE")]
    assert [n.reason.split(" [")[0] for n in d.nodes if n.reason] == ["CPU dead", "ECC memory error"]
    assert [slurmread.judge_state(n.state)[0] for n in d.nodes] == \
        ["healthy", "healthy", "failed", "degraded", "healthy", "healthy"]


def test_malformed_documents_are_refused_by_name():
    with pytest.raises(ValueError, match="'nodes'\\[0\\] is int, not an object"):
        slurmjson.parse_slurm_json('{"meta": {}, "nodes": [1]}')
    with pytest.raises(ValueError, match="'jobs' is NoneType, not a list"):
        slurmjson.parse_slurm_json('{"meta": {}, "jobs": null}')
    doc = json.loads((REAL / "lcrownover-exporter-slurmrestd-23.11.1-nodes-talapas.json").read_text())
    doc["nodes"][0]["reason_changed_at"] = {"set": True, "infinite": False, "number": 10 ** 30}   # edited
    with pytest.raises(ValueError, match="not a Unix time"):
        slurmjson.parse_slurm_json(doc)
