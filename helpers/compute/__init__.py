"""compute — what one GPU (or CPU) can do: GEMM and STREAM ceilings, host↔device copies, engines compared, the
roofline, a layer simulator and the caching allocator. Chapters 01, 02, 09, 15, 28 (and 10, 25 as they come).
Imports only ``core`` and itself.
"""
