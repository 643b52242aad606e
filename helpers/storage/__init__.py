"""storage — feeding the GPUs: an IO benchmark beside fio, data loading formats and DataLoader sweeps, the CUDA
prefetcher, compression codecs and storage paths hop by hop. Chapters 04, 11, 15, 23. Imports only ``core`` and
itself.
"""
