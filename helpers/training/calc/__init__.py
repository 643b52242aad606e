"""training.calc — calculators as pure functions: training performance models, memory per GPU, the 3D-parallel
planner, Megatron-LM flags and pipeline schedules (chapters 01, 06, 07, 09, 28)."""
