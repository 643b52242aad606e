"""``python -m helpers`` lists the book's tools; ``python -m helpers TOOL ...`` runs one.

Every tool is a module's ``main(argv)``; ``python -m helpers.WING.MODULE ...`` runs the same function. The table is
written out (not discovered) so that a tool's name is stable when its module moves; ``tests/book/test_layout.py`` checks
that every module with a ``main`` is listed here and that each entry exists.
"""
from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

# tool name -> module (a wing of helpers); the description is the module's first docstring line
TOOLS: dict[str, str] = {
    "device": "helpers.core.device",
    "launch": "helpers.core.launch",
    "smiparse": "helpers.core.smiparse",
    "expect": "helpers.core.expect",
    "backends": "helpers.compute.backends",
    "transfer": "helpers.compute.transfer",
    "bench": "helpers.compute.bench",
    "hroofline": "helpers.compute.hroofline",
    "ncu": "helpers.compute.ncu",
    "tuning": "helpers.compute.tuning",
    "mlperf": "helpers.compute.mlperf",
    "allocator": "helpers.compute.allocator",
    "fp8": "helpers.compute.fp8",
    "collectives": "helpers.network.collectives",
    "ringallreduce": "helpers.network.ringallreduce",
    "ibdiag": "helpers.network.ibdiag",
    "nccltests": "helpers.network.nccltests",
    "iperf": "helpers.network.iperf",
    "ncclenv": "helpers.network.ncclenv",
    "gpudirect": "helpers.network.gpudirect",
    "overlap": "helpers.network.overlap",
    "iobench": "helpers.storage.iobench",
    "ckptwrite": "helpers.storage.ckptwrite",
    "dataload": "helpers.storage.dataload",
    "hfstream": "helpers.storage.hfstream",
    "prefetch": "helpers.storage.prefetch",
    "augment": "helpers.storage.augment",
    "labels": "helpers.storage.labels",
    "compress": "helpers.storage.compress",
    "dptrain": "helpers.training.parallel.dptrain",
    "dszero": "helpers.training.parallel.dszero",
    "ddpcomm": "helpers.training.parallel.ddpcomm",
    "tensorpar": "helpers.training.parallel.tensorpar",
    "seqpar": "helpers.training.parallel.seqpar",
    "mesh": "helpers.training.parallel.mesh",
    "pipeline": "helpers.training.parallel.pipeline",
    "memory": "helpers.training.calc.memory",
    "actmem": "helpers.training.profiling.actmem",
    "planner": "helpers.training.calc.planner",
    "mfumodel": "helpers.training.calc.mfucli",
    "elastic": "helpers.training.resilience.elastic",
    "attention": "helpers.training.models.attention",
    "gptmfu": "helpers.training.profiling.gpt_mfu",
    "llmtrain": "helpers.training.profiling.llmtrain",
    "serving": "helpers.serving.batching",
    "llmserve": "helpers.serving.llmserve",
    "mig": "helpers.ops.mig",
    "exporter": "helpers.ops.exporter",
    "prom": "helpers.ops.promserver",
    "slurm": "helpers.ops.slurm",
    "schedsim": "helpers.ops.schedsim",
    "health": "helpers.ops.health",
    "nodecheck": "helpers.ops.nodecheck",
    "powertrace": "helpers.economics.power",
    "kernels": "helpers.kernels.kbench",
    "nvflare": "helpers.governance.nvflare_run",
    "fedrounds": "helpers.governance.fedrounds",
    "qsim": "helpers.frontier.statevector",
    "stencil": "helpers.frontier.stencil",
    "hardware": "helpers.figures.gpuprops",
    "overview": "helpers.figures.overview",
}

_PKG = Path(__file__).resolve().parent


def module_file(module: str) -> Path:
    return _PKG.parent.joinpath(*module.split(".")).with_suffix(".py")


def describe(module: str, width: int = 104) -> str:
    """The module's first docstring paragraph (shortened to ``width``), read without importing it (listing stays instant without torch)."""
    try:
        doc = ast.get_docstring(ast.parse(module_file(module).read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError) as e:          # a registered module missing or broken: list it, say so
        return f"(cannot read {module}: {type(e).__name__})"
    para = " ".join(doc.strip().split("\n\n")[0].split())
    return para if len(para) <= width else para[:width - 1].rsplit(" ", 1)[0] + " …"


def listing() -> str:
    lines = ["usage: python -m helpers TOOL [ARGS ...]    (python -m helpers TOOL --help for a tool's options)", ""]
    wing = None
    for name, module in TOOLS.items():
        w = module.split(".")[1]
        if w != wing:
            lines.append(f"{w}/")
            wing = w
        lines.append(f"  {name:14s} {describe(module)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "list"):
        print(listing())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in TOOLS:
        close = [t for t in TOOLS if t.startswith(name[:3])] or list(TOOLS)
        print(f"python -m helpers: no tool {name!r}; did you mean {', '.join(close)}? "
              "(python -m helpers lists them all)", file=sys.stderr)
        return 2
    from helpers.core import cli

    # the module is imported inside cli.run, whose signal handlers then already cover the slow imports (torch)
    return cli.run(lambda args: importlib.import_module(TOOLS[name]).main(args), rest, prog=f"python -m helpers {name}")


if __name__ == "__main__":
    sys.exit(main())
