"""training.parallel — one module per parallelism, each run on real ranks through ``helpers.core.launch`` with its
communication beside it: DDP/FSDP, ZeRO, DDP hooks, tensor fusion, tensor, sequence, pipeline, context and expert
parallelism, and a 2-D device mesh (chapters 06, 07, 08, 18)."""
