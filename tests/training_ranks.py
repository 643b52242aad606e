"""One 2-rank spawn shared by the distributed tests of chapters 06-07 (dptrain, tensorpar, pipeline_run).

Each start of ranks costs seconds of process start and torch import per rank on a 2-core machine, so the three
checks run in one process group, through the same worker functions that ``dptrain.compare``, ``tensorpar.run`` and
``pipeline.run`` hand to ``launch.run`` (the notebooks run those wrappers end to end). Importable, so the spawned
children can load ``all_checks``.
"""
import functools

from helpers.core import launch
from helpers.training.parallel import dptrain, pipeline, tensorpar

DP_KINDS, DP_MODES, DP_STEPS, DP_BATCH = ("mlp", "gpt"), ("ddp", "fsdp-grad-op", "fsdp-full"), 3, 8


def all_checks(ctx):
    return {"dptrain": dptrain.train_modes(ctx, DP_KINDS, DP_MODES, DP_STEPS, DP_BATCH, 1e-2, 0),
            "tensorpar": tensorpar.check(ctx, d_model=32, batch=2, seq=4, seed=0, variants=("naive", "dtensor")),
            "pipeline": pipeline.run_stages(ctx, ("gpipe", "1f1b"), 4, 2, 16)}


@functools.lru_cache(maxsize=1)
def results() -> dict:
    """Every rank's results, keyed by check: {"dptrain": [...], "tensorpar": [...], "pipeline": [...]}."""
    res = launch.run(all_checks, 2, timeout_s=150)
    return {k: [x for per_rank in res.results for x in per_rank[k]] for k in res.results[0]}
