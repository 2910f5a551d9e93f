# The TVM FFI Kernel Cookbook: `make docs` and `make test` set everything up.
#
# Variables you may override:
#   PYTHON      interpreter used to create the virtual environment (python3)
#   VENV_FLAGS  extra `python -m venv` flags; on a GPU box use
#               VENV_FLAGS=--system-site-packages to reuse your CUDA torch
#   TORCH_SPEC  torch installed when the venv has none (torch==2.13.0, a CPU wheel)
PYTHON ?= python3
VENV ?= .venv
VENV_FLAGS ?=
TORCH_SPEC ?= torch==2.13.0
NVSHMEM_SPEC ?= nvidia-nvshmem-cu13==3.8.0
BUILD ?= _build
PORT ?= 8000

PY := $(abspath $(VENV))/bin/python
STAMP := $(VENV)/.installed
SPHINX_FLAGS := -W --keep-going -n -q
HEADERS := $(wildcard include/ffi_cookbook/*.h)
DOXYGEN_XML := $(BUILD)/doxygen/xml/index.xml

.PHONY: all docs html snippets test serve clean distclean venv runtime doxygen-tool

all: docs

venv: $(STAMP)

# The venv is (re)installed only when pyproject.toml changes.
$(STAMP): pyproject.toml tools/requirements.py
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "error: $(PYTHON) is older than 3.11; the pinned numpy and JAX need 3.11+ (make PYTHON=python3.11 ...)" >&2; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV_FLAGS) $(VENV)
	@$(PY) -c "import torch" 2>/dev/null || { echo "installing $(TORCH_SPEC)"; $(PY) -m pip install -q "$(TORCH_SPEC)"; }
	$(PY) -m pip install -q $$($(PY) tools/requirements.py docs test)
	@if command -v nvcc >/dev/null; then $(PY) -m pip install -q "$(NVSHMEM_SPEC)"; fi
	@# The ffi_cookbook package is used from the checkout (python/), not copied.
	@echo "$(CURDIR)/python" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ffi_cookbook_checkout.pth"
	@touch $@

doxygen-tool:
	@command -v doxygen >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -q && apt-get install -y -q doxygen; \
	  else echo "error: doxygen is missing; install it (e.g. sudo apt-get install doxygen) and re-run" >&2; exit 1; fi; }

# Reconfigure when the venv changes: the toolchains found (CUDA, NVSHMEM) may differ.
build/runtime/CMakeCache.txt: $(STAMP)
	cmake -S runtime -B build/runtime -G Ninja -DPython_EXECUTABLE=$(PY)
	@touch $@

runtime: build/runtime/CMakeCache.txt
	cmake --build build/runtime

$(DOXYGEN_XML): conf/Doxyfile $(HEADERS) | doxygen-tool
	@mkdir -p $(BUILD)/doxygen
	( cat conf/Doxyfile; echo "OUTPUT_DIRECTORY = $(BUILD)/doxygen" ) | doxygen -

SPHINX = FFI_COOKBOOK_BUILD_DIR=$(abspath $(BUILD)) $(PY) -m sphinx -b html -c conf docs $(BUILD)/html \
	  $(SPHINX_FLAGS) -d $(BUILD)/doctrees -w $(BUILD)/warnings.log

# The site, notebooks executed (myst-nb caches them in $(BUILD)/.jupyter_cache).
html: runtime $(DOXYGEN_XML)
	$(SPHINX)

# Verify every code block of the built site; fails on anything unverified.
snippets: html
	$(PY) -m tools.snippets --out $(BUILD)/snippets

# A second, incremental Sphinx pass puts the fresh snippet report on its page.
docs: snippets
	$(SPHINX)
	@echo "Site built: open $(abspath $(BUILD))/html/index.html (or run: make serve)"

test: docs
	$(PY) -m pytest

serve:
	@test -f $(BUILD)/html/index.html || { echo "run 'make docs' first" >&2; exit 1; }
	$(PY) -m http.server --bind 127.0.0.1 --directory $(BUILD)/html $(PORT)

clean:
	rm -rf $(BUILD) build cookbook/*/build tests/*/build

distclean: clean
	rm -rf $(VENV)
