"""Half floats inside kernels: half pixels travel as their uint16 bits and convert in registers (F16C on x86).

Numba has no float16 type on the CPU, so a half image reaches a kernel as `array.view(np.uint16)`; kernels
read every pixel through `as_float` and store through `stored`, one compiled form per pixel type. Colour chains
read half blocks into float32 scratch and store them back here (`gather`, `scatter`). The conversions are LLVM's
fpext/fptrunc: exact for every value, round to nearest even, overflow to +-Inf, as numpy's float16 casts (a
signalling NaN comes back quiet).
"""

# isort: off
from oxi_cli.jit import BOOL, F32, F32_2D, I64, U16, kernel, serial  # first: Numba w/o SciPy

# isort: on
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from oxi_cli.backends.cpu.half_floats import bits, half_in_hardware
from oxi_cli.backends.cpu.pool import threads_for

# False: half images are widened to float32 with numpy before the kernels and narrowed after them.
IN_KERNELS = half_in_hardware()


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
def convert_block(src, dst):
    """Flat copy between float32 and half bits, either way (or same to same)."""
    for i in range(src.shape[0]):
        dst[i] = stored(dst, as_float(src[i]))


@kernel
def gather(r, g, b, a, scratch, start, stop, alpha):
    """Pixels [start, stop) of R, G, B (and A with `alpha`), float32 or half bits, into float32 scratch rows."""
    n = stop - start
    convert_block(r[start:stop], scratch[0, :n])
    convert_block(g[start:stop], scratch[1, :n])
    convert_block(b[start:stop], scratch[2, :n])
    if alpha:
        convert_block(a[start:stop], scratch[3, :n])


@kernel
def scatter(scratch, r, g, b, a, start, stop, alpha):
    """float32 scratch rows back into pixels [start, stop) of R, G, B (and A with `alpha`), in each plane's type."""
    n = stop - start
    convert_block(scratch[0, :n], r[start:stop])
    convert_block(scratch[1, :n], g[start:stop])
    convert_block(scratch[2, :n], b[start:stop])
    if alpha:
        convert_block(scratch[3, :n], a[start:stop])


# The two forms of a colour op's loop (argument types of its planes, in then out): float32 (chains, worked in
# float32 scratch or planes) and half bits (a lone op on a half image, converting in registers).
PLANE_FORMS = (F32, U16)
# Every form a job may call, for compiling ahead (backends/cpu/compile.py).
FORMS = [
    *((convert_block, (src, dst)) for src in (F32, U16) for dst in (F32, U16)),
    *((gather, (*(t,) * 4, F32_2D, I64, I64, BOOL)) for t in (F32, U16)),
    *((scatter, (F32_2D, *(t,) * 4, I64, I64, BOOL)) for t in (F32, U16)),
]


def convert(src: np.ndarray, dst: np.ndarray, threads: int | None = None) -> None:
    """Flat copy between float32 and half bits, either way (or same to same), on every core."""
    from oxi_cli.backends.cpu.pool import run_blocks, split

    count = threads_for(threads)
    run_blocks(lambda s, e: convert_block(src[s:e], dst[s:e]), src.shape[0], split(src.shape[0], count, 1 << 16),
               count)


def converted(plane: np.ndarray, dtype: type, threads: int | None = None) -> np.ndarray:
    """A new C-contiguous copy of `plane` in `dtype` (float32 or float16), converted on every thread."""
    out = np.empty(plane.shape, dtype)
    if IN_KERNELS or (plane.dtype == np.float32 and out.dtype == np.float32):
        convert(bits(np.ascontiguousarray(plane)).reshape(-1), bits(out).reshape(-1), threads)
    else:
        with np.errstate(over="ignore"):  # beyond half range becomes +-Inf, as OpenEXR converts
            np.copyto(out, plane)
    return out
