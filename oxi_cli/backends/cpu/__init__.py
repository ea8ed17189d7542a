"""The Numba CPU backend: parallel kernels over image planes, float32 or half (see backend.Planes)."""
