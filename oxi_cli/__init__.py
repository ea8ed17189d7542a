"""oxi: colour and image processing for production image files."""

import os

# oxi calls no BLAS routine, yet OpenBLAS starts one thread per core when numpy is imported: 0.18 s of every
# run on a 16-core host (python -X importtime, numpy 0.38 s -> 0.20 s). A user's own setting still wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
