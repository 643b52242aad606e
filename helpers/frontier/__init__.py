"""Frontier topics (chapter 30, trends): a state-vector quantum circuit simulator on torch (CPU or GPU), a CXL
memory-tier latency/bandwidth model, and a heat-equation stencil placed on the roofline."""
