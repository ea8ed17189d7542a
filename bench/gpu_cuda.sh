# Set up the GPU machine for the CUDA backend after the README line of ../shared/tools (wheels in /tmp/site):
# numba-cuda from the machine if it compiles a kernel, else from .whl/cuda-bundle.tar.xz (numba-cuda, cuda-bindings,
# cuda-core, cuda-pathfinder as installed files, and libnvvm + libdevice as a CUDA_HOME), installed into the
# interpreter's own site-packages so their .pth redirectors run. Source it: it exports CUDA_HOME when needed.
# The probe also asks for numba-cuda 0.30.4 or later (oxi_cli/backends/cuda/devices.py NEEDS): on an H100 machine
# numba's own older CUDA target ran this kernel, yet could not compile oxi's colour kernels.
probe='from importlib import metadata
assert tuple(int(p) for p in metadata.version("numba-cuda").split(".")[:3]) >= (0, 30, 4)
from numba import cuda
@cuda.jit
def k(a):
    a[0] = 1.0
import numpy as np
x = cuda.to_device(np.zeros(1, np.float32)); k[1, 1](x); assert x.copy_to_host()[0] == 1.0'
if ! python3 -c "$probe" > /dev/null 2>&1; then
  # The machine's own CUDA Python packages go first: copying the bundle over them mixed two cuda-core builds
  # ("does not export expected C function").
  python3 -m pip uninstall -y -q numba-cuda cuda-core cuda-bindings cuda-pathfinder > /dev/null 2>&1
  rm -rf /tmp/cb && mkdir -p /tmp/cb && tar -xJf .whl/cuda-bundle.tar.xz -C /tmp/cb
  cp -r /tmp/cb/site/. "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/"
  python3 -c "$probe" > /dev/null 2>&1 || export CUDA_HOME=/tmp/cb/cudahome
fi
python3 -c "$probe" && echo "numba-cuda compiles and runs a kernel (CUDA_HOME=${CUDA_HOME:-system})"
