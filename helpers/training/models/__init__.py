"""training.models — the networks the training labs run: tiny seeded MLP and GPT, attention written out, fused and
tiled (chapters 06, 07, 09, 18)."""
