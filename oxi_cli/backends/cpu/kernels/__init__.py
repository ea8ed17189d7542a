"""Numba kernels, one module per op, named as the op and its wgsl/ shader."""
