"""figures — every chapter figure, drawn from the data the wings compute: overview, hardware, cluster map, node
wiring, communication and IO diagrams, and one module per wing (compute, training, network, storage paths in
iodiagrams, ops, kernels, economics). Chapters 01–13, 15, 21, 23–25, 28. The top layer: it may import any wing,
and no wing imports it; ``helpers.core.plotting`` holds only the shared renderer and theme.
"""
