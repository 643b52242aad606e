"""helpers.storage.augment: the three placements give identical results for a fixed seed."""
import numpy as np
import pytest
import torch

from helpers.storage import augment, dataformats


@pytest.fixture(scope="module")
def data():
    return dataformats.synth_images(96, (3, 12, 12), seed=1)


def test_params_are_per_sample_and_seeded():
    assert augment.params(5, seed=0) == augment.params(5, seed=0)
    assert len({augment.params(i, seed=0) for i in range(50)}) > 10
    assert all(0 <= dy <= 8 and 0 <= dx <= 8 for dy, dx, _ in (augment.params(i) for i in range(50)))


def test_sample_crop_and_flip_by_hand():
    img = np.arange(2 * 4 * 4, dtype=np.uint8).reshape(2, 4, 4)
    x = augment.augment_sample(img, 3, pad=1, mean=(0, 0), std=(1 / 255, 1 / 255))   # undo the scaling
    dy, dx, flip = augment.params(3, pad=1)
    ref = np.pad(img, ((0, 0), (1, 1), (1, 1)))[:, dy:dy + 4, dx:dx + 4]
    ref = ref[:, :, ::-1] if flip else ref
    assert torch.allclose(x, torch.from_numpy(ref.astype(np.float32)), atol=1e-4)


def test_batched_equals_per_sample(data):
    imgs, _ = data
    idx = list(range(len(imgs)))
    one = torch.stack([augment.augment_sample(imgs[i], i, seed=7) for i in idx])
    many = augment.augment_batch(torch.from_numpy(imgs), idx, seed=7)
    assert torch.equal(one, many)


def test_three_variants_identical(data):
    imgs, labels = data
    outs = [augment.run_epoch(v, imgs, labels, batch_size=32, num_workers=2, collect=True)[1]
            for v in augment.VARIANTS]
    assert all(torch.equal(outs[0], o) for o in outs[1:])
    recs = augment.measure(imgs, labels, batch_size=32, num_workers=1, epochs=2)
    assert len({r.digest for r in recs}) == 1 and all(r.samples_per_s > 0 for r in recs)


def test_bad_input():
    with pytest.raises(ValueError, match="uint8"):
        augment.augment_sample(np.zeros((3, 4, 4), np.float32), 0)
    with pytest.raises(ValueError, match="variant"):
        augment.run_epoch("gpu", np.zeros((2, 3, 4, 4), np.uint8), np.zeros(2))
    with pytest.raises(ValueError, match="epochs"):
        augment.measure(np.zeros((2, 3, 4, 4), np.uint8), np.zeros(2), epochs=1)
