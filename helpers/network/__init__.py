"""network — between GPUs: InfiniBand tool parsers and the fabric diagnoser, NCCL's environment, collective
benchmarks the nccl-tests way, the alpha-beta cost models and a ring all-reduce from send/recv. Chapters 03, 08
(and 24 as it comes). Imports only ``core`` and itself.
"""
