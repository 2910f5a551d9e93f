"""A folder builds into its own build/, which git ignores, so a recipe folder stays as tracked.

tools.cmake_build.build_dir_for is the rule: ``<folder>/build``, as a recipe's README says;
the sanitizer run alone sends the checkout's builds elsewhere (``$FFI_COOKBOOK_CMAKE_BUILDS``).
"""

import os
import subprocess
import sys
from pathlib import Path

from tools.cmake_build import BUILD_DIR_ENV, BUILDS_ELSEWHERE_ENV, build_dir_for, cmake_build

RECIPE = Path("cookbook") / "02-tensor-and-view"  # its notebook also writes a generated source


def test_a_folder_builds_in_its_own_build_folder(root, monkeypatch, tmp_path):
    monkeypatch.delenv(BUILDS_ELSEWHERE_ENV, raising=False)
    assert build_dir_for(root / "cookbook" / "10-rmsnorm") == root / "cookbook" / "10-rmsnorm" / "build"
    copy = tmp_path / "02-tensor-and-view"
    copy.mkdir()
    assert build_dir_for(copy) == copy / "build"
    done = subprocess.run(["git", "check-ignore", "-q", "cookbook/10-rmsnorm/build/libx.so"], cwd=root)
    assert done.returncode == 0, "a recipe's build/ must be ignored by git"


def test_the_sanitizer_run_builds_checkout_folders_elsewhere(root, monkeypatch, tmp_path):
    monkeypatch.setenv(BUILDS_ELSEWHERE_ENV, str(tmp_path / "cmake"))
    monkeypatch.setenv(BUILD_DIR_ENV, str(root / "_build"))
    assert build_dir_for(root / "tests" / "probe") == tmp_path / "cmake" / "tests" / "probe"
    copy = root / "_build" / "sanitize" / "cookbook" / "01-add-one"  # its recipe copies: their own build/
    assert build_dir_for(copy) == copy / "build"


def test_cmake_build_prints_commands_a_reader_can_type(tmp_path, monkeypatch, capsys):
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.18)\nproject(empty NONE)\n")
    monkeypatch.chdir(project)
    assert cmake_build(".") == project / "build"
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith('$ cmake -S . -B build -DPython_EXECUTABLE="$(command -v python)"')
    assert printed[1] == "$ cmake --build build"
    assert not any(str(tmp_path) in line or sys.executable in line for line in printed)


def test_quiet_cmake_build_configures_again_only_when_the_arguments_change(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.18)\nproject(empty NONE)\n")
    monkeypatch.chdir(project)
    real_run = subprocess.run
    ran = []

    def run(cmd, **kwargs):
        ran.append(cmd[1])
        return real_run(cmd, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)

    def steps(*extra, verbose=False):
        ran.clear()
        cmake_build(".", *extra, verbose=verbose)
        return list(ran)

    assert steps() == ["-S", "--build"]
    assert steps() == ["--build"]
    assert steps("-DX=1") == ["-S", "--build"]  # another argument: configured again
    assert steps("-DX=1") == ["--build"]
    assert steps() == ["--build"]  # fewer: the cache holds X=1 either way
    assert steps("-DX=2") == ["-S", "--build"]
    assert steps("-DX=2", verbose=True) == ["-S", "--build"]  # a page shows both commands, both run
    (project / "build" / "CMakeCache.txt").unlink()  # no cache (say, removed by hand): configured
    assert steps("-DX=2") == ["-S", "--build"]


def untracked_files(root: Path) -> dict[str, int]:
    """Every file under cookbook/ and docs/ that git does not track (ignored ones too), with its mtime.

    Bytecode caches are left out: the run below puts its own elsewhere (PYTHONPYCACHEPREFIX,
    as the Makefile does), but parallel test workers may write theirs meanwhile.
    """
    done = subprocess.run(["git", "ls-files", "--others", "--", "cookbook", "docs"], cwd=root,
                          capture_output=True, text=True, check=True)
    return {name: (root / name).stat().st_mtime_ns for name in done.stdout.splitlines()
            if (root / name).exists() and "__pycache__" not in Path(name).parts}


def test_recipe_tests_and_notebook_leave_the_tree_as_it_was(root, tmp_path):
    """One recipe's tests and notebook, run as `make test` and `make docs` run them, write
    nothing beside it but its build/.

    They run in subprocesses with the Makefile's environment (bytecode caches under a build
    root of their own), so the comparison does not depend on which tests ran before.
    """
    def outside_build(files: dict) -> dict:
        return {name: t for name, t in files.items() if not name.startswith(f"{RECIPE.as_posix()}/build/")}

    before = outside_build(untracked_files(root))
    env = dict(os.environ, **{BUILD_DIR_ENV: str(tmp_path), "PYTHONPYCACHEPREFIX": str(tmp_path / "pycache")})
    env.pop(BUILDS_ELSEWHERE_ENV, None)
    for cmd in ([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(RECIPE)],
                [sys.executable, "-m", "tools.execute_notebook", str(RECIPE / "notebook.md")]):
        done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{cmd}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert (root / RECIPE / "build" / "libtensor_view.so").is_file()  # the tests' and the notebook's build
    assert outside_build(untracked_files(root)) == before
