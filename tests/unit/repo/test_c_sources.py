"""The sources whose change rebuilds a C component: its own folder and the shared src/common."""

from __future__ import annotations

from pathlib import Path

from mpiguide.core.paths import c_component, c_sources

REPO = Path(__file__).resolve().parents[3]


def test_a_component_depends_on_the_shared_build_code() -> None:
    sources = c_sources(str(REPO), "inject")
    assert str(REPO / "src" / "inject" / "interposed.def") in sources
    assert str(REPO / "src" / "common" / "build.mk") in sources
    assert str(REPO / "src" / "common" / "preload.c") in sources
    assert not any("/src/kernel/" in path for path in sources)


def test_the_kernel_reads_its_subfolders_and_the_mockups() -> None:
    sources = c_sources(str(REPO), "kernel", "mockups")
    assert str(REPO / "src" / "kernel" / "io" / "input.c") in sources
    assert str(REPO / "src" / "mockups" / "mockups.c") in sources
    assert sources == sorted(sources)


def test_component_folder() -> None:
    assert c_component("ckout", "tune") == str(Path("ckout", "src", "tune"))
