"""gpudirect off a GPU: it says why and measures nothing (the GPU path is recorded by scripts/record/gpudirect.sh)."""
import pytest

from helpers.network import gpudirect


def test_cpu_path_refuses_with_reason():
    ok, why = gpudirect.available()
    if ok:
        pytest.skip(f"a GPU is here ({why}): the record script measures it")
    assert why
    with pytest.raises(ValueError, match="needs a CUDA GPU"):
        gpudirect.measure((2**20,))


def test_cli_rejects_bad_sizes():
    from helpers.core import cli

    assert cli.run(gpudirect.main, ["--sizes", "15"]) == 2
