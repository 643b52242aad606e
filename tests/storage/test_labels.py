"""helpers.storage.labels: manifest checksums, missing/duplicate/unknown labels, mislabel detection."""
import json

import numpy as np
import pytest

from helpers.storage import labels


@pytest.fixture
def folder(tmp_path):
    imgs, y = labels.class_images(80, n_classes=4, seed=0)
    classes = ["cat", "dog", "car", "ship"]
    labels.write(tmp_path, imgs, {i: classes[k] for i, k in enumerate(y)}, classes)
    return tmp_path, imgs, y, classes


def test_clean_folder_verifies(folder):
    root, imgs, y, classes = folder
    r = labels.verify(root)
    assert r.ok and r.labelled == 80 and sum(r.counts.values()) == 80
    assert r.counts == {c: int((y == k).sum()) for k, c in enumerate(classes)}
    assert r.imbalance == max(r.counts.values()) / min(r.counts.values())
    man = json.loads((root / "manifest.json").read_text())
    assert man["files"][0]["sha256"] == labels.sha256(root / "shard.npy")


def test_changed_shard_and_label_problems(folder):
    root, imgs, y, classes = folder
    rows = labels.read_labels(root)
    rows = [r for r in rows if r[0] != 5] + [(7, "dog"), (99, "cat"), (9, "plane")]
    (root / "labels.csv").write_text("sample,label\n" + "".join(f"{s},{lab}\n" for s, lab in rows))
    with open(root / "shard.npy", "r+b") as f:
        f.seek(200)
        f.write(b"\xff")
    r = labels.verify(root)
    assert not r.ok
    assert set(r.bad_files) == {"shard.npy", "labels.csv"}
    assert r.missing == (5,) and r.orphans == (99,) and r.duplicates == (7, 9) and r.unknown == (9,)   # 9 has its old row too


def test_suspect_labels_finds_a_flipped_label():
    imgs, y = labels.class_images(200, n_classes=4, seed=3)
    assert labels.suspect_labels(imgs, y) == []
    bad = y.copy()
    bad[17] = (bad[17] + 1) % 4
    bad[40] = -1                                  # unlabelled: skipped
    assert labels.suspect_labels(imgs, bad) == [17]


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="manifest"):
        labels.verify(tmp_path)
    with pytest.raises(ValueError, match="classes"):
        labels.class_images(1, n_classes=4)
    (tmp_path / "labels.csv").write_text("id,class\n")
    with pytest.raises(ValueError, match="header"):
        labels.read_labels(tmp_path)


def test_manifest_and_labels_are_checked(folder, capsys):
    """Issue 35: classes given as a string ("cat,dog") ran, read as the classes c, a, t, ','…; refused with the fix."""
    from helpers.core import cli

    root, imgs, y, classes = folder
    man = json.loads((root / "manifest.json").read_text())
    for key, value, words in (("classes", "cat,dog", 'is a str, not a list of class names .write classes: \\["cat", "dog"\\]'),
                              ("classes", ["cat", "cat"], "distinct, non-empty"), ("classes", ["cat", ""], "non-empty"),
                              ("samples", -1, "negative"), ("samples", 1.5, "not an integer"),
                              ("files", [{"path": "../x", "bytes": 1, "sha256": "0"}], "not a path inside")):
        (root / "manifest.json").write_text(json.dumps({**man, key: value}))
        with pytest.raises(ValueError, match=words):
            labels.verify(root)
        assert cli.run(labels.main, [str(root)]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    with pytest.raises(ValueError, match="not a list of class names"):
        labels.write(root / "new", imgs, {}, "cat,dog")
    (root / "manifest.json").write_text(json.dumps(man))
    for body, words in (("sample,label\n\u0663,cat\n", "not an integer"), ("sample,label\n3,cat,dog\n", "line 2")):
        (root / "labels.csv").write_text(body)
        with pytest.raises(ValueError, match=words):
            labels.read_labels(root)
