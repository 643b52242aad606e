"""figures — the chapters' diagrams and composite views (overview, hardware, cluster map, node wiring,
communication and IO diagrams). Chapters 01, 02, 03, 04, 08, 11. The top layer: it may import any wing, and no
wing imports it.
"""
