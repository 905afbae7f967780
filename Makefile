# One entry point for every job. `make demo` and `make test` set up everything
# they need on a fresh machine (virtualenv, Python deps, release build).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check

.PHONY: demo test lint bench install dev rust-test py-test clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# Build the release extension exactly as a user would (`pip install .`), with the
# test and lint tools of pyproject.toml's optional dependencies: the one list of
# them. pip always rebuilds a local project (so this builds once per call) and
# skips dependencies that are already installed.
install: $(PY)
	$(PIP) install --quiet ".[test,lint]"

# Editable install for development (rebuilds the extension in place). maturin
# itself comes from pyproject.toml's build-system table, the extras as above.
dev: $(PY)
	$(PY) -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")' > $(VENV)/build-requirements.txt
	$(PIP) install --quiet -r $(VENV)/build-requirements.txt
	$(VENV)/bin/maturin develop --release --extras test,lint

# The main job on bundled data (scripts/demo.sh: a tracker issue becomes a case
# with leads and a report, against the tests' throwaway MariaDB, which it
# starts and stops), then the router batch of samples/bug-20.
demo: install
	PYTHON=$(PY) scripts/demo.sh

rust-test:
	cargo test --lib --quiet

# The integration tests need a MariaDB: scripts/with_test_services.sh installs
# it (apt) if missing, starts a throwaway server loaded with the fixture world
# DB for the command it wraps, and llama-cpp-python's LLM server (built from
# source once per machine, scripts/llm_test_server.sh), and stops them
# afterwards, however that ends.
py-test: install
	PYTHON=$(PY) scripts/with_test_services.sh $(PY) -m pytest tests

test: rust-test py-test

lint: install
	$(VENV)/bin/ruff check python tests benches scripts
	$(VENV)/bin/ruff format --check python tests benches scripts
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest viano_bug_analysis._native
	cargo fmt --check
	PYO3_PYTHON=$(abspath $(PY)) cargo clippy --all-targets --features python --quiet -- -D warnings

# Benchmarks are not part of `make test`. They need ripgrep as a baseline.
bench: install
	mkdir -p .benchmarks
	@command -v rg >/dev/null || { echo "installing ripgrep (baseline for the search benchmark)"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq ripgrep; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq ripgrep; fi; }
	PYTHON=$(PY) scripts/with_test_services.sh $(PY) -m pytest benches -o python_files="bench_*.py" --benchmark-only --benchmark-group-by=group \
	  --benchmark-columns=min,median,mean,stddev,rounds \
	  --benchmark-json=.benchmarks/latest.json $(BENCH_ARGS)
	$(PY) scripts/bench_report.py .benchmarks/latest.json docs/benchmarks.md

clean:
	rm -rf $(VENV) target dist .pytest_cache .hypothesis .benchmarks
