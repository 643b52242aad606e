"""Up-front resource checks (issue 28 item 5): a size the machine cannot hold is refused with the bytes needed, the
limit and the flag to change — bad input, exit 2 — before anything is allocated."""
import os

import pytest

from helpers.core import cli, resources

GiB = 2**30


def test_what_the_machine_has_is_read_from_the_system(tmp_path):
    mem = resources.available_memory_bytes()
    assert 0 < mem <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < resources.free_disk_bytes(tmp_path) == resources.free_disk_bytes(tmp_path / "not" / "yet")
    assert resources.fmt_bytes(1.5 * GiB) == "1.5 GiB" and resources.fmt_bytes(100) == "100 B"


def test_require_memory_names_need_limit_and_flag(monkeypatch):
    monkeypatch.setattr(resources, "available_memory_bytes", lambda: 10 * GiB)
    assert resources.require_memory(7 * GiB, what="x", flag="--n") == 10 * GiB      # within 80 %: passes
    with pytest.raises(resources.NotEnough) as e:
        resources.require_memory(9 * GiB, what="a 9 GiB array", flag="--size")
    msg = str(e.value)
    assert "a 9 GiB array needs 9.0 GiB" in msg and "10.0 GiB available" in msg and "8.0 GiB" in msg
    assert msg.endswith("lower --size") and isinstance(e.value, ValueError)


def test_require_disk(monkeypatch, tmp_path):
    monkeypatch.setattr(resources, "free_disk_bytes", lambda path: GiB)
    resources.require_disk(tmp_path, 0.5 * GiB, what="x", flag="--n")
    with pytest.raises(resources.NotEnough, match=r"needs 2\.0 GiB on disk .* 1\.0 GiB free .* lower --params"):
        resources.require_disk(tmp_path, 2 * GiB, what="a checkpoint", flag="--params")


def test_cgroup_limit_caps_memory(monkeypatch):
    monkeypatch.setattr(resources, "_cgroup_limit", lambda: 123 * 2**20)
    assert resources.available_memory_bytes() <= 123 * 2**20


def test_refusal_is_bad_input_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(resources, "available_memory_bytes", lambda: GiB)

    def main(argv):
        resources.require_memory(2 * GiB, what="the toy", flag="--n")
    assert cli.run(main, []) == 2
    err = capsys.readouterr().err
    assert "bad input: the toy needs 2.0 GiB" in err and "lower --n" in err and "Traceback" not in err
