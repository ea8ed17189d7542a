"""The wgpu GPU backend: WGSL compute shaders on Vulkan / Metal / D3D12 / OpenGL adapters."""

import os
import sys
import tempfile


def _quiet_headless_loader() -> None:
    # Mesa's Vulkan loader prints "XDG_RUNTIME_DIR is invalid or not set" on every start in sessions without
    # a login (render-farm nodes, cron, CI); a private directory keeps stderr to oxi's own lines.
    if not sys.platform.startswith("linux") or os.environ.get("XDG_RUNTIME_DIR"):
        return
    path = os.path.join(tempfile.gettempdir(), f"oxi-runtime-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        if os.stat(path).st_uid == os.getuid():
            os.environ["XDG_RUNTIME_DIR"] = path
    except OSError:
        pass


_quiet_headless_loader()
