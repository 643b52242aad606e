"""serving — LLM inference: KV-cache sizing and a paged block allocator, static vs continuous batching (simulated
and run on the wing's own tiny causal LM), a loopback HTTP server with a batching scheduler, INT8 quantisation and
ONNX Runtime. Used by chapter 19. Imports only ``core`` and itself.
"""
