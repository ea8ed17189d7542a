"""The CUDA backend: numba-cuda kernels on NVIDIA GPUs, the CPU kernels' per-pixel maths compiled for the device."""
