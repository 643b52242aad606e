"""The ncu CSV reader: a real H200 output (tests/data/real/ncu/), number formats, errors with the fix."""
from pathlib import Path

import pytest

from helpers.compute import ncu

REAL = Path(__file__).parents[1] / "data" / "real" / "ncu"


def test_real_h200_softmax_csv():
    ks = ncu.parse_csv((REAL / "ncu_softmax_h200.csv").read_text())
    assert len(ks) == 1 and "SoftMaxForward" in ks[0].kernel_name
    m = ks[0].metrics                                   # the values as ncu printed them (SOURCES.md)
    assert m["dram__bytes.sum"] == 49_244_672
    assert m["l1tex__t_bytes.sum"] == 67_108_864         # = 2 × the 32 MiB of bf16 input (2^24 × 2 B)
    assert m["lts__t_bytes.sum"] == 102_517_024
    assert m["gpu__time_duration.sum"] == pytest.approx(55_424e-9)
    t = ncu.traffic("softmax_bf16", 5 * 2**24, ks)
    assert t.intensity_hbm == pytest.approx(5 * 2**24 / 49_244_672)
    assert t.tflops == pytest.approx(5 * 2**24 / 55_424e-9 / 1e12)


@pytest.mark.parametrize("text,unit,value", [
    ("1,234.5", "", 1234.5), ("2.508.800", "byte", 2_508_800), ("1.234,5", "Mbyte", 1234.5e6),
    ("55,424", "ns", 55_424e-9), ("n/a", "", None), ("7.5", "usecond", 7.5e-6)])
def test_number_formats(text, unit, value):
    got = ncu.number(text, unit)
    assert got == (pytest.approx(value) if value is not None else None)


def test_unknown_unit_is_refused_not_guessed():
    with pytest.raises(ValueError, match="_SCALE"):
        ncu.number("4.75", "furlongs")


def test_no_header_reports_ncu_error_line():
    with pytest.raises(ValueError, match="ERR_NVGPUCTRPERM"):
        ncu.parse_csv("==PROF== Connected\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n")
    with pytest.raises(ValueError, match="--csv"):
        ncu.parse_csv("hello world\n")


def test_header_without_rows_and_missing_metric():
    head = '"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
    with pytest.raises(ValueError, match="no kernel rows"):
        ncu.parse_csv(head)
    ks = ncu.parse_csv(head + '"0","1","k","dram__bytes.sum","byte","1,024"\n')
    with pytest.raises(ValueError, match="--metrics"):
        ncu.traffic("k", 1.0, ks)


def test_cli_errors_are_one_line(capsys):
    from helpers.core import cli

    assert cli.run(ncu.main, ["parse", "/nonexistent.csv"]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["1,5", "12,34", "1,,2", "1,024,5", "0,5"])
def test_decimal_comma_is_refused_not_read_as_thousands(text):
    """Issue 35: '1,5' (a decimal comma) was read as 15; ncu's real ',' groups thousands ('1,024'), kept."""
    with pytest.raises(ValueError, match="LC_ALL=C"):
        ncu.number(text, "byte")


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400", "1.234.5"])
def test_non_finite_and_malformed_values_are_refused(value):
    head = '"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
    with pytest.raises(ValueError, match="ncu value"):
        ncu.parse_csv(head + f'"0","1","k","dram__bytes.sum","byte","{value}"\n')
