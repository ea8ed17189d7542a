"""Half floats inside kernels: half pixels travel as their uint16 bits and convert in registers (F16C on x86).

Numba has no float16 type on the CPU, so a half image reaches a kernel as `array.view(np.uint16)`; kernels
read every pixel through `as_float` and store through `stored`, and one compiled variant per dtype serves
float32 and half images alike. The conversions are LLVM's fpext/fptrunc: exact for every value, round to
nearest even, overflow to +-Inf, as numpy's float16 casts (a signalling NaN comes back quiet).
"""

# isort: off
from oxi_cli.jit import kernel, prange, serial  # first: it imports Numba without SciPy and coverage

# isort: on
import os
import platform

import numpy as np
from llvmlite import binding, ir
from numba import types
from numba.extending import intrinsic, overload


def _in_hardware() -> bool:
    """Whether this CPU converts half in an instruction: F16C on x86 (since 2012), always on 64-bit ARM.
    Elsewhere LLVM would call a runtime helper the JIT may not find, so half stays out of the kernels
    (OXI_HALF_IN_KERNELS=0 forces that path, to test it)."""
    if os.environ.get("OXI_HALF_IN_KERNELS", "").strip() == "0":
        return False
    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        return True
    return machine in ("x86_64", "amd64") and bool(binding.get_host_cpu_features().get("f16c", False))


# False: half images are widened to float32 with numpy before the kernels and narrowed after them.
IN_KERNELS = _in_hardware()


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


def _bitcast(result: types.Type, argument: types.Type, target: ir.Type) -> object:
    """An intrinsic reinterpreting an `argument` value's bits as a `result` (LLVM type `target`)."""

    @intrinsic
    def reinterpret(typingctx, value):  # noqa: ANN001, ARG001
        def codegen(context, builder, signature, args):  # noqa: ANN001, ARG001
            return builder.bitcast(args[0], target)

        return result(argument), codegen

    return reinterpret


# The IEEE bits of a float32 as uint32 (half-domain LUT indices are computed in integers), and back; the same
# for float64 and int64 (kernels/mathf.py's exponent arithmetic).
float_bits = _bitcast(types.uint32, types.float32, ir.IntType(32))
bits_float = _bitcast(types.float32, types.uint32, ir.FloatType())
double_bits = _bitcast(types.int64, types.float64, ir.IntType(64))
bits_double = _bitcast(types.float64, types.int64, ir.DoubleType())


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


@serial
def load_rgb(r_in, g_in, b_in, i):
    """Pixel i of three planes as float32."""
    return as_float(r_in[i]), as_float(g_in[i]), as_float(b_in[i])


@serial
def store_rgb(r_out, g_out, b_out, i, rgb):
    """Store a float32 (r, g, b) as pixel i of three planes, in each plane's type."""
    r_out[i], g_out[i], b_out[i] = stored(r_out, rgb[0]), stored(g_out, rgb[1]), stored(b_out, rgb[2])


@kernel
def convert(src, dst):
    """Flat copy between float32 and half bits, either way (or same to same), on every thread."""
    for i in prange(src.shape[0]):
        dst[i] = stored(dst, as_float(src[i]))


def bits(a: np.ndarray) -> np.ndarray:
    """The array a kernel takes: half arrays as their uint16 bits, float32 as is."""
    return a.view(np.uint16) if a.dtype == np.float16 else a


def converted(plane: np.ndarray, dtype: type) -> np.ndarray:
    """A new C-contiguous copy of `plane` in `dtype` (float32 or float16), converted on every thread."""
    out = np.empty(plane.shape, dtype)
    if IN_KERNELS or (plane.dtype == np.float32 and out.dtype == np.float32):
        convert(bits(np.ascontiguousarray(plane)).reshape(-1), bits(out).reshape(-1))
    else:
        with np.errstate(over="ignore"):  # beyond half range becomes +-Inf, as OpenEXR converts
            np.copyto(out, plane)
    return out
