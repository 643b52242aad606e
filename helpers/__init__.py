"""Shared helpers for the executable book *GPU and AI compute-cluster engineering* (算力集群技术).

The package is grouped in wings, one per part of the book; import the module you need
(``from helpers.core import device``, ``from helpers.network import collectives``):

* ``core/``     what every chapter relies on (device, specs, timing, results, plotting, launch …)
* ``compute/``  one GPU's limits: GEMM, memory bandwidth, copies, roofline, allocator
* ``network/``  InfiniBand diagnosis, NCCL, collectives, communication models
* ``storage/``  IO benchmarks, data loading, prefetch, compression, storage paths
* ``training/`` distributed training runs and models, memory, planner
* ``figures/``  the chapters' diagrams (the top layer)

A wing imports only ``core/`` and itself; ``figures/`` may import any wing; ``core/`` imports no wing
(``tests/book/test_layout.py`` enforces it). ``import helpers`` imports nothing heavy, so it always works on a
CPU-only laptop. Every tool is a CLI: ``python -m helpers`` lists them, ``python -m helpers TOOL --help``.
"""

__version__ = "0.1.0"
