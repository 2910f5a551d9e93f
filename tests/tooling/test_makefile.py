"""The Makefile's entry points: what a reader types first."""

import re
import subprocess


def test_plain_make_builds_the_site(root):
    """Rules for files (the compiler facts) come before `all`; without .DEFAULT_GOAL, a plain
    `make` made the first of them and stopped."""
    database = subprocess.run(["make", "-pnq", "--no-print-directory"], cwd=root, capture_output=True,
                              text=True).stdout
    assert re.findall(r"^\.DEFAULT_GOAL := (\S+)$", database, re.M) == ["all"]


def test_make_help_names_the_ci_steps(root):
    listed = subprocess.run(["make", "-s", "help"], cwd=root, capture_output=True, text=True, check=True).stdout
    for target in ("docs", "test", "test-sanitize", "recipe", "gpu-check"):
        assert re.search(rf"^  make {target} +\S", listed, re.M), target


def test_clean_stops_the_take_away_venv_made_in_the_background(tmp_path):
    """`make clean` runs tools/takeaway_venv.py --stop before it removes the build folder: the
    background maker (`make takeaway-venv`) and its children (pip) are gone when it returns."""
    import sys
    import time
    from pathlib import Path

    from tools.takeaway_venv import _group_running, pid_file

    root = Path(__file__).resolve().parents[2]
    folder = tmp_path / "takeaway-venv"
    # A maker whose work is a child that would write into the folder a minute from now.
    maker = ("import subprocess, sys, tools.takeaway_venv as t; "
             f"t.venv_at = lambda f: subprocess.run(['sh', '-c', 'sleep 60; touch {folder}/late']); "
             f"sys.exit(t.main(['--background', {str(folder)!r}]))")
    child = subprocess.Popen([sys.executable, "-c", maker], cwd=root, start_new_session=False)
    deadline = time.monotonic() + 30
    while not pid_file(folder).is_file() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file(folder).read_text().strip() == str(child.pid)
    time.sleep(0.3)  # its `sleep` child has started
    done = subprocess.run([sys.executable, "-m", "tools.takeaway_venv", "--stop", str(folder)], cwd=root,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and f"(pid {child.pid})" in done.stdout, done.stdout + done.stderr
    assert child.wait(timeout=5) != 0
    assert not _group_running(child.pid), "a process of the maker's group is still running"
    assert not (folder / "late").exists()
    assert not pid_file(folder).exists()
    # Nothing running: --stop says nothing and succeeds (a stale pid file is removed).
    pid_file(folder).write_text("999999\n")
    again = subprocess.run([sys.executable, "-m", "tools.takeaway_venv", "--stop", str(folder)], cwd=root,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and again.stdout == "" and not pid_file(folder).exists()


def test_clean_runs_the_stop_before_removing(root):
    rules = subprocess.run(["make", "-n", "--no-print-directory", "clean", "BUILD=/nonexistent/b"], cwd=root, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    assert "tools.takeaway_venv --stop /nonexistent/b/takeaway-venv" in rules[0]
    assert rules[1] == "rm -rf /nonexistent/b build"


def test_recipe_says_what_it_will_build_after_clean(root, tmp_path):
    """After `make clean` (no venv, runtime, take-away venv or site), `make recipe` first prints
    every step it will take, with rough times, using only the standard library."""
    import sys

    from tools.recipe_runs import plan

    name, steps = plan("5", tmp_path / "build", tmp_path / "venv" / ".installed", root=root, runtime=tmp_path / "runtime")
    assert name == "05-dtype-dispatch"
    text = "\n".join(steps)
    for words in ("project venv", "recipe library", "take-away venv", "whole site", "05-dtype-dispatch's part"):
        assert words in text, (words, text)
    assert all("min" in step for step in steps)
    assert steps[-1].startswith("in all about ")
    printed = subprocess.run(["make", "-n", "--no-print-directory", "recipe", "R=5"], cwd=root, capture_output=True, text=True,
                             check=True).stdout.splitlines()
    assert "tools.recipe_runs --plan 5" in printed[1]  # after the usage check, before anything is built
    # -S: no site-packages, as the interpreter that makes the venv has none of ours
    done = subprocess.run([sys.executable, "-S", "-m", "tools.recipe_runs", "--plan", "rmsnorm", "--build",
                           str(tmp_path / "b"), "--stamp", str(tmp_path / "v")], cwd=root, capture_output=True,
                          text=True)
    assert done.returncode == 0 and done.stdout.startswith("make recipe R=rmsnorm (10-rmsnorm) will:"), done.stderr
