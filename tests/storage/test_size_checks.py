"""ckptwrite, hfstream and labels refuse what the machine (memory, disk) cannot hold, up front (issue 28 item 5)."""
import json

import pytest

from helpers.core import cli, resources
from helpers.storage import ckptwrite, hfstream, labels

GiB = 2**30


@pytest.fixture
def small_machine(monkeypatch):
    monkeypatch.setattr(resources, "available_memory_bytes", lambda: 16 * GiB)
    monkeypatch.setattr(resources, "free_disk_bytes", lambda path: GiB)


def test_ckptwrite_checks_memory_and_the_filesystem(small_machine, tmp_path, capsys):
    assert ckptwrite.checkpoint_bytes(1e9) == 14e9                     # 2 + 4 + 4 + 4 B per parameter
    assert cli.run(ckptwrite.main, ["--params", "1e10", "--path", str(tmp_path)]) == 2
    assert "of memory" in capsys.readouterr().err
    assert cli.run(ckptwrite.main, ["--params", "1e8", "--path", str(tmp_path)]) == 2      # 1.4 GB > 0.9 GiB free
    err = capsys.readouterr().err
    assert "on disk" in err and str(tmp_path) in err and "--params (or --path)" in err
    ckptwrite.check_size(1e6, str(tmp_path))                            # a normal size passes
    assert list(tmp_path.iterdir()) == []                               # and nothing was written by the checks


def test_hfstream_batch_and_samples(small_machine, tmp_path):
    with pytest.raises(resources.NotEnough, match=r"--batch 2147483647 > --samples 4096.*at most 4096"):
        hfstream.check_size(4096, 2**31 - 1, str(tmp_path))
    with pytest.raises(resources.NotEnough, match="lower --samples"):
        hfstream.check_size(10**8, 64, str(tmp_path))
    hfstream.check_size(4096, 64, str(tmp_path))


def test_labels_manifest_with_1e9_samples(small_machine, tmp_path, capsys):
    x, y = labels.class_images(20)
    labels.write(tmp_path, x, {i: f"c{int(y[i])}" for i in range(20)}, ["c0", "c1", "c2", "c3"])
    assert cli.run(labels.main, [str(tmp_path)]) == 0
    man = json.loads((tmp_path / "manifest.json").read_text())
    man["samples"] = 10**9
    (tmp_path / "manifest.json").write_text(json.dumps(man))
    assert cli.run(labels.main, [str(tmp_path)]) == 2
    assert "checking 1000000000 samples" in capsys.readouterr().err
