"""Shared helpers for the executable book *GPU and AI compute-cluster engineering* (算力集群技术).

Three floors, imports pointing down only (``tests/book/test_layout.py`` reads them and names any breach):

* ``core/``       what every chapter relies on and that knows no domain: device and backend choice, specs, timing
                  (with CUDA-graph capture), results and records, the one launcher of distributed labs
                  (``launch.run``), CLI hardening, plotting's renderer and theme
* ``formulas/``   the published formulas two wings need, written once: bytes per dtype, the roofline, FLOPs of
                  layers and of training and MFU, α–β collective costs, Young/Daly checkpoint intervals
* the wings, one per part of the book, each importing only ``core``, ``formulas`` and itself:
    ``compute/``     one GPU's limits: GEMM, memory bandwidth, copies, roofline, allocator, FP8, MLPerf, ncu
    ``network/``     InfiniBand diagnosis, NCCL and nccl-tests, collectives, communication models, routing, iperf
    ``storage/``     IO benchmarks, data loading and formats, prefetch, compression, checkpoint writes, paths
    ``training/``    ``models/`` (tiny MLP/GPT, attention), ``parallel/`` (DP, ZeRO, TP, SP, PP, CP, EP, mesh on
                     real ranks), ``calc/`` (performance, memory, planner), ``profiling/``, ``resilience/``
    ``kernels/``     GPU programming: SIMT simulator, occupancy, launch overhead, Triton, fusion
    ``serving/``     batching, KV cache, quantisation, a server on localhost
    ``ops/``         Slurm, Prometheus exporter, health, MIG, Kubernetes, logs, BMC, virtualisation
    ``economics/``   power traces, energy, facility, TCO, spot, autoscaling
    ``governance/``  security, federated learning (NVFlare), MLOps pipelines, privacy, compliance
    ``frontier/``    Blackwell, CXL, low precision, quantum state vectors, stencils
* ``figures/``    the top: every chapter figure, drawn from what the wings compute; it may import any wing and
                  no wing imports it

No import cycles anywhere. ``import helpers`` imports nothing heavy, so it always works on a CPU-only laptop. Every
tool is a CLI: ``python -m helpers`` lists them, ``python -m helpers TOOL --help``.
"""

__version__ = "0.1.0"
