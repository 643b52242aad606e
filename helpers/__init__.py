"""Shared helpers for the executable book *GPU and AI compute-cluster engineering* (算力集群技术).

One module per capability; import the module you need (``from helpers import device``).
``import helpers`` itself imports nothing heavy, so it always works on a CPU-only laptop.

Low modules (import no other helper): ``device``, ``specs``, ``topology``, ``timing``, ``progress``.
Higher modules build on them: ``results`` (provenance, tables, JSON), ``measurements`` (recorded
reference results), ``plotting``, ``transfer``, ``backends``, ``perfmodel``, ``launch`` …

Every benchmark module is also a CLI: ``python -m helpers.<module> --help``.
"""

__version__ = "0.1.0"
