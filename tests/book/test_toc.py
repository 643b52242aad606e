"""Reading order = chapter numbers (issue 29): "Next" from chapter N is chapter N + 1, and each chapter's label is
its number."""
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_chapters_are_listed_in_number_order_with_matching_labels():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"] if c["file"].startswith("chapters/")]
    numbers = [int(re.match(r"chapters/(\d\d)-", f).group(1)) for f in files]
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    for f, n in zip(files, numbers):
        md = (ROOT / f).with_suffix(".md").read_text()
        assert f"(ch{n:02d})=" in md and re.search(rf"^# {n}\. ", md, re.M), f"{f}: label (ch{n:02d})= and '# {n}. …'"
