"""Sandbox confinement: every path the file tools touch stays under the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conch.tools.paths import Confined, PathOutsideSandbox


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    place = tmp_path / "outside"
    place.mkdir()
    (place / "secret.txt").write_text("secret\n", encoding="utf-8")
    return place


def test_relative_paths_resolve_under_the_root(sandbox: Path) -> None:
    confined = Confined(sandbox)
    assert confined.resolve("a/b.txt") == sandbox.resolve() / "a" / "b.txt"
    assert confined.resolve("") == confined.resolve(".") == sandbox.resolve()


def test_the_root_s_absolute_path_without_its_leading_slash_is_taken_as_absolute(
    sandbox: Path,
) -> None:
    root = sandbox.resolve()
    confined = Confined(sandbox)
    bare = str(root).lstrip("/")
    assert confined.resolve(bare) == root  # small models copy the root that way
    assert confined.resolve(f"{bare}/a/b.txt") == root / "a" / "b.txt"
    (root / bare.split("/")[0]).mkdir()  # unless its first part is really there
    assert confined.resolve(f"{bare}/a.txt") == root / bare / "a.txt"


def test_dot_dot_that_stays_inside_is_allowed(sandbox: Path) -> None:
    assert Confined(sandbox).resolve("a/../b.txt") == sandbox.resolve() / "b.txt"


@pytest.mark.parametrize("path", ["..", "../x.txt", "a/../../x.txt", "a/b/../../../x"])
def test_dot_dot_escapes_are_refused_naming_the_path_and_the_root(sandbox: Path, path: str) -> None:
    with pytest.raises(PathOutsideSandbox) as caught:
        Confined(sandbox).resolve(path)
    assert f"'{path}'" in str(caught.value)
    assert str(sandbox.resolve()) in str(caught.value)


def test_an_absolute_path_outside_is_refused(sandbox: Path, outside: Path) -> None:
    with pytest.raises(PathOutsideSandbox, match="is outside the sandbox"):
        Confined(sandbox).resolve(str(outside / "secret.txt"))


def test_an_absolute_path_inside_is_allowed(sandbox: Path) -> None:
    inside = sandbox.resolve() / "notes.txt"
    assert Confined(sandbox).resolve(str(inside)) == inside


def test_a_symlink_pointing_outside_is_refused(sandbox: Path, outside: Path) -> None:
    (sandbox / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathOutsideSandbox, match="symlink") as caught:
        Confined(sandbox).resolve("link.txt")
    assert str(outside / "secret.txt") in str(caught.value)


def test_a_new_file_under_a_symlinked_parent_outside_is_refused(
    sandbox: Path, outside: Path
) -> None:
    (sandbox / "docs").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathOutsideSandbox):
        Confined(sandbox).resolve("docs/new.txt")
    with pytest.raises(PathOutsideSandbox):
        Confined(sandbox).resolve("docs/deeper/new.txt")


def test_a_dangling_symlink_pointing_outside_is_refused(sandbox: Path, outside: Path) -> None:
    (sandbox / "later.txt").symlink_to(outside / "not-yet.txt")
    with pytest.raises(PathOutsideSandbox):
        Confined(sandbox).resolve("later.txt")


def test_a_symlink_inside_resolves_to_its_target(sandbox: Path) -> None:
    (sandbox / "real.txt").write_text("x", encoding="utf-8")
    (sandbox / "alias.txt").symlink_to(sandbox / "real.txt")
    confined = Confined(sandbox)
    assert confined.resolve("alias.txt") == sandbox.resolve() / "real.txt"
    assert confined.resolve("alias.txt", follow_final=False) == sandbox.resolve() / "alias.txt"


def test_new_files_in_new_directories_resolve_inside(sandbox: Path) -> None:
    assert Confined(sandbox).resolve("x/y/z.txt") == sandbox.resolve() / "x" / "y" / "z.txt"


def test_a_root_reached_through_a_symlink_is_compared_by_its_real_path(
    sandbox: Path, tmp_path: Path
) -> None:
    (tmp_path / "via").symlink_to(sandbox, target_is_directory=True)
    confined = Confined(tmp_path / "via")
    assert confined.root == sandbox.resolve()
    assert confined.resolve(str(tmp_path / "via" / "a.txt")) == sandbox.resolve() / "a.txt"


def test_the_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory"):
        Confined(tmp_path / "missing")


def test_a_tilde_is_not_expanded_and_says_so(sandbox: Path) -> None:
    with pytest.raises(ValueError, match="'~' is not expanded"):
        Confined(sandbox).resolve("~/notes.txt")


def test_a_symlink_loop_is_an_error_not_a_hang(sandbox: Path) -> None:
    os.symlink(sandbox / "b", sandbox / "a")
    os.symlink(sandbox / "a", sandbox / "b")
    with pytest.raises(ValueError, match="cannot be resolved"):
        Confined(sandbox).resolve("a")


def test_display_names_paths_relative_to_the_root(sandbox: Path) -> None:
    confined = Confined(sandbox)
    assert confined.display(confined.resolve("a/b.txt")) == "a/b.txt"
    assert confined.display(confined.root) == "."
