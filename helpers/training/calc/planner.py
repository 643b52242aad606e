"""A 3D-parallel planner: which (dp, tp, pp, ZeRO stage, recomputation, micro-batch) fit in GPU memory, and
how long a step would take — ranked (chapter 07).

Memory comes from ``helpers.training.calc.memory.per_gpu`` (ZeRO model states + Korthikanti activations for the first
pipeline stage under 1F1B). The step time is a small analytical model, stated here in full so that it can be
argued with; its published pieces come from ``helpers.training.calc.perfmodel`` (chapter 28):

* compute   hardware FLOPs per step / (N · peak · gemm_efficiency). FLOPs per step are Narayanan et al.'s
            eq. 3 (``perfmodel.megatron_flops_per_iteration``: 72·B·s·L·h²·(1 + s/6h + V/12Lh) without
            recomputation, 96·…·(1 + s/6h + V/16Lh) with full recomputation); selective recomputation re-does
            only QKᵀ and attention·V, adding 4·B·s²·h·L (``formulas.flops.attention_flops``);
* tensor    per micro-batch and layer, 4 all-reduces (6 with full recomputation) of b·s·h 16-bit values over
            the tp group, ring cost 2(t−1)/t · bytes / bandwidth (``formulas.comm.ring_bw_s``) — NVLink inside
            a node, the network across;
* pipeline  each stage sends activations forward and gradients back, b·s·h·2/t bytes per micro-batch;
            the 1F1B bubble (``perfmodel.pipeline_bubble``) stretches every per-micro-batch cost by (1 + (p−1)/m);
* data      a ring all-reduce of the stage's 16-bit gradients, 2(d−1)/d · 2Ψ/(tp·pp) bytes over the network
            (ZeRO-3 moves 1.5× that: an extra parameter all-gather), not overlapped with compute;
* uneven    pp need not divide the layers: ``stage_layers`` splits them as evenly as possible, the first and last
            stages (which also hold the embedding and the output layer) taking the short ones, as Llama 3 put
            126 layers on 16 stages (arXiv:2407.21783 §3.3.2). Memory and time follow the heaviest stage;
* no bf16   a GPU without bf16 (V100) is planned at its fp16 peak, and ``Plan.note`` says so.

    python -m helpers planner --preset megatron-1t --top 10 --json
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli, specs
from helpers.formulas import comm, flops
from helpers.training.calc import memory, perfmodel

# Narayanan et al. 2021 (arXiv 2104.04473), Table 1, last row: a 1T-parameter GPT on 3072 A100-80GB,
# t = 8, p = 64 (so d = 6), batch 3072, sequence 2048, vocabulary 51,200; 163 TFLOP/s per GPU achieved.
PRESETS = {
    "megatron-1t": dict(model=memory.ModelShape(n_layers=128, hidden=25600, n_heads=160, vocab=51200, seq_len=2048),
                        n_gpus=3072, global_batch=3072, gpu="A100 SXM4 80GB", published=(6, 8, 64)),
}


@dataclass(frozen=True)
class Cluster:
    n_gpus: int
    gpu: str = "A100 SXM4 80GB"         # a row of the spec table (helpers/core/data/gpu_specs.yaml)
    gpus_per_node: int = 8
    inter_node_GBps: float = 25.0       # per GPU, one direction: one 200 Gb/s HDR HCA per GPU (DGX A100)
    gemm_efficiency: float = 0.6        # assumed fraction of peak that large GEMMs reach end to end
    memory_reserve_frac: float = 0.1    # kept free for buffers, allocator caching, fragmentation

    def __post_init__(self):
        if self.n_gpus < 1 or not 0 < self.gemm_efficiency <= 1 or not 0 <= self.memory_reserve_frac < 1:
            raise ValueError(f"{self}: need n_gpus >= 1, 0 < gemm_efficiency <= 1, 0 <= memory_reserve_frac < 1")
        if self.spec is None:
            raise ValueError(f"gpu={self.gpu!r} is not in the spec table: use a name from helpers.core.specs.table()")

    @property
    def spec(self):
        return specs.lookup(self.gpu, warn=False)

    @property
    def nvlink_GBps(self) -> float:    # one direction (the table gives the bidirectional total)
        return (self.spec.nvlink_GBps or 2 * self.spec.pcie_GBps) / 2


@dataclass(frozen=True)
class Plan:
    dp: int
    tp: int
    pp: int
    zero_stage: int
    recompute: str
    micro_batch: int
    n_micro: int
    memory_GB: float
    fits: bool
    compute_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    bubble_s: float
    step_time_s: float
    tflops_per_gpu: float               # hardware FLOP/s per GPU (recomputation included, as Megatron reports)
    mfu: float                          # model FLOPs (no recomputation) / (N · peak · step time): flops.mfu
    stage_layers: tuple[int, ...] = ()  # layers per pipeline stage (uneven when pp does not divide them)
    note: str = ""

    @property
    def name(self) -> str:
        return f"DP({self.dp})-TP({self.tp})-PP({self.pp})-ZeRO{self.zero_stage}-{self.recompute}-mb{self.micro_batch}"


def flops_per_step(model: memory.ModelShape, global_batch: int, recompute: str = "none") -> float:
    """Hardware FLOPs of one training step (forward + backward + recomputation)."""
    if recompute not in memory.RECOMPUTE:
        raise ValueError(f"recompute={recompute!r}: use one of {memory.RECOMPUTE}")
    B, s, L, h, V = global_batch, model.seq_len, model.n_layers, model.hidden, model.vocab
    hw = perfmodel.megatron_flops_per_iteration(B, s, L, h, V, recompute=recompute == "full")
    return hw + (flops.attention_flops(B, s, h, L) if recompute == "selective" else 0.0)


def stage_layers(n_layers: int, pp: int) -> tuple[int, ...]:
    """Layers per pipeline stage, as even as possible; when pp does not divide n_layers the stages that hold
    the embedding (first) and the output layer (last) get the fewer layers: 126 on 16 → (7, 8, …, 8, 7)."""
    if not 1 <= pp <= n_layers:
        raise ValueError(f"pp={pp}: need 1 <= pp <= n_layers={n_layers} (a stage holds at least one layer)")
    k = -(-n_layers // pp)                   # the heaviest stage
    short = k * pp - n_layers                # stages that hold k - 1
    order = [0, pp - 1] + list(range(1, pp - 1))  # first and last shed layers first
    per = [k] * pp
    for i in range(short):
        per[order[i % pp]] -= 1
    return tuple(per)


def evaluate(model: memory.ModelShape, cluster: Cluster, global_batch: int, dp: int, tp: int, pp: int,
             zero_stage: int = 0, recompute: str = "none", micro_batch: int = 1) -> Plan:
    """Memory and estimated step time of one configuration."""
    if dp * tp * pp != cluster.n_gpus:
        raise ValueError(f"dp·tp·pp = {dp}·{tp}·{pp} = {dp * tp * pp} but the cluster has {cluster.n_gpus} GPUs")
    if global_batch % (dp * micro_batch):
        raise ValueError(f"global_batch={global_batch} is not a multiple of dp·micro_batch = {dp * micro_batch}")
    m = global_batch // (dp * micro_batch)
    layers = stage_layers(model.n_layers, pp)
    k = max(layers)
    # the heaviest stage as a model of k layers per stage (memory.per_gpu needs pp to divide its layers)
    heavy = model if k * pp == model.n_layers else memory.ModelShape(k * pp, model.hidden, model.n_heads,
                                                                     model.vocab, model.seq_len)
    mem = memory.per_gpu(heavy, micro_batch, dp, tp, pp, zero_stage, recompute, n_micro=m)
    usable = cluster.spec.memory_bytes * (1 - cluster.memory_reserve_frac)
    peak_tflops, note = cluster.spec.training_peak("bf16")
    peak = peak_tflops * 1e12
    hw = flops_per_step(model, global_batch, recompute)
    # a pipeline runs at the pace of its heaviest stage: k·pp/L of the evenly split time
    compute = hw / (cluster.n_gpus * peak * cluster.gemm_efficiency) * (k * pp / model.n_layers)
    if k * pp != model.n_layers:
        note = "; ".join(x for x in (note, f"uneven split {layers}: the {k}-layer stages set the pace") if x)
    sbh_bytes = 2 * micro_batch * model.seq_len * model.hidden
    tp_bw = cluster.nvlink_GBps if tp <= cluster.gpus_per_node else cluster.inter_node_GBps
    n_ar = 6 if recompute == "full" else 4
    tp_comm = m * k * n_ar * comm.ring_bw_s(sbh_bytes, tp, tp_bw)
    pp_bw = cluster.inter_node_GBps if tp * pp > cluster.gpus_per_node else cluster.nvlink_GBps
    pp_comm = 0.0 if pp == 1 else 2 * m * sbh_bytes / tp / (pp_bw * 1e9)
    bubble = (compute + tp_comm + pp_comm) * perfmodel.pipeline_bubble(pp, m)
    dp_bw = cluster.inter_node_GBps if cluster.n_gpus > cluster.gpus_per_node else cluster.nvlink_GBps
    dp_comm = comm.ring_bw_s(2 * model.n_params / (tp * pp), dp, dp_bw) * (1.5 if zero_stage == 3 else 1.0)
    step = compute + tp_comm + pp_comm + bubble + dp_comm
    tokens = global_batch * model.seq_len
    mfu = flops.mfu(tokens / step, flops_per_step(model, global_batch, "none") / tokens, cluster.n_gpus, peak_tflops)
    return Plan(dp, tp, pp, zero_stage, recompute, micro_batch, m, mem.total_bytes / 1e9, mem.total_bytes <= usable,
                compute, tp_comm, pp_comm, dp_comm, bubble, step, hw / cluster.n_gpus / step / 1e12, mfu, layers, note)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def enumerate_plans(model: memory.ModelShape, cluster: Cluster, global_batch: int, max_tp: int | None = None,
                    zero_stages=(0, 1, 2, 3), recomputes=memory.RECOMPUTE, micro_batches=(1, 2, 4, 8),
                    only_fitting: bool = True, uneven: bool = False) -> list[Plan]:
    """Every valid (dp, tp, pp, ZeRO, recompute, micro-batch), fastest first. tp divides the heads and stays
    within ``max_tp`` (default: one node); pp divides the layers (``uneven=True``: any pp up to the layer count,
    split by ``stage_layers``); dp·micro-batch divides the batch."""
    max_tp = max_tp or cluster.gpus_per_node
    plans = []
    pps = _divisors(cluster.n_gpus) if uneven else _divisors(model.n_layers)
    for tp in _divisors(model.n_heads):
        if tp > max_tp or cluster.n_gpus % tp or model.hidden % tp:
            continue
        for pp in (q for q in pps if q <= model.n_layers):
            if cluster.n_gpus % (tp * pp):
                continue
            dp = cluster.n_gpus // (tp * pp)
            for mb in micro_batches:
                if global_batch % (dp * mb):
                    continue
                for z in zero_stages:
                    for r in recomputes:
                        plan = evaluate(model, cluster, global_batch, dp, tp, pp, z, r, mb)
                        if plan.fits or not only_fitting:
                            plans.append(plan)
    if not plans and only_fitting:
        raise ValueError(f"no configuration of {cluster.n_gpus} × {cluster.gpu} fits a "
                         f"{model.n_params / 1e9:.0f}B model: add GPUs, allow ZeRO-3 or larger tp (max_tp)")
    return sorted(plans, key=lambda p: p.step_time_s)


def rank_grid(dp: int, tp: int, pp: int) -> list[dict]:
    """Each global rank's coordinates in a DP × PP × TP mesh, TP varying fastest (so a TP group is a block
    of consecutive ranks — one node's NVLink island), then PP, then DP (picotron's order). The name reads
    like ``TP(2)-PP(2)-DP(2)-Rank(3)``: the sizes, then the rank."""
    if min(dp, tp, pp) < 1:
        raise ValueError(f"dp={dp}, tp={tp}, pp={pp}: every degree must be >= 1")
    rows = []
    for rank in range(dp * tp * pp):
        t, p_, d = rank % tp, (rank // tp) % pp, rank // (tp * pp)
        rows.append({"rank": rank, "dp_index": d, "pp_index": p_, "tp_index": t,
                     "tp_group": [d * tp * pp + p_ * tp + i for i in range(tp)],
                     "dp_group": [i * tp * pp + p_ * tp + t for i in range(dp)],
                     "name": f"TP({tp})-PP({pp})-DP({dp})-Rank({rank})"})
    return rows


def records(plans: list[Plan]) -> list[dict]:
    keys = ("dp", "tp", "pp", "zero_stage", "recompute", "micro_batch", "n_micro", "memory_GB", "fits",
            "step_time_s", "compute_s", "bubble_s", "tp_comm_s", "dp_comm_s", "tflops_per_gpu", "mfu", "note")
    return [{"plan": p.name, **{k: getattr(p, k) for k in keys}} for p in plans]


def main(argv: list[str] | None = None) -> int:
    from helpers.core import results

    ap = argparse.ArgumentParser(prog="python -m helpers planner", description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="megatron-1t", choices=sorted(PRESETS))
    ap.add_argument("--top", type=cli.bounded_int(1, 10_000), default=10)
    ap.add_argument("--efficiency", type=cli.bounded_float(0.0, 1.0, lo_open=True), default=0.6, help="assumed GEMM efficiency (fraction of peak)")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    pr = PRESETS[a.preset]
    cluster = Cluster(pr["n_gpus"], pr["gpu"], gemm_efficiency=a.efficiency)
    plans = enumerate_plans(pr["model"], cluster, pr["global_batch"])
    results.emit(records(plans[: a.top]), "planner", a, columns=["plan", "memory_GB", "step_time_s",
                                                                 "tflops_per_gpu", "mfu"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
