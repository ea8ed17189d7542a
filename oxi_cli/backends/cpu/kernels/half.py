"""Half floats inside kernels: half pixels travel as their uint16 bits and convert in registers (F16C on x86).

Numba has no float16 type on the CPU, so a half image reaches a kernel as `array.view(np.uint16)`; kernels
read every pixel through `as_float` and store through `stored`, and one compiled variant per dtype serves
float32 and half images alike. The conversions are LLVM's fpext/fptrunc: exact for every value, round to
nearest even, overflow to +-Inf, as numpy's float16 casts (a signalling NaN comes back quiet).
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from oxi_cli.backends.cpu.jit import kernel, prange


@intrinsic
def _half_bits_to_float(typingctx, bits):  # noqa: ANN001, ARG001
    def codegen(context, builder, signature, args):  # noqa: ANN001, ARG001
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())

    return types.float32(types.uint16), codegen


@intrinsic
def _float_to_half_bits(typingctx, value):  # noqa: ANN001, ARG001
    def codegen(context, builder, signature, args):  # noqa: ANN001, ARG001
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))

    return types.uint16(types.float32), codegen


def as_float(x):  # noqa: ANN001, ANN201
    """A pixel value as float32: half bits (uint16) are decoded, float32 passes as is."""
    return np.float32(x)


def stored(like, value):  # noqa: ANN001, ANN201
    """`value` (float32) as an element of array `like`: half bits for uint16 arrays, else float32."""
    return value


@overload(as_float, inline="always")
def _as_float(x):  # noqa: ANN001, ANN202
    if x == types.uint16:
        return lambda x: _half_bits_to_float(x)
    return lambda x: np.float32(x)


@overload(stored, inline="always")
def _stored(like, value):  # noqa: ANN001, ANN202
    if like.dtype == types.uint16:
        return lambda like, value: _float_to_half_bits(np.float32(value))
    return lambda like, value: np.float32(value)


@kernel
def convert(src, dst):
    """Flat copy between float32 and half bits, either way (or same to same), on every thread."""
    for i in prange(src.shape[0]):
        dst[i] = stored(dst, as_float(src[i]))


def bits(a: np.ndarray) -> np.ndarray:
    """The array a kernel takes: half arrays as their uint16 bits, float32 as is."""
    return a.view(np.uint16) if a.dtype == np.float16 else a
