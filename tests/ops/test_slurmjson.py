"""Slurm --json outputs (scontrol show node, sinfo, squeue) in the schemas Slurm 21.08 (OpenAPI v0.0.37), 23.02
(data_parser v0.0.39) and 25.11 (v0.0.44) print, read on real outputs (tests/data/real/slurm-json); expectations
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
