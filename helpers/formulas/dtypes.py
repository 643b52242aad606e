"""Bytes per element of each number format the book counts in (chapters 02, 09, 10, 15, 28).

One table, in the book's short names, ordered widest first (``helpers.compute.roofline`` lists dtypes in this order):

    fp64  8   IEEE 754-2008 binary64                      fp64_tc 8   fp64 on tensor cores (a compute ceiling)
    fp32  4   IEEE 754-2008 binary32                      tf32    4   stored as fp32; tensor cores read 19 bits of
    bf16  2   bfloat16: 8 exponent, 7 mantissa bits                   it (NVIDIA A100 whitepaper, 2020, "TF32")
    fp16  2   IEEE 754-2008 binary16                      fp8     1   E4M3 or E5M2 (Micikevicius et al. 2022,
                                                                      arXiv:2209.05433 §3)

bfloat16: Kalamkar et al. 2019, "A Study of BFLOAT16 for Deep Learning Training", arXiv:1905.12322 §2.
``bytes_per_element`` also takes torch's names ("float32", "bfloat16", "float8_e4m3fn" …) and torch dtypes
(``torch.bfloat16``, read by name, so torch is not imported here).
"""
from __future__ import annotations

BYTES_PER_ELEMENT = {"fp64": 8, "fp64_tc": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}

# torch's (and numpy's) names of the same formats
ALIASES = {"float64": "fp64", "float32": "fp32", "bfloat16": "bf16",
           "float16": "fp16", "half": "fp16", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "e4m3": "fp8",
           "e5m2": "fp8"}


def canonical(dtype) -> str:
    """The book's short name of ``dtype`` ("fp32", "bf16" …), from a short name, torch's name or a torch dtype."""
    name = str(dtype).removeprefix("torch.").lower()
    name = ALIASES.get(name, name)
    if name not in BYTES_PER_ELEMENT:
        raise ValueError(f"dtype={dtype!r}: unknown; use one of {list(BYTES_PER_ELEMENT)} "
                         f"(or torch's names: {sorted(ALIASES)})")
    return name


def bytes_per_element(dtype) -> int:
    """Bytes one element of ``dtype`` occupies in memory: fp32 4, bf16 2, fp8 1 … (the table above)."""
    return BYTES_PER_ELEMENT[canonical(dtype)]
