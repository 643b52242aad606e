"""formulas — the published formulas more than one wing needs, written once: bytes per element of each dtype
(``dtypes``), the roofline bound and its ridge point (``roofline``), FLOPs and bytes of GEMMs and of transformer
training and the one definition of MFU (``flops``), α–β costs of collectives (``comm``) and the optimal checkpoint
interval (``checkpointing``). Pure functions with units in their names and the paper, table or section each one
comes from in its docstring.

Chapters 01, 08, 10, 14, 18, 21, 28 and 29 call them directly; the wings call them for chapters 03, 06, 07, 09, 15
and 25. The floor between ``core`` and the wings: ``formulas`` imports only ``core`` (and the standard library);
every wing may import it; ``core`` does not.
"""
