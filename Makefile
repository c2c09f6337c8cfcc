# iokernels: the two commands of the README are `make demo` and `make test`.
BUILD ?= build
VENV ?= .venv

.PHONY: all deps build venv demo test bench format clean

all: build

deps:
	@scripts/install-deps.sh

# The venv comes first: CMake finds ADIOS2 in it (the adios2 wheel).
build: deps venv
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > $(BUILD).cmake.log 2>&1 \
	  || { cat $(BUILD).cmake.log; exit 1; }
	@cmake --build $(BUILD)

venv: $(VENV)/.installed

# The campaign package (python/) is installed editable: iokernels-campaign.
$(VENV)/.installed: requirements.txt python/pyproject.toml | deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -r requirements.txt
	$(VENV)/bin/pip install -q -e python
	touch $@

# The main job, small: the default campaign (every kernel on every backend
# built, 1 and 4 ranks, written then read back and verified, the ceiling
# beside each write) into results/; ends with the report's path and a table.
demo: build venv
	$(VENV)/bin/iokernels-campaign run campaigns/default.toml --db results/iokernels.sqlite \
	  --out results/default

test: build venv
	@# re-configure so that ctest finds the venv's pytest
	@cmake -S . -B $(BUILD) > /dev/null
	cd $(BUILD) && ctest --output-on-failure

bench: build
	bench/btio

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(BUILD).cmake.log
