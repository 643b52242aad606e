"""training — distributed training, run and modelled: tiny models, data/tensor/pipeline parallel mini-runs, DDP's
buckets, training memory and activations, performance models, a 3D-parallel planner and bottleneck rules.
Chapters 01, 06, 07, 08, 09, 15, 28. Imports only ``core`` and itself.
"""
