"""helpers.storage.iofile: folder refusals name the value and the fix; the work file is removed on error; the
O_DIRECT probe answers with a reason (chapter 04)."""
import os
from pathlib import Path

import pytest

from helpers.storage import iofile


def read_only_dir(tmp_path):
    if os.geteuid() == 0:
        return Path("/sys")          # root ignores mode bits; sysfs refuses new files even to root
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    return d


def test_refusals_name_the_value_and_the_fix(tmp_path):
    with pytest.raises(iofile.IOBenchError, match="does not exist"):
        iofile.check_dir(tmp_path / "missing", 2**20)
    (tmp_path / "f").write_text("x")
    with pytest.raises(iofile.IOBenchError, match="not a directory"):
        iofile.check_dir(tmp_path / "f", 2**20)
    with pytest.raises(iofile.IOBenchError, match="not writable"):
        iofile.check_dir(read_only_dir(tmp_path), 2**20)
    with pytest.raises(iofile.IOBenchError, match="smaller --size"):
        iofile.check_dir(tmp_path, 2**60)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


def test_workfile_removed_on_error(tmp_path):
    with pytest.raises(RuntimeError, match="planted"):
        with iofile.workfile(tmp_path, 2**20):
            assert len(list(tmp_path.iterdir())) == 1
            raise RuntimeError("planted")
    assert list(tmp_path.iterdir()) == []


def test_direct_supported_answers(tmp_path):
    with iofile.workfile(tmp_path, 2**20) as f:
        ok, why = iofile.direct_supported(f)
    assert isinstance(ok, bool) and why


def test_workfile_is_laid_out_and_cache_helpers_run(tmp_path):
    with iofile.workfile(tmp_path, 2**20, seed=3) as f:
        data = f.read_bytes()
        assert len(data) == 2**20 and len(set(data[:4096])) > 200          # random, incompressible bytes
        fd = os.open(f, os.O_RDONLY)
        try:
            iofile.warm_cache(fd, 2**20)
            iofile.drop_cache(fd)
        finally:
            os.close(fd)
    assert list(tmp_path.iterdir()) == []
    assert isinstance(iofile.fs_type(tmp_path), str) and iofile.fs_type(Path("/")) != ""
