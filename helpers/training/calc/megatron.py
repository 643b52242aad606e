"""A plan from the book's planner written as Megatron-LM's own command-line arguments (chapter 06).

Megatron-LM (``pretrain_gpt.py``) takes the layout as flags: ``--tensor-model-parallel-size`` t,
``--pipeline-model-parallel-size`` p (data parallelism is what is left: d = world / (t·p)),
``--micro-batch-size`` b and ``--global-batch-size`` B (so B / (d·b) micro-batches per step),
``--use-distributed-optimizer`` (optimizer state sharded over d: ZeRO-1), ``--recompute-granularity``.

* :func:`args_for` — the argument set for a model shape and a layout (e.g. a :class:`planner.Plan`);
* :func:`validate` — the divisibility rules Megatron's ``arguments.py`` enforces, with the fix in the message;
* :func:`parse_script` — the ``--flag value`` pairs of a real launch script (tests/data/real/megatron/);
* :func:`diff` — ours next to the published ones, flag by flag.
"""
from __future__ import annotations

import shlex

from helpers.training.calc import memory, planner

LAYOUT_FLAGS = ("--num-layers", "--hidden-size", "--num-attention-heads", "--seq-length",
                "--max-position-embeddings", "--micro-batch-size", "--global-batch-size",
                "--tensor-model-parallel-size", "--pipeline-model-parallel-size")


def args_for(model: memory.ModelShape, tp: int, pp: int, micro_batch: int, global_batch: int,
             zero_stage: int = 0, recompute: str = "none") -> dict[str, str | None]:
    """Megatron-LM flags (value ``None``: a switch) for this model and layout."""
    if zero_stage not in (0, 1):
        raise ValueError(f"zero_stage={zero_stage}: Megatron's distributed optimizer is ZeRO-1; use 0 or 1 "
                         "(ZeRO-2/3 are DeepSpeed's or FSDP's)")
    a: dict[str, str | None] = {
        "--num-layers": str(model.n_layers), "--hidden-size": str(model.hidden),
        "--num-attention-heads": str(model.n_heads), "--seq-length": str(model.seq_len),
        "--max-position-embeddings": str(model.seq_len), "--micro-batch-size": str(micro_batch),
        "--global-batch-size": str(global_batch), "--tensor-model-parallel-size": str(tp),
        "--pipeline-model-parallel-size": str(pp)}
    if zero_stage == 1:
        a["--use-distributed-optimizer"] = None
    if recompute != "none":
        a["--recompute-granularity"] = recompute
        if recompute == "full":
            a.update({"--recompute-method": "uniform", "--recompute-num-layers": "1"})
    return a


def from_plan(plan: planner.Plan, model: memory.ModelShape) -> dict[str, str | None]:
    return args_for(model, plan.tp, plan.pp, plan.micro_batch, plan.dp * plan.micro_batch * plan.n_micro,
                    plan.zero_stage, plan.recompute)


def validate(args: dict, world_size: int) -> dict:
    """Derived sizes (dp, micro-batches per step); ValueError where Megatron would refuse the flags."""
    g = lambda k, d=1: int(args.get(k) or d)  # noqa: E731
    tp, pp = g("--tensor-model-parallel-size"), g("--pipeline-model-parallel-size")
    if world_size % (tp * pp):
        raise ValueError(f"world size {world_size} is not divisible by tp·pp = {tp}·{pp}: "
                         f"launch a multiple of {tp * pp} ranks")
    dp = world_size // (tp * pp)
    heads, hidden, mb, gb = (g("--num-attention-heads"), g("--hidden-size"), g("--micro-batch-size"),
                             g("--global-batch-size", dp * g("--micro-batch-size")))
    if heads % tp or hidden % tp:
        raise ValueError(f"tp={tp} must divide the heads ({heads}) and hidden size ({hidden}): pick a divisor")
    if gb % (mb * dp):
        raise ValueError(f"global batch {gb} is not divisible by micro-batch × dp = {mb} × {dp}: "
                         f"use a multiple of {mb * dp}")
    return {"world_size": world_size, "dp": dp, "tp": tp, "pp": pp, "n_micro": gb // (mb * dp)}


def parse_script(text: str) -> dict[str, str | None]:
    """The ``--flag [value ...]`` pairs of a shell launch script (comments dropped; later flags win)."""
    out: dict[str, str | None] = {}
    for line in text.splitlines():
        try:
            toks = shlex.split(line, comments=True)
        except ValueError:
            continue
        i = 0
        while i < len(toks):
            if toks[i].startswith("--"):
                vals = []
                while i + 1 < len(toks) and not toks[i + 1].startswith("--") and toks[i + 1] != "\\":
                    vals.append(toks[i + 1])
                    i += 1
                out[toks[i - len(vals)]] = " ".join(vals) if vals else None
            i += 1
    return out


def argv(args: dict) -> list[str]:
    return [x for k, v in args.items() for x in ((k,) if v is None else (k, v))]


def diff(ours: dict, published: dict, flags=LAYOUT_FLAGS) -> list[dict]:
    return [{"flag": f, "ours": ours.get(f), "published": published.get(f), "equal": ours.get(f) == published.get(f)}
            for f in flags]
