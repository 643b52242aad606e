"""helpers.core.inputs: the one input layer (issue 28 items 3–4) and the output checks of cli.out_file/records.save."""
import os
import pickle
import socket
import stat
import sys
import time

import pytest

from helpers.core import cli, inputs, records


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "pipe"
    os.mkfifo(p)
    return p


def test_a_fifo_is_refused_without_being_opened(fifo):
    t0 = time.monotonic()
    with pytest.raises(inputs.BadInput, match="FIFO"):
        inputs.read_text(fifo, what="nccl-tests log")
    assert time.monotonic() - t0 < 5                       # it did not block on open()


def test_folders_sockets_and_missing_files_are_refused_by_name(tmp_path):
    with pytest.raises(inputs.BadInput, match="a folder"):
        inputs.read_text(tmp_path)
    s = socket.socket(socket.AF_UNIX)
    path = tmp_path / "s.sock"
    s.bind(str(path))
    try:
        with pytest.raises(inputs.BadInput, match="socket"):
            inputs.read_bytes(path)
    finally:
        s.close()
    with pytest.raises(inputs.BadInput, match="does not exist"):
        inputs.read_text(tmp_path / "nope.log")
    if os.path.exists("/dev/zero") and stat.S_ISCHR(os.stat("/dev/zero").st_mode):   # stat only: never opened
        with pytest.raises(inputs.BadInput, match="character device"):
            inputs.read_text("/dev/zero")


def test_caps_name_the_cap_and_the_variable(tmp_path, monkeypatch):
    big = tmp_path / "rows.log"
    big.write_bytes(b"1\n" * 1000)
    with pytest.raises(inputs.BadInput, match="1000 lines, over the 10-line cap.*BOOK_MAX_INPUT_ROWS"):
        inputs.read_text(big, max_rows=10)
    with pytest.raises(inputs.BadInput, match="over the 100 B cap.*BOOK_MAX_INPUT_BYTES"):
        inputs.read_text(big, max_bytes=100)
    monkeypatch.setenv("BOOK_MAX_INPUT_ROWS", "5")
    with pytest.raises(inputs.BadInput, match="5-line cap"):
        inputs.read_text(big)
    monkeypatch.setenv("BOOK_MAX_INPUT_ROWS", "nan")
    with pytest.raises(inputs.BadInput, match="BOOK_MAX_INPUT_ROWS"):
        inputs.read_text(big)


def test_decoding_policy(tmp_path):
    p = tmp_path / "x.txt"
    p.write_bytes(b"\xef\xbb\xbfok \xff\n")
    assert inputs.read_text(p) == "ok \ufffd\n"                # BOM dropped, a bad byte replaced
    p.write_bytes(b"abc\x00def")
    with pytest.raises(inputs.BadInput, match="binary"):
        inputs.read_text(p)


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "1e400", "１２", "٣", "", " ", "1,5", "0x10", "--1"])
def test_number_refuses(text):
    with pytest.raises(inputs.BadInput):
        inputs.number(text, what="busbw")


def test_number_accepts_and_checks_sign_and_zero():
    assert inputs.number(" 12.5 ") == 12.5 and inputs.number("1e3") == 1000.0 and inputs.number(7) == 7.0
    assert inputs.number("-2", allow_negative=True) == -2.0 and inputs.number("42", integer=True) == 42
    with pytest.raises(inputs.BadInput, match="negative"):
        inputs.number("-0.5", what="time")
    with pytest.raises(inputs.BadInput, match="zero"):
        inputs.number("0", allow_zero=False)
    with pytest.raises(inputs.BadInput, match="finite"):
        inputs.number(float("nan"))
    with pytest.raises(inputs.BadInput, match="integer"):
        inputs.number("1.5", integer=True)


def test_json_and_yaml_malformed_are_bad_input(tmp_path):
    j, y = tmp_path / "a.json", tmp_path / "a.yaml"
    j.write_text('{"a": NaN}')
    with pytest.raises(inputs.BadInput, match="NaN"):
        inputs.read_json(j)
    assert inputs.read_json(j, allow_nan=True)["a"] != 0
    j.write_text("{broken")
    with pytest.raises(inputs.BadInput, match="not valid JSON"):
        inputs.read_json(j)
    y.write_text("!!python/object/apply:os.system ['true']\n")    # safe_load refuses to build objects
    with pytest.raises(inputs.BadInput, match="not valid YAML"):
        inputs.read_yaml(y)


