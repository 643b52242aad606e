"""core — what every chapter relies on: the machine (device, nvmlquery, topology, specs), measurement (timing,
units, progress), results with provenance (records, results, measurements), figures' house style (plotting) and
starting ranks (launch). Used by every chapter. ``core`` imports no other wing.
"""
