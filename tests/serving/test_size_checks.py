"""serving refuses request/token/batch sizes it cannot hold or finish, before the first step (issue 28 item 5)."""
import pytest

from helpers.core import cli, resources
from helpers.serving import batching

GiB = 2**30


def test_requests_tokens_and_batch_are_checked(monkeypatch, capsys):
    monkeypatch.setattr(resources, "available_memory_bytes", lambda: 16 * GiB)
    batching.check_size(64, 32, 64, 256)                                 # the defaults pass
    with pytest.raises(resources.NotEnough, match="lower --requests or --max-new"):
        batching.check_size(2 * 10**9, 8, 64, 256)
    with pytest.raises(resources.NotEnough, match="lower --requests or --max-new"):
        batching.check_size(64, 8, 2 * 10**9, 256)
    with pytest.raises(resources.NotEnough, match=r"batch 100000000 .* lower --batch/--d-model"):
        batching.check_size(64, 10**8, 64, 256)
    assert cli.run(batching.main, ["--requests", "2000000000"]) == 2
    assert "limit of 1e+07" in capsys.readouterr().err
