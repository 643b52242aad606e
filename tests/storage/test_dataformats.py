"""helpers.storage.dataformats: seeded images, every format returns the same samples, the folder is removed
(chapters 11 and 04)."""
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers.storage import dataformats


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    with dataformats.dataset_dir(tmp_path_factory.mktemp("dl"), n_samples=48, shape=(3, 16, 16)) as info:
        yield info


def test_synth_images_seeded():
    a, la = dataformats.synth_images(4, (3, 8, 8), seed=1)
    b, lb = dataformats.synth_images(4, (3, 8, 8), seed=1)
    assert a.dtype == np.uint8 and a.shape == (4, 3, 8, 8) and (a == b).all() and (la == lb).all()
    with pytest.raises(ValueError, match="n_samples=0"):
        dataformats.synth_images(0)


def test_formats_return_the_same_samples(ds):
    sets = [dataformats.make(f, ds["root"]) for f in dataformats.FORMATS]
    for i in (0, 17, 47):
        xs = [s[i] for s in sets]
        assert all(torch.equal(xs[0][0], x[0]) and xs[0][1] == x[1] for x in xs)
    assert xs[0][0].dtype == torch.float32 and 0 <= float(xs[0][0].min()) and float(xs[0][0].max()) <= 1
    assert ds["zshard_bytes"] < ds["raw_bytes"] and ds["files_bytes"] > ds["raw_bytes"]
    with pytest.raises(ValueError, match="'tfrecord'"):
        dataformats.make("tfrecord", ds["root"])


def test_dataset_dir_is_removed_on_error(tmp_path):
    with pytest.raises(RuntimeError, match="planted"):
        with dataformats.dataset_dir(tmp_path, n_samples=4, shape=(1, 4, 4)) as info:
            assert Path(info["root"]).parent == tmp_path and info["n_samples"] == 4
            raise RuntimeError("planted")
    assert list(tmp_path.iterdir()) == []
