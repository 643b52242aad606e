"""GPU kernels the book writes itself (chapters 10 and 25): numba CUDA kernels run in the simulator with their memory
accesses counted, Triton kernels (interpreter on a CPU, compiled on a GPU, PTX/SASS for Hopper either way), the
occupancy calculator, torch.compile fusion counts, and the cupy kernels measured on the H200."""
