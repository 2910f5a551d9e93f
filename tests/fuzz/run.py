"""Find the exports, hand their jobs to the pool, describe failures."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from tests.fuzz.cases import systematic_cases
from tests.fuzz.exports import MAY_ABORT, Target, exports, kind_of, parse_signature
from tests.fuzz.pool import Pool, Report

ROOT = Path(__file__).resolve().parents[2]


def default_libraries() -> list[Path]:
    """The recipe library (not in the sanitizer run), each recipe folder's own libraries,
    and those of the other CMake projects the site or the tests build (projects()).

    A recipe's are those `make test` built when it ran the recipe's zip, if that zip holds the
    recipe as it is now (tools/recipe_runs.build_of_run): the same sources and commands, so
    building the checkout's folder again would compile the same objects. In the sanitizer
    run, those of its sanitized copy of the recipe (tests/sanitize). Otherwise the checkout's
    folder is built."""
    import ffi_cookbook
    from tools import takeaway
    from tools.cmake_build import build_root, cmake_build
    from tools.recipe_runs import RUNS, build_of_run
    from tools.takeaway_venv import inputs_key

    libraries = [] if sanitized_run() else [ffi_cookbook.library_path()]
    root = build_root(ROOT)
    key = inputs_key() if (root / RUNS).is_dir() and not sanitized_run() else None  # today's runs' venv
    for folder in projects():
        name = folder.name
        recipe = folder.parent == ROOT / "cookbook"
        if recipe and sanitized_run():
            build = cmake_build(root / "cookbook" / name, verbose=False)  # tests/sanitize built it
        else:
            build = key and recipe and build_of_run(name, takeaway.recipe_files(name), root, key)
            build = build or cmake_build(folder, *one_gpu_architecture(folder), verbose=False)
        libraries += [p for p in sorted(build.glob("lib*.so")) if exports(p)]
    libraries += [p for p in sorted(cmake_build(new_library_copy(), verbose=False).glob("lib*.so"))
                  if exports(p)]
    return libraries


#: The GPU architecture a library compiles for when it is built only to be called without a GPU.
ONE_GPU_ARCHITECTURE = "-DCMAKE_CUDA_ARCHITECTURES=90-real"


def names_cuda(folder: Path) -> bool:
    """Whether the CMake project in ``folder`` names CUDA in project() (it needs nvcc to configure)."""
    import re

    return bool(re.search(r"project\([^)]*\bCUDA\b", (folder / "CMakeLists.txt").read_text()))


def one_gpu_architecture(folder: Path) -> list[str]:
    """A recipe's wheel template with CUDA in project() (recipe 22's) compiles for one GPU
    architecture here: the library is built to be called without a GPU, and the recipe's own
    run (its README, in make test) builds the template for every architecture it names."""
    is_template = folder.name == "template" and folder.parent.parent == ROOT / "cookbook"
    return [ONE_GPU_ARCHITECTURE] if is_template and names_cuda(folder) else []


#: The package name the fuzz gives the library `ffi-cookbook new` writes.
NEW_LIBRARY = "fuzzlib"


def written_copy(files: dict[str, bytes], dest: Path) -> Path:
    """``files`` written under ``dest``, written again from nothing when any differs (a build
    folder inside it is kept while they are the same)."""
    import shutil

    from ffi_cookbook.catalog import write_files

    if any(not (dest / rel).is_file() or (dest / rel).read_bytes() != data for rel, data in files.items()):
        shutil.rmtree(dest, ignore_errors=True)
        write_files(files, dest)
    return dest


def new_library_copy() -> Path:
    """The project `ffi-cookbook new fuzzlib` writes, under the build root (rewritten when
    the template changed)."""
    from tools.cmake_build import build_root
    from ffi_cookbook.kernel_library import library_files

    return written_copy(library_files(NEW_LIBRARY), build_root(ROOT) / "fuzz" / "newlib")


def sanitized_run() -> bool:
    """In the sanitizer run (tests/sanitize), which builds the recipe folders but not the
    recipe library: its sources are the folders' own, built there with the sanitizers."""
    return bool(os.environ.get("FFI_COOKBOOK_SANITIZER_PRELOAD"))


def built_variants() -> list[str]:
    """The device variants of the libraries the fuzz calls: the recipe library's, and those the
    recipe folders build wherever nvcc is found (CUDA; NVSHMEM where its wheel is), also where
    `make` built the recipe library CPU-only. The sanitizer run's builds are CPU only."""
    import shutil

    import ffi_cookbook
    from tests.needs import nvshmem_available

    if sanitized_run():
        return ["cpu"]
    found = set(ffi_cookbook.variants())
    if shutil.which("nvcc"):
        found.add("cuda")
        if nvshmem_available():
            found.add("nvshmem")
    return [v for v in ("cpu", "cuda", "nvshmem") if v in found]


