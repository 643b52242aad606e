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


def test_numbers_are_ascii_digits_only():
    """Issue 35: int() and float() take Arabic-Indic and fullwidth digits ('١٢' = 12) and '1_0'; a flag does not."""
    for bad in ("\u0661\u0662", "\uff11\uff12", "1_0"):
        with pytest.raises(argparse.ArgumentTypeError, match="ASCII digits only"):
            cli.positive_int(bad)
        with pytest.raises(argparse.ArgumentTypeError, match="ASCII digits only"):
            cli.positive_float(bad)
    assert cli.positive_int("12") == 12 and cli.positive_float(" 1.5 ") == 1.5
