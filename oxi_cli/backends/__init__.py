"""Compute backends (CPU via Numba, GPU via wgpu) behind one protocol."""