def projects() -> list[Path]:
    """The CMake projects whose libraries the fuzz calls: every recipe folder, a recipe's
    wheel template, the guides' and concepts' code. Not runtime/ (the recipe library, built
    from the recipes' sources), tests/probe (probe_library) or a template with placeholders
    (the project `ffi-cookbook new` writes; tests/product/test_fuzz.py lists its exports)."""
    found = []
    for pattern in ["cookbook/*/CMakeLists.txt", "cookbook/*/template/CMakeLists.txt", "docs/*/code/CMakeLists.txt"]:
        found += [p.parent for p in ROOT.glob(pattern) if "@" not in p.read_text()]
    return sorted(found)


def probe_library(name: str = "libhelper_probe.so") -> Path:
    """A library of tests/probe (built when needed)."""
    from tools.cmake_build import cmake_build

    return cmake_build(ROOT / "tests" / "probe", "-DFFI_COOKBOOK_CUDA=OFF", verbose=False) / name


def discover(libraries: list[Path], pool: Pool) -> list[Target]:
    """Every export of every library with its parameter kinds, read from its arity error."""
    targets = []
    for library in libraries:
        for name in exports(library):
            reply = pool.call(str(library), name, (("none",),) * 40)
            params = parse_signature(reply[2]) if reply[0] == "raised" else None
            if params is None and reply[0] in ("raised", "returned"):
                # An export written by hand against the C ABI (docs/concepts/code) states no
                # signature: it is called with up to three arguments of any kind.
                params = ["Any"] * 3
            if params is None:
                raise RuntimeError(f"cannot read the signature of {name} in {library}: {reply}")
            targets.append(Target(library, name, tuple(kind_of(p) for p in params)))
    return targets


def systematic(targets: list[Target], pool: Pool, may_abort: set[str] = MAY_ABORT) -> Report:
    """The systematic pass, before the random search: for every export and every parameter,
    each bad value of every kind (cases.systematic_cases) with the other arguments taken
    from the export's valid sample. The same cases in every run; an export allowed to
    abort is left to the random search."""
    jobs = []
    for t in systematic_targets(targets, may_abort):
        specs = systematic_cases(t.kinds)
        jobs.append({"library": str(t.library), "name": t.name, "kinds": t.kinds, "cases": len(specs),
                     "specs": specs, "may_abort": False})
    return pool.run(jobs, Report(None))


def systematic_targets(targets: list[Target], may_abort: set[str] = MAY_ABORT) -> list[Target]:
    """The targets of the systematic pass: each export once by name and signature (a recipe
    folder's library and the recipe library compile the same source; the first library
    listed is called: the recipe library, or in the sanitizer run a folder's), none allowed
    to abort."""
    seen, chosen = set(), []
    for t in targets:
        if t.name not in may_abort and (t.name, t.kinds) not in seen:
            seen.add((t.name, t.kinds))
            chosen.append(t)
    return chosen


def fuzz(targets: list[Target], pool: Pool, cases: int, run_seed: int,
         may_abort: set[str] = MAY_ABORT) -> Report:
    """At least ``cases`` cases spread evenly over the targets (5 for one allowed to abort)."""
    checked = [t for t in targets if t.name not in may_abort]
    per_target = max(1, -(-cases // max(1, len(checked))))
    jobs = [{"library": str(t.library), "name": t.name, "kinds": t.kinds,
             "cases": min(per_target, 5) if t.name in may_abort else per_target,
             "seed": zlib.crc32(f"{run_seed}:{t.library.name}:{t.name}".encode()),
             "may_abort": t.name in may_abort} for t in targets]
    return pool.run(jobs, Report(run_seed))


def describe(failure) -> str:
    """One failure: the export, what happened, the arguments and a command that replays them."""
    job, specs, outcome = failure
    detail = outcome[1] if outcome[0] == "wrong" else f"{outcome[1]}\n{outcome[2][-1500:]}"
    replay = (f"python -m tests.fuzz --replay {job['library']} {job['name']} {repr(repr(specs))}"
              if specs is not None else "")
    seed = f" (job seed {job['seed']})" if "seed" in job else ""
    return (f"{job['name']} in {Path(job['library']).name}{seed}: {outcome[0]}: {detail}\n"
            f"  arguments: {specs!r}\n  reproduce: {replay}")
