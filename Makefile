# The TVM FFI Kernel Cookbook: `make docs` and `make test` set everything up.
#
# Variables you may override:
#   PYTHON      interpreter used to create the virtual environment (python3)
#   VENV_FLAGS  extra `python -m venv` flags; on a GPU box use
#               VENV_FLAGS=--system-site-packages to reuse your CUDA torch
#   TORCH_SPEC  torch installed when the venv has none (torch==2.13.0, a CPU wheel)
#   PYTEST_WORKERS  processes for the tests that time nothing (2; 0 runs them in one)
#   CCACHE      the compiler cache every CMake build goes through (the venv's ccache;
#               CCACHE= builds without it)
#   COMPILER_CACHE  where its objects are kept, outside the checkout so that every clone
#               and every run reuses them (~/.cache/ffi-cookbook/ccache)
# Plain `make` builds the site (some rules for files come before `all`).
.DEFAULT_GOAL := all
PYTHON ?= python3
VENV ?= .venv
VENV_FLAGS ?=
TORCH_SPEC ?= torch==2.13.0
# The NVSHMEM wheel installed where nvcc is found, as pinned on a comment line of a recipe's
# requirements.txt (tools/takeaway_venv.py installs every such NVIDIA wheel in the take-away venv):
# the runtime library builds recipe 07's NVSHMEM source with its CUDA variant, and the tests
# compile the NVSHMEM helper header. Recipe 28's cuBLAS part is not in it.
RECIPE_REQUIREMENTS := $(wildcard cookbook/*/requirements.txt)
NVSHMEM_SPEC = $(filter nvidia-nvshmem-%,$(shell $(OUT_OF_TREE) $(PYTHON) -c 'from tools.takeaway_venv import nvidia_extras; print(*nvidia_extras())'))
BUILD ?= _build
PORT ?= 8000
PYTEST_WORKERS ?= 2

PY := $(abspath $(VENV))/bin/python
STAMP := $(VENV)/.installed
SPHINX_FLAGS := -W --keep-going -n -q
HEADERS := $(wildcard include/ffi_cookbook/*.h)
DOXYGEN_XML := $(BUILD)/doxygen/xml/index.xml

# Every CMake build below compiles through ccache (pinned in pyproject.toml),
# temporary ones included (recipe copies, wheels, sanitizer builds): CMake takes
# its compiler launcher from these variables when it configures a new folder.
# The cache is COMPILER_CACHE, outside the checkout: `make clean`, a fresh clone and the
# next CI run start from the objects of the last build (ccache checks the compiler, its
# arguments and every header, so a reused object is the one a compile would make). The
# launcher carries the settings, so a later rebuild from a plain shell uses it too. Paths
# in the checkout are hashed relative to the build folder, so the zip test's build of a
# recipe (in $(BUILD)/zip-tests/<recipe>) reuses the objects of make test's run of the same
# zip (in $(BUILD)/recipe-runs/<recipe>), and so does a clone in another folder. Each compile's result (hit or miss) is logged to
# $(BUILD)/timing/ccache-stats.log, which `tools/bench_loop.py report` counts.
CCACHE ?= $(abspath $(VENV))/bin/ccache
COMPILER_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ffi-cookbook/ccache
ifneq ($(CCACHE),)
export CCACHE_DIR := $(abspath $(COMPILER_CACHE))
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
export CCACHE_STATSLOG := $(abspath $(BUILD))/timing/ccache-stats.log
CCACHE_LAUNCHER := env;CCACHE_DIR=$(CCACHE_DIR);CCACHE_BASEDIR=$(CCACHE_BASEDIR);CCACHE_NOHASHDIR=1;$(CCACHE)
export CMAKE_C_COMPILER_LAUNCHER := $(CCACHE_LAUNCHER)
export CMAKE_CXX_COMPILER_LAUNCHER := $(CCACHE_LAUNCHER)
export CMAKE_CUDA_COMPILER_LAUNCHER := $(CCACHE_LAUNCHER)
endif
# A new build folder (a recipe's build/, configured by its notebook or README with a plain
# `cmake -S . -B build`) uses Ninja where it is on PATH: its build.ninja and `ninja -t deps` are
# what the snippet checker reads to link a shown file to the build that compiled it.
ifneq ($(shell command -v ninja),)
export CMAKE_GENERATOR := Ninja
endif
# Ninja names a folder's sources ../x.cc from its build/; CXXFLAGS and CUDAFLAGS (read when CMake
# configures a new folder) map "../" away, so a traceback names x.cc, as a reader's own build
# does (tvm_ffi_configure_target maps the folder's absolute path). Not in any CMakeLists.txt.
export CXXFLAGS += -ffile-prefix-map=../=
export CUDAFLAGS += -Xcompiler=-ffile-prefix-map=../=
# Each configure of a new folder by `make` is told what CMake would find out by compiling
# test programs (conf/known-compilers.cmake, not part of any recipe's CMakeLists.txt): where
# nvcc is, and what CMake learnt about each compiler when it configured conf/compiler-facts
# once into $(COMPILER_FACTS) (made again when a compiler or those files change).
NVCC := $(shell command -v nvcc)
ifneq ($(NVCC),)
export FFI_COOKBOOK_NVCC := $(NVCC)
endif
COMPILER_FACTS := $(abspath $(BUILD))/compiler-facts
export FFI_COOKBOOK_COMPILER_FACTS := $(COMPILER_FACTS)
export CMAKE_TOOLCHAIN_FILE := $(abspath conf/known-compilers.cmake)
COMPILERS := $(realpath $(shell command -v cc c++) $(NVCC))
$(COMPILER_FACTS)/CMakeCache.txt: conf/compiler-facts/CMakeLists.txt conf/known-compilers.cmake $(COMPILERS)
	@rm -rf $(COMPILER_FACTS)
	@cmake -S conf/compiler-facts -B $(COMPILER_FACTS) > /dev/null

# When each step starts and ends: `tools/bench_loop.py report` turns this log,
# pytest's junit files and the notebook timings into the breakdown table.
TIMING := $(abspath $(BUILD))/timing
phase = @mkdir -p $(TIMING) && echo "$(1) $(2) $$(date +%s.%N)" >> $(TIMING)/phases.log

.PHONY: all help docs html snippets recipe-zips test recipe serve clean distclean venv runtime doxygen-tool chromium-tool bench-loop fuzz test-sanitize

all: docs ## the site (same as make docs)

# `make help`: every target with the line after its `##`.
help: ## list the targets
	@grep -hE '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /\1\t/' | \
	  awk -F'\t' '{ printf "  make %-15s %s\n", $$1, $$2 }'

venv: $(STAMP) ## the project venv (.venv), installed again when pyproject.toml changes

# The venv is (re)installed only when pyproject.toml changes. --no-compile: pip would compile every
# module it installs into the venv's __pycache__, which make's processes never read
# (PYTHONPYCACHEPREFIX, below): they compile the modules they import into $(BUILD)/pycache.
PIP_INSTALL = $(PY) -m pip install -q --no-compile
$(STAMP): pyproject.toml tools/requirements.py $(RECIPE_REQUIREMENTS)
	$(call phase,venv,begin)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "error: $(PYTHON) is older than 3.11; the pinned numpy and JAX need 3.11+ (make PYTHON=python3.11 ...)" >&2; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV_FLAGS) $(VENV)
	@$(PY) -c "import torch" 2>/dev/null || { echo "installing $(TORCH_SPEC)"; $(PIP_INSTALL) "$(TORCH_SPEC)"; }
	$(PIP_INSTALL) $$($(PY) tools/requirements.py docs test)
	@if command -v nvcc >/dev/null && [ -n "$(NVSHMEM_SPEC)" ]; then $(PIP_INSTALL) $(NVSHMEM_SPEC); fi
	@# The ffi_cookbook package is used from the checkout (python/), not copied.
	@echo "$(CURDIR)/python" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ffi_cookbook_checkout.pth"
	@touch $@
	$(call phase,venv,end)

doxygen-tool: ## install doxygen when it is missing (as root, with apt-get)
	@command -v doxygen >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && apt-get install -y -q doxygen; \
	  else echo "error: doxygen is missing; install it (e.g. sudo apt-get install doxygen) and re-run" >&2; exit 1; fi; }

# gdb for recipe 19's backtrace cell and test, which say they were skipped without it.
.PHONY: gdb-tool
gdb-tool: ## install gdb when it is missing (recipe 19's backtrace cell and test)
	@command -v gdb >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && apt-get install -y -q gdb; \
	  else echo "note: gdb is missing (e.g. sudo apt-get install gdb): recipe 19's gdb cell and test skip" >&2; fi; }

html: | gdb-tool
recipe: | gdb-tool

# The browser tests (tests/site/test_browser.py) drive Debian's Chromium through Playwright's Python
# API; Playwright's own browser downloads are never used.
chromium-tool: ## install Chromium when it is missing (the browser tests)
	@test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && apt-get install -y -q chromium; \
	  else echo "error: chromium is missing; install it (e.g. sudo apt-get install chromium) and re-run" >&2; exit 1; fi; }


# The recipe library's CUDA variant is built where a GPU can run it (nvidia-smi lists one; gpu-check
# builds it so too). Elsewhere it is CPU-only: each recipe's own build (recipe-zips) compiles every
# CUDA source with nvcc already, and compiling them all again here, for two architectures, was
# two thirds of this build. RUNTIME_CUDA=AUTO (at the first configure) builds them where nvcc is.
RUNTIME_CUDA ?= $(if $(shell nvidia-smi -L 2>/dev/null | grep '^GPU'),AUTO,OFF)

# Reconfigure when the venv changes: the toolchains found (CUDA, NVSHMEM) may differ.
build/runtime/CMakeCache.txt: $(STAMP) | $(COMPILER_FACTS)/CMakeCache.txt
	$(call phase,runtime,begin)
	cmake -S runtime -B build/runtime -G Ninja -DPython_EXECUTABLE=$(PY) -DFFI_COOKBOOK_CUDA=$(RUNTIME_CUDA)
	@touch $@
	$(call phase,runtime,end)

runtime: build/runtime/CMakeCache.txt ## the recipe library (build/runtime)
	$(call phase,runtime,begin)
	cmake --build build/runtime
	$(call phase,runtime,end)

$(DOXYGEN_XML): conf/Doxyfile $(HEADERS) | doxygen-tool
	$(call phase,doxygen,begin)
	@mkdir -p $(BUILD)/doxygen
	( cat conf/Doxyfile; echo "OUTPUT_DIRECTORY = $(BUILD)/doxygen" ) | doxygen -
	$(call phase,doxygen,end)

# Generated files go under $(BUILD), never beside the sources (a folder's CMake build goes into
# its own build/, which git ignores: build_dir_for in tools/cmake_build.py); Python's bytecode
# caches too. With PYTHONPYCACHEPREFIX set, Python reads bytecode only from
# there (not from the venv's __pycache__), so a PYTHONDONTWRITEBYTECODE from the environment
# would make every process compile every module it imports again (torch: 3.8 s instead of 2.0).
unexport PYTHONDONTWRITEBYTECODE
OUT_OF_TREE := FFI_COOKBOOK_BUILD_DIR=$(abspath $(BUILD)) PYTHONPYCACHEPREFIX=$(abspath $(BUILD))/pycache
SPHINX = $(OUT_OF_TREE) $(PY) -m sphinx -b html -c conf docs $(BUILD)/html \
	  $(SPHINX_FLAGS) -d $(BUILD)/doctrees -w $(BUILD)/warnings.log

# The take-away venv the recipes' zips run in (tools/takeaway_venv.py) is made in the background,
# when it is missing or out of date, from the first moment: pip leaves a core idle while it
# makes the project venv, and the runtime build needs both. It needs only $(PYTHON)'s standard
# library. The zip runs wait for it (a lock), and make it themselves if this failed (its log:
# $(BUILD)/takeaway-venv.log). It runs in a process group of its own and leaves its id in
# $(BUILD)/takeaway-venv.pid while it runs: `make clean` stops it.
.PHONY: takeaway-venv
takeaway-venv: ## start making the take-away venv (make test does), in the background
	@mkdir -p $(BUILD)
	@$(OUT_OF_TREE) $(PYTHON) -m tools.takeaway_venv --background $(abspath $(BUILD))/takeaway-venv > $(BUILD)/takeaway-venv.log 2>&1 &

# The site, every notebook executed by docs/_ext/parallel_notebooks.py (myst-nb keeps them in its
# cache, $(BUILD)/.jupyter_cache, and only renders them): a recipe's in the folder where its zip ran
# (recipe-zips), with the take-away venv, so that its build there is the one the page shows.
html: runtime $(DOXYGEN_XML) recipe-zips ## the site alone, every notebook executed (incremental)
	$(call phase,site,begin)
	$(SPHINX)
	$(call phase,site,end)

# Every recipe's zip as a reader runs it (tools/recipe_runs.py): unzipped into an empty folder under
# $(BUILD)/recipe-runs, its README's commands (cmake, pytest) run there in the take-away venv. A
# recipe whose zip ran already (a record of today's zip and venv) is not run again.
recipe-zips: venv takeaway-venv ## every recipe's zip, its README's commands run in a fresh venv
	$(call phase,recipe-zips,begin)
	$(OUT_OF_TREE) $(PY) -m tools.recipe_runs --all --workers $(PYTEST_WORKERS)
	$(call phase,recipe-zips,end)

# Verify every code block of the built site; fails on anything unverified. A README's ```bash
# block counts as run when its recipe's zip ran (recipe-zips: make test's, when it ran first).
snippets: html recipe-zips ## the site, then verify every code block on it
	$(call phase,snippets,begin)
	$(OUT_OF_TREE) $(PY) -m tools.snippets --doctrees $(BUILD)/doctrees --out $(BUILD)/snippets
	$(call phase,snippets,end)

# A second, incremental Sphinx pass puts the fresh snippet report on its page; then the checks of
# the built site (tests/site: pages, links, claims, GPU runs, the browser).
docs: snippets | chromium-tool ## the site with its snippet report, then the checks of the built site
	$(call phase,site-report,begin)
	$(SPHINX)
	$(call phase,site-report,end)
	@echo "Site built: open $(abspath $(BUILD))/html/index.html (or run: make serve)"
	$(call phase,site-tests,begin)
	$(OUT_OF_TREE) $(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup \
	  --junitxml=$(TIMING)/pytest-site.xml tests/site
	$(call phase,site-tests,end)

# make test: the recipes, then every test but the site's; it never builds the site. First each
# recipe's zip in the take-away venv (recipe-zips; tests/product/test_recipe_zips.py asserts on
# their records), then the tests that time nothing in parallel (-n; one file per worker), then the
# recipes' tests marked `timing`, one recipe at a time with nothing else running, each in its zip's
# folder, where it is built already (tools/recipe_runs.py --timing).
test: takeaway-venv venv runtime recipe-zips ## every recipe's zip, then every test but the site's (those run in make docs)
	$(call phase,tests,begin)
	$(OUT_OF_TREE) $(PY) -m pytest -m "not timing" -n $(PYTEST_WORKERS) --dist loadgroup \
	  --junitxml=$(TIMING)/pytest-parallel.xml tests --ignore=tests/site
	$(call phase,tests,end)
	$(call phase,timing-tests,begin)
	$(OUT_OF_TREE) $(PY) -m tools.recipe_runs --timing --junit-dir $(TIMING)
	$(call phase,timing-tests,end)

# The fuzz of every export (tests/product/test_fuzz.py runs 10,000 cases; this, ten times
# as many). FUZZ_SEED picks another seed; a failure prints its replay command.
FUZZ_SEED ?= 0
fuzz: runtime ## the fuzz of every export, 100,000 cases (FUZZ_SEED=0)
	$(OUT_OF_TREE) $(PY) -m tests.fuzz --cases 100000 --seed $(FUZZ_SEED)

# The recipe tests, the helper tests and the fuzz against the recipe folders and the
# probe built with -fsanitize=address,undefined (under $(BUILD)/sanitize), with
# AddressSanitizer, UBSan and LeakSanitizer in every Python process; any report fails.
test-sanitize: venv $(COMPILER_FACTS)/CMakeCache.txt ## recipe tests and fuzz against ASan/UBSan/LSan builds
	$(call phase,sanitize,begin)
	$(OUT_OF_TREE) $(PY) -m tests.sanitize --build $(abspath $(BUILD))/sanitize --workers $(PYTEST_WORKERS) \
	  --junit $(TIMING)/sanitize-junit.xml
	$(call phase,sanitize,end)

# One recipe's part of `make test` (R: its number or name, `make recipe R=10`). First it says what
# it will build and roughly how long (after `make clean`: the runtime and the whole site), then:
# its zip's README through the recipe pipeline (recipe-zips: tools/recipe_runs.py --all, which
# runs every zip that changed or whose README failed, and fails when one fails); the site again
# (incremental), which executes the recipe's notebook when a file of its folder changed; the
# snippets of the whole site, and
# the site once more to label each block with how it was verified (as `make docs` does); the
# tests of tests/site and tests/product that concern it (its zip, CMake, prose, claims, GPU
# claims... and the checks of every built page: tests/one_recipe.py); the fuzz of the libraries
# its run built (RECIPE_FUZZ_CASES drawn cases on its exports alone, more per export than the
# 10,000 that `make test` spreads over every export). A green `make recipe` is its part of
# `make test` green.
R ?=
RECIPE_FUZZ_CASES ?= 2000
.PHONY: recipe-plan
recipe-plan:
	@test -n "$(R)" || { echo "usage: make recipe R=10 (a recipe's number or name)" >&2; exit 2; }
	@$(OUT_OF_TREE) $(PYTHON) -m tools.recipe_runs --plan $(R) --build $(abspath $(BUILD)) --stamp $(STAMP)

recipe: recipe-plan takeaway-venv runtime $(DOXYGEN_XML) recipe-zips ## one recipe's part of make test (zip, notebook, tests, page): make recipe R=10
	$(call phase,recipe,begin)
	$(SPHINX)
	$(OUT_OF_TREE) $(PY) -m tools.snippets --doctrees $(BUILD)/doctrees --out $(BUILD)/snippets
	$(SPHINX)
	$(OUT_OF_TREE) $(PY) -m pytest -q -p no:cacheprovider -p tests.one_recipe tests/site tests/product \
	  --recipe "$$($(OUT_OF_TREE) $(PY) -m tools.recipe_runs --name $(R))"
	@libs="$$($(OUT_OF_TREE) $(PY) -m tools.recipe_runs --libraries $(R))"; \
	  if [ -n "$$libs" ]; then $(OUT_OF_TREE) $(PY) -m tests.fuzz --cases $(RECIPE_FUZZ_CASES) $$libs; \
	  else echo "fuzz: the recipe's run built no library"; fi
	$(call phase,recipe,end)

# Every check that needs a GPU (tools/gpu_check.py): on a machine with a CUDA GPU it runs
# the tests that skip without one, every notebook and the GPU benchmarks, and writes the
# stamped results into docs/gpu-runs/data/; elsewhere it prints that plan. Runs with the
# venv's Python, or the machine's python3 where there is no venv (a GPU box without network:
# carry $(BUILD)/gpu-wheels, the wheels it lacks, which `$(PY) tools/gpu_check.py --wheels` downloads).
.PHONY: gpu-check
GPU_CHECK_FLAGS ?=
gpu-check: ## the GPU checks (tests, notebooks, benchmarks) or, without a GPU, their plan
	$(OUT_OF_TREE) $(if $(wildcard $(PY)),$(PY),python3) tools/gpu_check.py $(GPU_CHECK_FLAGS)

# A cold run (a fresh clone of HEAD: venv, site and tests from nothing) and a
# warm one (one recipe source touched), timed step by step; prints the tables.
bench-loop: ## time a cold and a warm make test in a fresh clone
	$(PYTHON) tools/bench_loop.py loop --out $(BUILD)/bench

serve: ## serve the built site on 127.0.0.1 (PORT=8000)
	@test -f $(BUILD)/html/index.html || { echo "run 'make docs' first" >&2; exit 1; }
	$(PY) -m http.server --bind 127.0.0.1 --directory $(BUILD)/html $(PORT)

# The take-away venv that `make` may still be making in the background is stopped first
# (its process group; tools/takeaway_venv.py --stop), so that nothing writes into $(BUILD)
# while it goes.
clean: ## remove _build/ and build/ (stopping the take-away venv being made in the background)
	@PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m tools.takeaway_venv --stop $(abspath $(BUILD))/takeaway-venv
	rm -rf $(BUILD) build

distclean: clean ## clean, and remove the venv too
	rm -rf $(VENV)
