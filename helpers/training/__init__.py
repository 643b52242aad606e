"""training — distributed training, run and modelled: tiny models, data/tensor/pipeline/sequence parallel mini-runs,
DDP's buckets, training memory and activations, checkpoints and elastic restarts, attention, MoE and MFU, training
stability, performance models, a 3D-parallel planner and bottleneck rules. Chapters 01, 06, 07, 08, 09, 14, 15, 18,
26, 28. Imports only ``core`` and itself.
"""
