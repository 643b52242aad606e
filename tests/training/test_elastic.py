"""Chapter 14: Young/Daly (helpers.formulas.checkpointing) against the failure simulator; a torchrun job with a
killed rank resumes exactly."""
import math

import pytest

from helpers.formulas import checkpointing
from helpers.training.resilience import elastic


def test_sweep_is_centred_on_young():
    res = elastic.sweep(60.0, 3600.0, 10 * 3600.0, points=5, runs=3)
    assert res[2].interval_s == pytest.approx(checkpointing.young(60.0, 3600.0))


def test_cluster_mtbf():
    assert elastic.cluster_mtbf_s(1000, 10) == pytest.approx(36.0)


def test_simulator_without_failures_is_exact():
    r = elastic.simulate(100, 5, 1e15, 1000, runs=3)
    assert r.wall_s == pytest.approx(1000 + 10 * 5) and r.failures == 0


def test_simulator_optimum_is_near_daly():
    d, M = 60.0, 3600.0
    res = elastic.sweep(d, M, 20 * M, restart_s=0, points=31, runs=400)
    best = min(res, key=lambda r: r.wall_s)
    assert 0.5 < best.interval_s / checkpointing.daly(d, M) < 2.0
    # waste at the optimum ≈ √(2δ/M) to first order
    assert best.waste_frac == pytest.approx(math.sqrt(2 * d / M), rel=0.35)


# A killed rank resuming to the uninterrupted run's weights (two torchrun jobs, ~30 s) is chapter 14's Lab 3, which
# asserts it (attempts, resume step, bit-identical weights) on every `make nbval`: multi-rank runs run once.


def test_bad_kill_step_is_refused(tmp_path):
    with pytest.raises(ValueError, match="kill_at"):
        elastic.run_job(str(tmp_path), steps=4, kill_at=9)


def test_a_folder_with_the_users_files_is_refused_and_left_alone(tmp_path, capsys):
    """`elastic --dir D` where D holds a user's final.pt: exit 2, one line naming the file and the fix, D untouched
    (issue 35); --resume without a ckpt.pt to resume from is refused the same way."""
    from helpers.core import cli

    (tmp_path / "final.pt").write_text("the user's weights")
    assert cli.run(elastic.main, ["--dir", str(tmp_path), "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "final.pt" in err and "empty or new folder" in err and "--resume" in err
    assert cli.run(elastic.main, ["--dir", str(tmp_path), "--steps", "1", "--resume"]) == 2
    assert "no ckpt.pt to resume from" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final.pt"]
    assert (tmp_path / "final.pt").read_text() == "the user's weights"


def test_claim_folder_marks_its_own_and_resume_says_so(tmp_path):
    new, users = tmp_path / "new", tmp_path / "users"
    new.mkdir()
    users.mkdir()
    assert elastic.claim_folder(str(new)) is None and (new / elastic.MARKER).exists()
    (new / "final.pt").write_text("x")
    assert elastic.claim_folder(str(new)) is None              # its own folder (a restart): taken again
    (users / "ckpt.pt").write_text("x")
    with pytest.raises(ValueError, match="holds ckpt.pt"):
        elastic.claim_folder(str(users))
    note = elastic.claim_folder(str(users), resume=True)
    assert note.startswith("elastic: resuming from") and (users / elastic.MARKER).exists()
