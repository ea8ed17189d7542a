"""The wgpu GPU backend: WGSL compute shaders on Vulkan / Metal / D3D12 / OpenGL adapters."""
