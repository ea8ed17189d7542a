"""ASC CDL (slope, offset, power, saturation) as OpenColorIO's CDLTransform, both clamp styles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from oxi_cli.errors import OpError, UsageError
from oxi_cli.ops.base import ColorOp, Encoded, check_finite, finite_triple
from oxi_cli.ops.codes import CDL_ASC, CDL_NOCLAMP
from oxi_cli.ops.step import Param, Step, StepArgs, choices

CdlStyle = Literal["noclamp", "asc"]
STYLES = ("noclamp", "asc")  # OCIO's CDL_NO_CLAMP and CDL_ASC


@dataclass(frozen=True)
class Cdl(ColorOp):
    """out = sat-mix of ((in*slope + offset) ** power); `asc` clamps to [0, 1] before power and after sat."""

    slope: tuple[float, float, float] = (1.0, 1.0, 1.0)
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    power: tuple[float, float, float] = (1.0, 1.0, 1.0)
    sat: float = 1.0
    style: CdlStyle = "noclamp"
    name: ClassVar[str] = "cdl"
    flops_per_pixel: ClassVar[int] = 80  # three pows

    def __post_init__(self) -> None:
        for label in ("slope", "offset", "power"):
            object.__setattr__(self, label, finite_triple(label, getattr(self, label)))
        object.__setattr__(self, "sat", float(self.sat))
        check_finite("sat", [self.sat])
        # Same bounds OpenColorIO's CDLOpData::validate enforces.
        if min(self.slope) < 0:
            raise OpError(f"CDL slope must be >= 0, got {self.slope}")
        if min(self.power) <= 0:
            raise OpError(f"CDL power must be > 0, got {self.power}")
        if self.sat < 0:
            raise OpError(f"CDL saturation must be >= 0, got {self.sat}")
        if self.style not in ("noclamp", "asc"):
            raise OpError(f"CDL style must be 'noclamp' or 'asc', got {self.style!r}")

    def is_identity(self) -> bool:
        neutral = (
            self.slope == (1.0, 1.0, 1.0)
            and self.offset == (0.0, 0.0, 0.0)
            and self.power == (1.0, 1.0, 1.0)
            and self.sat == 1.0
        )
        return neutral and self.style == "noclamp"

    def encode(self, has_alpha: bool) -> Encoded:
        code = CDL_ASC if self.style == "asc" else CDL_NOCLAMP
        return Encoded(code, [*self.slope, *self.offset, *self.power, self.sat])


def _build(args: StepArgs) -> list[Cdl]:
    """Values given explicitly override the file's."""
    style = args.choice("style", STYLES)
    file = args.path("file")
    values = ("slope", "offset", "power", "sat")
    if file is None and not any(name in args for name in values):
        listed = ", ".join(args.label(n) for n in values)
        raise UsageError(
            f"cdl needs {args.label('file')} FILE or at least one of {listed} "
            "(to copy or re-encode a file, use `oxi run IN OUT`)"
        )
    if file is not None:
        base = args.files.cdl(file, args.text("id"), style, args.label("id"))
    elif "id" in args:
        raise UsageError(f"{args.label('id')} picks a correction inside a CDL file; give the file too")
    else:
        base = Cdl(style=style)
    sat = args.number("sat")
    return [Cdl(
        slope=args.rgb("slope") or base.slope,
        offset=args.rgb("offset") or base.offset,
        power=args.rgb("power") or base.power,
        sat=base.sat if sat is None else sat,
        style=style,  # type: ignore[arg-type]
    )]


RGB_HELP = "R,G,B or one number for all."
STEP = Step(
    "cdl",
    summary="Apply an ASC CDL (slope, offset, power, saturation), with the maths of OpenColorIO.",
    value=Param("file", "ASC CDL file: .cc, .ccc or .cdl. The values below override it.", option="--cdl",
                metavar="FILE"),
    params=(
        Param("slope", RGB_HELP),
        Param("offset", RGB_HELP),
        Param("power", "R,G,B or one number for all (> 0)."),
        Param("sat", "Saturation (Rec.709 luma weights)."),
        Param("id", "Correction id (or 0-based index) in a .ccc / .cdl; needed when it holds several."),
        Param("style", "noclamp (scene-linear safe) or asc (clamps to 0..1).", default="noclamp",
              complete=choices(*STYLES)),
    ),
    build=_build,
    run_help="ASC CDL file (.cc/.ccc/.cdl), or values:\n"
             "'slope=R,G,B offset=R,G,B power=R,G,B sat=S'",
    examples="""\b
Examples:
  oxi cdl plate.exr graded.exr --slope 1.1,1.0,0.9 --offset 0.01 --power 1.2 --sat 0.9
  oxi cdl plate.exr graded.exr --cdl shot.ccc --id sh010
  oxi cdl plate.exr graded.exr --cdl look.cc --sat 1.1 --style asc
  oxi cdl shots/ -o graded/ --cdl look.cc --jobs 2 --skip-existing
  oxi cdl 'plate.####.exr' -o 'graded.####.exr' --frames 1001-1100 --cdl look.cc
  oxi cdl cg.exr graded.exr --cdl look.cc --unpremult        # a premultiplied CG render with alpha
\b
noclamp (default, OCIO CDL_NO_CLAMP): v = in*slope+offset; v**power where v > 0; sat around Rec.709 luma.
asc (OCIO CDL_ASC): the same with v clamped to [0, 1] before the power and after the saturation.
With no --cdl and no value oxi refuses (use `oxi run IN OUT` to copy); a .ccc/.cdl holding several corrections
needs --id (the error lists the ids). Values must be finite and within float32 (±3.4e38).
""",
)
