"""training.resilience — checkpoints that resume bit-identically, elastic restarts and checkpoint intervals, loss
spikes and their cures (chapters 14, 26)."""