def test_a_sleeping_program_is_killed_with_its_children(tmp_path):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\nsleep 60 &\nsleep 60\n")      # a child holding the pipe: the group is killed
    fake.chmod(0o755)
    t0 = time.monotonic()
    with pytest.raises(inputs.ProgramFailed, match="did not finish within 1 s"):
        inputs.run_program([str(fake)], timeout_s=1)
    assert time.monotonic() - t0 < 15
    assert inputs.run_program([sys.executable, "-c", "print('ok')"]).stdout.strip() == "ok"
    with pytest.raises(inputs.ProgramFailed, match="line cap"):
        inputs.run_program([sys.executable, "-c", "print('x\\n' * 100)"], max_rows=10)


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_crafted_pickle_checkpoint_does_not_run(tmp_path, capsys):
    pytest.importorskip("torch")
    marker, ck = tmp_path / "PWNED", tmp_path / "ckpt.pt"
    with open(ck, "wb") as f:
        pickle.dump({"model": _Evil(marker)}, f)
    with pytest.raises(inputs.BadInput, match="--trust-checkpoint"):
        inputs.load_checkpoint(ck)
    assert not marker.exists()
    import torch

    torch.save({"w": torch.ones(2), "step": 3}, ck)
    assert inputs.load_checkpoint(ck)["step"] == 3
    assert inputs.load_checkpoint(ck, trust=True)["step"] == 3
    assert "full pickle" in capsys.readouterr().err


def test_out_refuses_devices_fifos_sockets_inputs_and_hard_links(tmp_path, fifo):
    import argparse

    log = tmp_path / "in.log"
    log.write_text("x\n")
    inputs.forget_inputs()
    inputs.read_text(log)
    with pytest.raises(inputs.BadInput, match="input"):
        records.save({"a": 1}, log)
    os.link(log, tmp_path / "hard.json")
    with pytest.raises(inputs.BadInput, match="hard link"):
        records.save({"a": 1}, tmp_path / "hard.json")
    with pytest.raises(argparse.ArgumentTypeError, match="FIFO"):
        cli.out_file(str(fifo))
    with pytest.raises(inputs.BadInput, match="FIFO"):
        records.save({"a": 1}, fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and log.read_text() == "x\n"
    with pytest.raises(argparse.ArgumentTypeError, match="does not exist"):
        cli.out_file(str(tmp_path / "new" / "x.json"))             # no folder is created for an output
    with pytest.raises(inputs.BadInput, match="does not exist"):
        records.save({"a": 1}, tmp_path / "new" / "x.json")
    assert not (tmp_path / "new").exists()
    inputs.forget_inputs()


def test_cli_run_registers_named_files_so_out_cannot_overwrite_them(tmp_path, capsys):
    log = tmp_path / "in.log"
    log.write_text("keep\n")

    def main(argv):
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("log")
        ap.add_argument("--out", type=cli.out_file)
        ap.parse_args(argv)
        return 0

    assert cli.run(main, [str(log), "--out", str(log)]) == 2
    assert "input" in capsys.readouterr().err and log.read_text() == "keep\n"
    assert cli.run(main, [str(log), "--out", str(tmp_path / "o.json")]) == 0


def test_exit_codes_bad_input_2_failed_program_1(capsys):
    def bad(argv):
        raise inputs.BadInput("no")

    def failed(argv):
        raise inputs.ProgramFailed("nvidia-smi hung")

    def yaml_bad(argv):
        import yaml
        yaml.safe_load("a: [1")

    assert cli.run(bad, []) == 2 and cli.run(failed, []) == 1 and cli.run(yaml_bad, []) == 2


def test_ckpt_restore_refuses_a_crafted_pickle(tmp_path):
    pytest.importorskip("torch")
    from helpers.training.resilience import ckpt

    marker, path = tmp_path / "PWNED", tmp_path / "ckpt.pt"
    with open(path, "wb") as f:
        pickle.dump({"model": _Evil(marker), "step": 1}, f)
    with pytest.raises(inputs.BadInput, match="trust-checkpoint"):
        ckpt.restore(None, path)
    assert not marker.exists()
