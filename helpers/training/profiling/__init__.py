"""training.profiling — one process measured: activation memory, what FP8 saves, where a step's time goes, a GPT's
model FLOPs utilisation (chapters 09, 15, 18)."""
