# iokernels: the two commands of the README are `make demo` and `make test`.
BUILD ?= build
VENV ?= .venv
NP ?= 4
MPIRUN = scripts/mpiexec.sh

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

$(VENV)/.installed: requirements.txt | deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -r requirements.txt
	touch $@

# The main job, small: BTIO on NP ranks of this machine, written, read back
# and verified, with the ceiling beside it.
demo: build
	@mkdir -p results/demo
	$(MPIRUN) -n $(NP) $(BUILD)/iokernels btio --grid 64,64,64 --dumps 5 --dir results/demo --overwrite \
	  --verify --ceiling --json results/demo/btio.jsonl
	@echo "JSON record appended to results/demo/btio.jsonl"

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
