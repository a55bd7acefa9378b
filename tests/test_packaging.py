"""The wheel installs hookbus/ and its metadata only: never bare events/, kernel/, ..."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("hookbus-*.whl")
    return built


def test_wheel_holds_only_the_hookbus_namespace(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/", 1)[0] for name in names}
    (dist_info,) = [top for top in tops if top.endswith(".dist-info")]
    assert tops == {"hookbus", dist_info}
    assert "hookbus/__init__.py" not in names  # a namespace package
    for package in ("events", "kernel", "metrics", "runners"):
        assert f"hookbus/{package}/__init__.py" in names
        assert f"hookbus/{package}/py.typed" in names


def test_wheel_declares_the_cli_plugin_and_dependencies(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    dist_info = next(n.split("/")[0] for n in archive.namelist() if ".dist-info/" in n)
    entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    assert "hookbus = hookbus.runners.app._cli:main" in entry_points
    assert "[pytest11]" in entry_points
    metadata = archive.read(f"{dist_info}/METADATA").decode()
    for dependency in ("anyio", "gymnasium", "msgspec", "numpy"):
        assert f"Requires-Dist: {dependency}" in metadata


def test_wheel_holds_the_reporting_package_and_its_optional_extras(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    assert "hookbus/runners/reporting/__init__.py" in archive.namelist()
    dist_info = next(n.split("/")[0] for n in archive.namelist() if ".dist-info/" in n)
    metadata = archive.read(f"{dist_info}/METADATA").decode()
    assert "Provides-Extra: tensorboard" in metadata
    assert "Provides-Extra: plot" in metadata
    # Optional: a bare install needs neither (the writers import them on first use).
    assert 'Requires-Dist: tensorboardX>=2.6; extra == "tensorboard"' in metadata
    assert 'Requires-Dist: matplotlib>=3.7; extra == "plot"' in metadata
