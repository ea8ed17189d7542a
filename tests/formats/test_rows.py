"""LUT row scanning: NumPy's parse of plain bodies is the Numba scanner's, bit for bit, and needs no Numba."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from oxi_cli.errors import FormatError
from oxi_cli.formats import rows as rows_mod
from oxi_cli.formats.cube import parse_cube
from oxi_cli.formats.registry import load_lut
from tests.formats.files import random_rows, rows_text, write

REPO = Path(__file__).resolve().parents[2]


def test_typical_cube_parses_without_importing_numba(tmp_path):
    size = 33
    values = random_rows(size**3, seed=5)
    header = '# exported by a grading tool\nTITLE "look"\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 1 1\n\n'
    path = write(tmp_path / "look.cube", f"{header}LUT_3D_SIZE {size}\n" + rows_text(values, "%.6f"))
    code = (
        "import sys\n"
        "from oxi_cli.formats.registry import load_lut\n"
        "(op,) = load_lut(sys.argv[1])\n"
        "print(sorted(m for m in ('numba', 'oxi_cli.jit') if m in sys.modules))\n"
        "sys.stdout.flush()\n"
        "sys.stdout.buffer.write(op.table.tobytes())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, env=env, check=True).stdout
    imported, table = out.split(b"\n", 1)
    assert imported == b"[]"
    # "%.6f" of these values has at most 7 digits: the scanner rounds them correctly, as float() does.
    expected = np.array([[float(f"{v:.6f}") for v in row] for row in values]).astype(np.float32)
    expected = expected.reshape(size, size, size, 3).transpose(2, 1, 0, 3)  # file order is red fastest
    assert table == expected.tobytes()


# --- NumPy against the Numba scanner ---------------------------------------------------------------------

# Number spellings: plain decimals of every length NumPy takes (up to 18 digits) and longer, exponents (which
# only the Numba scanner takes), and tokens neither takes (two points, a bare sign, NaN, hex, underscores...).
FORMATS = ["%.0f", "%.1f", "%.3f", "%.6f", "%+.6f", "%.9f", "%.10f", "%.12f", "%.15f", "%.17f", "%.20f"]
FORMATS += ["%.9g", "%.17g", "%.8e", "%.3E"]
ODD = [b"007.50", b".5", b"5.", b"+.25", b"-0", b"-0.000", b"123456789012345678", b"0.000000000000000001"]
ODD += [b"99999999999999999.9", b"-.000000000000000009"]
UNUSUAL = [b"1234567890123456789", b"0.1234567890123456789", b"1e5", b"1E-3", b"0e999", b"1e99", b"4e38"]
UNUSUAL += [b"1.2.3", b"-", b".", b"1e", b"1-2", b"--1", b"nan", b"-inf", b"0x1F", b"1_0", b"#", b"DOMAIN"]
BLANKS = [b"", b" ", b"\t", b"  \t ", b"\x0b", b"\x0c"]


def a_token(rng: np.random.Generator, fmt: str) -> bytes:
    if rng.random() < 0.03:
        return ODD[rng.integers(len(ODD))]
    return (fmt % (rng.standard_normal() * 10.0 ** rng.integers(-9, 7))).encode()


def a_body(rng: np.random.Generator, ncols: int, nrows: int, integers: bool) -> bytes:
    """Rows as one writer would spell them, with varied spacing and blank lines; a third of the bodies then
    get something unusual in one place (a token, a row with a number too few or too many, a comment...)."""
    fmt = "%d" if integers else FORMATS[rng.integers(len(FORMATS))]
    lines = []
    for _ in range(nrows):
        toks = [b"%d" % rng.integers(-5000, 70000) if integers else a_token(rng, fmt) for _ in range(ncols)]
        sep = [b" ", b"  ", b"\t", b" \x0b"][rng.integers(4)]
        lines.append(BLANKS[rng.integers(3)] + sep.join(toks) + BLANKS[rng.integers(len(BLANKS))])
        if rng.random() < 0.03:
            lines.append(BLANKS[rng.integers(len(BLANKS))])
    if lines and rng.random() < 0.33:
        at = int(rng.integers(len(lines)))
        toks = lines[at].split() or [b"1"]
        changes = [
            b" ".join([*toks[:-1], UNUSUAL[rng.integers(len(UNUSUAL))]]),
            b" ".join(toks[:-1]),
            b" ".join([*toks, b"1"]),
            lines[at] + b" # note",
            b"# comment\n" + lines[at],
            b"LUT_3D_SIZE 2\n" + lines[at],
            b"e 1 2\n" + lines[at],
        ]
        lines[at] = changes[rng.integers(len(changes))]
    newline = b"\r\n" if rng.random() < 0.3 else b"\n"
    return newline.join(lines) + (newline if rng.random() < 0.8 else b"")


def a_case(rng: np.random.Generator) -> tuple[tuple, dict]:
    """scan_rows' arguments for a body after a header, as each format calls it (a cube table, Length rows up to
    a closing brace, reading until full), with room for a row too few or too many."""
    ncols = int(rng.choice([1, 2, 3, 6]))
    nrows = int(rng.integers(0, 60))
    capacity = max(0, nrows + int(rng.integers(-2, 3)))
    kwargs: dict = {"integers": rng.random() < 0.15, "skip_words": rng.random() < 0.2}
    layout = rng.random()
    if layout < 0.2:
        kwargs["stop_when_full"] = True
    elif layout < 0.45:
        first, n = int(rng.integers(0, 3)), int(rng.integers(1, 5))
        kwargs["cube"], capacity = (first, n), first + n**3
        nrows = capacity + int(rng.choice([0, 0, 0, -1, 1]))
    prefix = b"LUT_3D_SIZE 2\n" * int(rng.integers(0, 3))
    data = prefix + a_body(rng, ncols, nrows, kwargs["integers"])
    if rng.random() < 0.1:
        kwargs["end"] = len(data)
        data += b"}\ntrailing text"
    return ("t.lut", data, len(prefix), 1 + prefix.count(b"\n"), ncols, capacity, "row"), kwargs


def outcome(monkeypatch: pytest.MonkeyPatch, use_numpy: bool, args: tuple, kwargs: dict) -> tuple:
    """scan_rows with NumPy tried first or not: its Rows as exact bytes, or its error."""
    monkeypatch.setattr(rows_mod, "_numpy_pays", lambda nbytes: use_numpy)
    try:
        got = rows_mod.scan_rows(*args, **kwargs)
    except FormatError as exc:
        return ("error", str(exc))
    return (
        got.values.dtype,
        got.values.shape,
        got.values.tobytes(),
        got.count,
        got.first_extra_line,
        got.last_row_line,
    )


@pytest.mark.parametrize("seed", range(4))
def test_numpy_parse_is_the_numba_scanners_bit_for_bit(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    taken = []
    numpy_scan = rows_mod._numpy_scan

    def noted(*args):
        scan = numpy_scan(*args)
        taken.append(scan is not None)
        return scan

    monkeypatch.setattr(rows_mod, "_numpy_scan", noted)
    for _ in range(300):
        args, kwargs = a_case(rng)
        assert outcome(monkeypatch, True, args, kwargs) == outcome(monkeypatch, False, args, kwargs), (args, kwargs)
    # The corpus must exercise both NumPy's parse and its refusals.
    assert 0.2 < np.mean(taken) < 0.8


def test_cube_files_parse_the_same_either_way(monkeypatch, tmp_path):
    size = 9
    values = random_rows(size**3, seed=11) * np.float32(1e3) - np.float32(20)
    shaper = random_rows(5, seed=12)
    files = {
        "plain": f"LUT_3D_SIZE {size}\n" + rows_text(values, "%.6f"),
        "crlf": (f"DOMAIN_MIN -1 -1 -1\nDOMAIN_MAX 2 2 2\nLUT_3D_SIZE {size}\n" + rows_text(values, "%.9f ")).replace(
            "\n", "\r\n"
        ),
        "shaper": "LUT_1D_SIZE 5\nLUT_3D_SIZE 9\nLUT_1D_INPUT_RANGE 0 2\n" + rows_text(shaper) + rows_text(values),
        "short": f"LUT_3D_SIZE {size}\n" + rows_text(values[:-1], "%.4f"),
        "long": f"LUT_3D_SIZE {size}\n" + rows_text(values, "%.4f") + "1 2 3\n",
        "comment": f"LUT_3D_SIZE {size}\n" + rows_text(values[:10]) + "# half way\n" + rows_text(values[10:]),
        "keyword": f"LUT_3D_SIZE {size}\n" + rows_text(values) + "DOMAIN_MAX 1 1 1\n",
    }
    for name, text in files.items():
        path = write(tmp_path / f"{name}.cube", text)
        results = []
        for use_numpy in (True, False):
            monkeypatch.setattr(rows_mod, "_numpy_pays", lambda nbytes, use=use_numpy: use)
            try:
                results.append([op.table.tobytes() for op in load_lut(path)])
            except FormatError as exc:
                results.append(str(exc))
        assert results[0] == results[1], name


def test_once_the_scanner_is_loaded_it_takes_every_body():
    rows_mod._numba_scanner()
    assert not rows_mod._numpy_pays(100)
    assert parse_cube(b"LUT_3D_SIZE 2\n" + b"0 0 0\n" * 8, "t.cube")
