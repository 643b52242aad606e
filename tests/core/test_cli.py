"""helpers.core.cli: the shared training-run options parse and refuse the same way in every tool."""
import argparse

import pytest

from helpers.core import cli


def test_training_args_defaults_and_bounds():
    ap = argparse.ArgumentParser()
    cli.add_training_args(ap, steps=3, max_steps=10)
    a = ap.parse_args([])
    assert (a.steps, a.global_batch, a.lr, a.seed) == (3, 8, 1e-2, 0)
    assert ap.parse_args(["--steps", "10", "--lr", "0.5"]).lr == 0.5
    for bad in (["--steps", "11"], ["--steps", "0"], ["--lr", "0"], ["--seed", "-1"]):
        with pytest.raises(SystemExit):
            ap.parse_args(bad)
