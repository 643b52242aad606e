"""Never touch what it did not create (issue 18): decoy files and symlinks planted under every name a tool used to
write (or might write) are untouched after the tool ran, and the tool's own files are gone."""
import os
from pathlib import Path

from helpers.core import records
from helpers.storage import compress, dataformats, iofile

SECRET = b"the user's own data\n"


def plant(d: Path, names) -> dict[str, object]:
    """Decoy files and symlinks (to a file outside ``d``) under ``names``; returns what must stay as it is."""
    target = d.parent / f"{d.name}-outside.txt"
    target.write_bytes(SECRET)
    kept = {}
    for i, n in enumerate(names):
        p = d / n
        if i % 2:
            p.symlink_to(target)
            kept[n] = ("link", str(target))
        else:
            p.write_bytes(SECRET)
            kept[n] = ("file", SECRET)
    kept["__target__"] = ("target", str(target))
    return kept


def untouched(d: Path, kept) -> None:
    for n, (kind, v) in kept.items():
        if kind == "target":
            assert Path(v).read_bytes() == SECRET, "a file outside the folder was written through a symlink"
        elif kind == "link":
            assert (d / n).is_symlink() and os.readlink(d / n) == v, n
        else:
            assert (d / n).read_bytes() == v, n


def test_out_never_clobbers_a_tmp_or_follows_a_link(tmp_path):
    kept = plant(tmp_path, ["x.json.tmp", "y.json.tmp", ".x.json.tmp", ".y.json.tmp"])
    records.save({"a": 1}, tmp_path / "x.json")
    records.save({"b": 2}, tmp_path / "y.json")
    untouched(tmp_path, kept)
    assert not (tmp_path / "x.json").is_symlink() and (tmp_path / "x.json").read_text().strip().startswith("{")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*kept.keys() - {"__target__"}, "x.json", "y.json"])


def test_compress_pipeline_works_in_a_folder_of_its_own(tmp_path):
    pid = os.getpid()
    kept = plant(tmp_path, [f"pipe-{pid}.raw", f"pipe-{pid}.z", "pipe.raw", "pipe.z"])
    compress.read_pipeline(tmp_path, b"x" * 300_000, name="zlib", chunk_bytes=2**16, caches=("warm",))
    untouched(tmp_path, kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept.keys() - {"__target__"})


def test_iobench_workfile_is_fresh_and_removed(tmp_path):
    kept = plant(tmp_path, ["iobench.dat", f"iobench-{os.getpid()}.dat", ".iobench-probe"])
    with iofile.workfile(tmp_path, 2**20) as p:
        assert p.parent == tmp_path and p.name not in kept
    untouched(tmp_path, kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept.keys() - {"__target__"})


def test_dataload_dataset_lives_in_its_own_folder(tmp_path):
    kept = plant(tmp_path, ["shard.npy", "files", "dataload-x"])
    with dataformats.dataset_dir(tmp_path, n_samples=8) as info:
        assert Path(info["root"]).parent == tmp_path
    untouched(tmp_path, kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept.keys() - {"__target__"})


def _wait_for(pred, timeout_s=60.0):
    import time

    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout_s:
            return False
        time.sleep(0.05)
    return True


def _stop_midway(tmp_path, argv, signum, started):
    """Run ``python -m helpers …argv``, send ``signum`` once ``started()`` is true; return (exit code, stderr)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    p = subprocess.Popen([sys.executable, "-m", "helpers", *argv], cwd=root, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert _wait_for(started), "the tool never started its work"
        p.send_signal(signum)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, err


def test_sigterm_removes_the_dataload_dataset(tmp_path):
    import signal

    code, err = _stop_midway(tmp_path, ["dataload", "--dir", str(tmp_path), "--samples", "20000",
                                        "--formats", "files", "--workers", "0", "--batch", "64"],
                             signal.SIGTERM, lambda: any(tmp_path.iterdir()))
    assert code == 128 + signal.SIGTERM and "cleaned up" in err, err
    assert list(tmp_path.iterdir()) == []


def test_sighup_removes_the_iobench_work_file(tmp_path):
    import signal

    # 256 MiB: the suite lasts seconds, so the signal lands mid-run even when this test is slow to notice the file
    # (with 64 MiB a loaded machine once saw the whole suite finish, exit 0, before the SIGHUP arrived)
    code, err = _stop_midway(tmp_path, ["iobench", "--path", str(tmp_path), "--size", "256MiB", "--runtime", "5"],
                             signal.SIGHUP, lambda: any(p.suffix == ".dat" for p in tmp_path.iterdir()))
    assert code != 0 and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []
