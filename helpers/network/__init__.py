"""network — between GPUs: InfiniBand tool parsers and the fabric diagnoser, NCCL's environment and nccl-tests logs,
collective benchmarks the nccl-tests way, the alpha-beta cost models, a ring all-reduce from send/recv, and cluster
fabrics (fat-tree, dragonfly, torus) with routing and placement models. Chapters 03, 08, 24. Imports only ``core``
and itself.
"""
