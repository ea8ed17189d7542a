"""The Numba CPU backend: parallel kernels over float32 (H, W, C) arrays."""
