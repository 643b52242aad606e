"""python -m helpers mfumodel: --check prints which runs the model was fitted on and the out-of-sample median and
worst error (the same numbers mfumodel.check gives); a published run is predicted by name, a layout from flags."""
import json

import pytest

from helpers.core import cli
from helpers.training.calc import mfucli
from helpers.training.calc import mfumodel as M


def test_check_prints_the_fit_and_the_out_of_sample_errors(capsys):
    assert mfucli.main(["--check"]) == 0
    out = capsys.readouterr().out
    fit, preds = M.check()
    s = M.summary(preds)
    assert f"fitted on {len(fit.fitted_on)} runs" in out and all(n in out for n in fit.fitted_on)
    assert f"out of sample: n = {s['n']}, median |error| {s['median']:.1%}, worst {s['worst']:.1%}" in out
    assert out.count("(fitted on)") == len(fit.fitted_on) and "H100 SXM: n = " in out and "TPU v4: n = 1" in out
    print(out.split("\n\n")[-1])                       # the summary lines, visible with -s


def test_published_run_by_name_matches_the_model(capsys):
    name = "Llama 3 405B 16384 GPUs seq 131072"
    assert mfucli.main(["--run", name, "--json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)["records"]
    fit, preds = M.check()
    p = next(x for x in preds if x.name == name)
    assert rec["published"] == 0.38 and rec["mfu_predicted"] == pytest.approx(p.predicted)
    assert rec["step_time_s"] == pytest.approx(p.step_time_s) and 0 < rec["bubble_share"] < 1


def test_changed_layout_and_flag_layout(capsys):
    assert mfucli.main(["--run", "Megatron GPT 1008.0B (3072 GPUs)", "--ib", "6.25", "--json"]) == 0
    slow = json.loads(capsys.readouterr().out)["records"][0]
    assert slow["name"].endswith("(changed)") and slow["published"] is None
    assert mfucli.main(["--run", "Megatron GPT 1008.0B (3072 GPUs)", "--json"]) == 0
    base = json.loads(capsys.readouterr().out)["records"][0]
    assert slow["mfu_predicted"] < base["mfu_predicted"]                  # an eighth of the scale-out bandwidth
    argv = ["--gpu", "H100 SXM", "--params", "8e9", "--layers", "32", "--hidden", "4096", "--ffn", "14336", "--glu",
            "--kv-hidden", "1024", "--vocab", "128256", "--seq", "8192", "--dp", "8", "--micro-batch", "1",
            "--global-batch", "64", "--json"]
    assert mfucli.main(argv) == 0
    r = json.loads(capsys.readouterr().out)["records"][0]
    assert r["n_gpus"] == 8 and 0.05 < r["mfu_predicted"] < 1 and r["tokens_per_s_per_gpu"] > 0


def test_bad_layouts_are_refused_in_one_line(capsys):
    assert cli.run(mfucli.main, ["--gpu", "H100 SXM", "--params", "8e9"]) == 2
    assert "a layout needs --layers" in capsys.readouterr().err
    argv = ["--run", "MPT-7b s2048 8xH100 80GB", "--micro-batch", "5"]      # 48 sequences, dp 8
    assert cli.run(mfucli.main, argv) == 2 and "not a multiple" in capsys.readouterr().err
    assert cli.run(mfucli.main, ["--run", "no such run"]) == 2


def test_check_own_adds_the_book_h200_runs(capsys):
    from helpers.training.calc import mfuown
    assert mfucli.main(["--check", "--own"]) == 0
    out = capsys.readouterr().out
    s = mfuown.summary(mfuown.check())
    assert "the book's own H200 runs" in out
    assert f"compiled: median |error| {s['compiled_median']:.1%}, worst {s['compiled_worst']:.1%}" in out
