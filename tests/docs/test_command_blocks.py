"""Every `sh` block of README.md and docs/*.md runs as written, in a fresh folder holding the bundled examples, and
exits 0 with no error or warning: a documented command that stops working fails the build. A block that cannot
run there says why on a `<!-- not run: REASON -->` line just above it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import OpenEXR
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^(?:<!-- not run: (?P<reason>[^>]*?) -->\n)?```sh\n(?P<code>.*?)^```$", re.DOTALL | re.MULTILINE)
# The one warning a documented command may give: a PNG thumbnail of the plate drops its AOV layer, and oxi says so
# once (docs/GUIDE.md, "what a format drops"). Any other warning (a contradicted --from, a clip) fails the block.
EXPECTED_WARNING = re.compile(r"^oxi: warning: a (PNG|JPEG) file holds R, G, B(, A)?: channels .* are not written")
# Few blocks may be left out, each with its reason; more means the documents drift from what runs.
MOST_NOT_RUN = 9


def _blocks() -> list[dict[str, str]]:
    found = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("code")) + 1
            found.append({"id": f"{path.relative_to(REPO)}:{line}", "code": match.group("code"),
                          "reason": match.group("reason") or ""})
    return found


BLOCKS = _blocks()
RUN = [block for block in BLOCKS if not block["reason"]]


def _write_parts(path: Path, parts: list[tuple[str, dict, dict[str, np.ndarray]]]) -> None:
    OpenEXR.File([OpenEXR.Part(header, planes, name) for name, header, planes in parts]).write(str(path))


def _files_the_documents_name(folder: Path) -> None:
    """What the blocks process besides the examples, made from the bundled plate: a shot folder, a ten-frame
    sequence, a stereo render (one part per eye and a depth part), a render with AOVs and a right view, and a
    mip-mapped texture."""
    plate = EXAMPLES / "plate.exr"
    (folder / "shots").mkdir()
    for name in ("sh010.exr", "sh020.exr"):
        shutil.copyfile(plate, folder / "shots" / name)
    for frame in range(1001, 1011):
        shutil.copyfile(plate, folder / f"plate.{frame}.exr")
    with OpenEXR.File(str(plate), separate_channels=True) as exr:
        header = {k: v for k, v in exr.header().items() if k in ("compression", "chromaticities")}
        planes = {name: channel.pixels for name, channel in exr.channels().items()}
    rgba = {c: planes[c] for c in "RGBA"}
    depth = {"Z": np.linspace(1, 90, planes["R"].size, dtype=np.float32).reshape(planes["R"].shape)}
    _write_parts(folder / "stereo.exr", [("rgba_left", {**header, "view": "left"}, rgba),
                                         ("rgba_right", {**header, "view": "right"}, rgba),
                                         ("depth", header, depth)])
    render = {**planes, **{f"specular.{c}": planes[f"diffuse.{c}"] * 0.5 for c in "RGB"},
              **{f"right.{c}": planes[c] for c in "RGBA"}}
    OpenEXR.File({**header, "multiView": ["left", "right"]}, render).write(str(folder / "render.exr"))
    oiiotool = shutil.which("oiiotool") or str(Path(sys.executable).parent / "oiiotool")
    subprocess.run([oiiotool, str(plate), "--tile", "64", "64", "-otex", str(folder / "texture.exr")], check=True,
                   capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder each block starts from: the examples (also at the top, as `plate.exr`...) and the files above."""
    folder = tmp_path_factory.mktemp("documented")
    shutil.copytree(EXAMPLES, folder / "examples")
    for name in ("plate.exr", "look.cube", "grade.cc", "shots.ccc", "dailies.toml"):
        shutil.copyfile(EXAMPLES / name, folder / name)
    _files_the_documents_name(folder)
    return folder


def _env(runtime: str) -> dict[str, str]:
    """This tree's `oxi` first on PATH; outputs the blocks write more than once may be replaced (blocks show
    alternatives writing the same name); the service, if a block starts one, is private to the block."""
    env = {k: v for k, v in os.environ.items() if k not in ("OCIO", "OXI_BACKEND", "OXI_CLUSTER")}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", OXI_OVERWRITE="1",
               XDG_RUNTIME_DIR=runtime, COLUMNS="120")
    return env


def test_the_documents_hold_blocks_and_few_are_left_out():
    assert len(RUN) >= 15
    left_out = [block["id"] for block in BLOCKS if block["reason"]]
    assert len(left_out) <= MOST_NOT_RUN, left_out


def test_the_readme_links_and_anchors_exist():
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            file, anchor = target
            if file.startswith("http"):
                continue
            linked = (path.parent / file).resolve() if file else path
            assert linked.exists(), f"{path.name} links to missing {file}"
            if anchor and linked.suffix == ".md":
                assert anchor in _anchors(linked.read_text(encoding="utf-8")), f"{path.name}: no #{anchor} in {file}"


def _anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped but hyphens, spaces as hyphens."""
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


@pytest.mark.parametrize("block", RUN, ids=[block["id"] for block in RUN])
def test_the_documented_block_runs(template: Path, tmp_path: Path, block: dict[str, str]):
    folder = tmp_path / "work"
    shutil.copytree(template, folder)
    runtime = tempfile.mkdtemp(prefix="oxi-rt-")  # short: a service's socket path must fit 108 bytes
    try:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", block["code"]], cwd=folder, capture_output=True,
                              text=True, env=_env(runtime), timeout=600)
    finally:
        subprocess.run(["oxi", "server", "stop"], env=_env(runtime), capture_output=True, timeout=120)
        shutil.rmtree(runtime, ignore_errors=True)
    assert done.returncode == 0, f"{block['id']} exited {done.returncode}:\n{done.stderr[-3000:]}"
    problems = [line for line in done.stderr.splitlines()
                if line.startswith(("oxi: error", "oxi: warning")) and not EXPECTED_WARNING.match(line)]
    assert not problems, f"{block['id']}:\n" + "\n".join(problems)
