# SPDX-License-Identifier: BSD-3-Clause
# iokernels: the two commands of the README are `make demo` and `make test`.
BUILD ?= build
VENV ?= .venv
SAN_BUILD ?= build-sanitize
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
# what `make test` gives each fuzz target (long runs: make fuzz FUZZ_SECONDS=600)
TEST_FUZZ_SECONDS ?= 10

# Under the sanitizers: leaks checked (the MPI and I/O libraries' own
# suppressed by name), UBSan stops at its first report.
# keep_modules: OpenMPI's unloaded plugins stay mapped so that their leaks
# can be named (tests/sanitize/keep_modules.c).
# use_tls=0: LeakSanitizer's tracer (GCC 12) now and then dies scanning a
# thread's dynamic TLS ("Tracer caught signal 11" at a small address in
# ScanRangeForPointers; 2 of 90 two-rank HDF5 read-backs here): a
# fault of the tool, not a leak. Thread-local storage then is not a root; our
# code keeps no heap pointer in it, and the MPI and I/O libraries' objects
# that only TLS reaches are suppressed by library name (lsan.supp).
# IOK_TEST_DEFAULT_PML=1: this subset runs on OpenMPI's default PML (UCX),
# the other test runs on ob1 for a faster start (tests/mpi_startup.py).
SAN_ENV = IOK_TEST_DEFAULT_PML=1 ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitize/lsan.supp:print_suppressions=0:use_tls=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LD_PRELOAD=$(CURDIR)/$(SAN_BUILD)/tests/libiok_keep_modules.so
# The end-to-end tests run under the sanitizers: every parser's bad inputs,
# corrupted and truncated files, and a write + read-back per kernel.
SAN_E2E = bad or corrupted or truncated or tiny or g_from_map_file or decomposition_containers \
	or converter_reproduces or random_ordering or installed_kernel_runs or empty_subfile

# The MPICH pass (make test-mpich): the suite built against Debian's MPICH
# (mpicc.mpich, HDF5 through HDF5_ROOT at its MPICH build, ADIOS2 built with
# mpicc.mpich into MPICH_VENV), run under hydra (mpiexec.mpich).
MPICH_BUILD ?= build-mpich
MPICH_VENV ?= .venv-mpich
MPICH_HDF5 ?= /usr/lib/$(shell gcc -print-multiarch 2>/dev/null)/hdf5/mpich
# Its end-to-end subset: the MPICH tests, hints, faults, modules, adios2,
# the release pieces, and each kernel's write + verify + read at 4 ranks
# on mpiio, hdf5 and adios2 (null: test_hints), the replay kernel's small file
# and a BTIO round trip through it. Left out: a full disk under
# HDF5 at 4 ranks, whose H5Fclose hangs with MPICH's ROMIO after the failed
# write (one rank in MPI_File_close, the others in the metadata cache's
# MPI_File_set_view): to fix in the failure path, not here.
E2E = tests/e2e
MPICH_E2E = $(E2E)/test_mpich.py $(E2E)/test_hints.py $(E2E)/test_faults.py \
	$(E2E)/test_modules.py $(E2E)/test_adios2.py $(E2E)/test_build.py \
	"$(E2E)/test_install.py::test_installed_kernel_runs_outside_the_source_tree" \
	"$(E2E)/test_btio.py::test_write_then_read_verifies[m1-mpi-indep-4]" \
	"$(E2E)/test_btio.py::test_write_then_read_verifies[hdf5-coll-4]" \
	"$(E2E)/test_btio.py::test_write_then_read_verifies[adios2-bp5-4]" \
	"$(E2E)/test_amrex.py::test_write_then_read_verifies[4-hdf5---collective]" \
	"$(E2E)/test_amrex.py::test_write_then_read_verifies[4-mpiio---independent]" \
	"$(E2E)/test_ncbench.py::test_write_read_verify[hdf5-4-coll-chunked]" \
	"$(E2E)/test_ncbench.py::test_other_backends[mpiio]" \
	"$(E2E)/test_chombo.py::test_write_then_read_verifies[4-hdf5-collective]" \
	"$(E2E)/test_e3sm_gen.py::test_generated_write_then_verify[G-hdf5]" \
	"$(E2E)/test_e3sm_gen.py::test_generated_write_then_verify[F-mpiio]" \
	"$(E2E)/test_e3sm_gen.py::test_generated_write_then_verify[G-adios2]" \
	"$(E2E)/test_replay.py::test_small_on_every_backend[mpiio]" \
	"$(E2E)/test_replay.py::test_small_on_every_backend[hdf5]" \
	"$(E2E)/test_replay.py::test_btio_round_trip[1]" \
	"$(E2E)/test_replay.py::test_a_failing_call_ends_the_replay[put]"
MPICH_E2E_SKIP = not (test_full_disk_is_an_error and hdf5-4)
# Debian has no MPICH build of PnetCDF or NetCDF: declared, so their tests
# are counted skips in that pass (tests/declared.py), not failures
MPICH_MISSING ?= pnetcdf,netcdf4

# The Spack package's test (tests/spack) needs a Spack: IOK_SPACK_ROOT or
# spack on PATH. Without one, make test declares it missing (a counted,
# named skip in the summary, tests/declared.py), as MPICH_MISSING does.
SPACK_FOUND := $(or $(IOK_SPACK_ROOT),$(shell command -v spack 2>/dev/null))
comma := ,
TEST_MISSING := $(strip $(IOK_ALLOW_MISSING)$(if $(SPACK_FOUND),,$(if $(IOK_ALLOW_MISSING),$(comma))spack))

# make check: the fast tier for a change (under 5 minutes on 2 cores):
# the unit tests, the lints, and a write + verify per kernel and backend
# family at 4 ranks. make test remains the whole.
CHECK_E2E = "$(E2E)/test_btio.py::test_write_then_read_verifies[m1-mpi-indep-4]" \
	"$(E2E)/test_btio.py::test_write_then_read_verifies[pnetcdf-varn-4]" \
	"$(E2E)/test_btio.py::test_write_then_read_verifies[hdf5-coll-4]" \
	"$(E2E)/test_btio.py::test_write_then_read_verifies[netcdf4-coll-4]" \
	"$(E2E)/test_btio.py::test_write_then_read_verifies[adios2-bp5-4]" \
	"$(E2E)/test_amrex.py::test_write_then_read_verifies[4-mpiio---independent]" \
	"$(E2E)/test_ncbench.py::test_other_backends[mpiio]" \
	"$(E2E)/test_chombo.py::test_write_then_read_verifies[4-hdf5-collective]" \
	"$(E2E)/test_e3sm_gen.py::test_generated_write_then_verify[G-hdf5]" \
	"$(E2E)/test_replay.py::test_small_on_every_backend[mpiio]" \
	"$(E2E)/test_write_faults.py::test_a_failed_write_names_the_system_error" \
	"$(E2E)/test_faults.py"

.PHONY: all deps build venv docs screenshots demo check test test-sanitize test-mpich fuzz bench format clean

all: build

deps:
	@scripts/install-deps.sh

# The venv comes first: CMake finds ADIOS2 in it (built with MPI by
# scripts/install-adios2.sh).
build: deps venv
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > $(BUILD).cmake.log 2>&1 \
	  || { cat $(BUILD).cmake.log; exit 1; }
	@cat $(BUILD)/backends.txt
	@cmake --build $(BUILD)

venv: $(VENV)/.installed

# The campaign package (python/) is installed editable: iokernels-campaign.
# ADIOS2 is built from source with MPI (not in requirements.txt: PyPI's
# binary wheel is serial).
$(VENV)/.installed: requirements.txt requirements-docs.txt constraints.txt python/pyproject.toml \
		scripts/install-adios2.sh | deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -c constraints.txt -r requirements.txt -r requirements-docs.txt
	scripts/install-adios2.sh $(VENV)
	$(VENV)/bin/pip install -q -e python
	touch $@

# The main job, small: the default campaign (every kernel on every backend
# built, 1 and 4 ranks, written then read back and verified, the ceiling
# beside each write) into results/; ends with the report's path and a table.
demo: build venv
	$(VENV)/bin/iokernels-campaign run campaigns/default.toml --db results/iokernels.sqlite \
	  --out results/default

check: build venv
	@cmake -S . -B $(BUILD) > /dev/null
	cd $(BUILD) && ctest -j2 -L "unit|lint" --output-on-failure
	$(VENV)/bin/pytest -q -p no:cacheprovider $(CHECK_E2E)

# Everything: the ordinary build's tests, then the MPICH pass, then the
# sanitizers' run, then each fuzz target for TEST_FUZZ_SECONDS.
test: build venv
	@# re-configure so that ctest finds the venv's pytest
	@cmake -S . -B $(BUILD) > /dev/null
	@# ctest hides a passing test's output: each pytest run's counts and
	@# declared skips (tests/declared.py) are printed after it, pass or fail
	@rm -rf $(BUILD)/test-summary
	@$(if $(SPACK_FOUND),,echo "spack not found (IOK_SPACK_ROOT, PATH): declared missing, IOK_ALLOW_MISSING=$(TEST_MISSING)")
	@cd $(BUILD) && IOK_ALLOW_MISSING=$(TEST_MISSING) ctest -j3 --output-on-failure; rc=$$?; \
	  echo "pytest runs under ctest (skips are failures unless IOK_ALLOW_MISSING declares them):"; \
	  cat test-summary/*.txt 2>/dev/null || echo "  (no pytest run wrote a summary)"; exit $$rc
	@$(MAKE) --no-print-directory test-mpich
	@$(MAKE) --no-print-directory test-sanitize
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)

# The suite built with ASan + UBSan: unit tests, fuzz corpus replay, and the
# SAN_E2E subset of the end-to-end tests (tests/sanitize/README.md).
test-sanitize: deps venv
	@cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIOK_SANITIZE=ON \
	  > $(SAN_BUILD).cmake.log 2>&1 || { cat $(SAN_BUILD).cmake.log; exit 1; }
	@cmake --build $(SAN_BUILD)
	cd $(SAN_BUILD) && $(SAN_ENV) ctest --output-on-failure -L sanitize
	$(SAN_ENV) IOK_BIN=$(CURDIR)/$(SAN_BUILD)/iokernels $(VENV)/bin/pytest -q -rs -p no:cacheprovider \
	  tests/e2e -k "$(SAN_E2E)"

test-mpich: deps venv
	@test -x $(MPICH_VENV)/bin/pip || python3 -m venv $(MPICH_VENV)
	@scripts/install-adios2.sh $(MPICH_VENV) mpich
	@cmake -S . -B $(MPICH_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DMPI_C_COMPILER=mpicc.mpich -DHDF5_ROOT=$(MPICH_HDF5) \
	  -DIOK_ADIOS2_VENV=$(CURDIR)/$(MPICH_VENV) > $(MPICH_BUILD).cmake.log 2>&1 \
	  || { cat $(MPICH_BUILD).cmake.log; exit 1; }
	@cat $(MPICH_BUILD)/backends.txt
	@cmake --build $(MPICH_BUILD)
	cd $(MPICH_BUILD) && MPIEXEC=mpiexec.mpich ctest --output-on-failure -L unit
	MPIEXEC=mpiexec.mpich IOK_BIN=$(CURDIR)/$(MPICH_BUILD)/iokernels MPICH_HDF5=$(MPICH_HDF5) \
	  IOK_ALLOW_MISSING=$(MPICH_MISSING) \
	  $(VENV)/bin/pytest -q -rs -p no:cacheprovider $(MPICH_E2E) -k "$(MPICH_E2E_SKIP)"

# libFuzzer (clang) on every parser the suite owns, FUZZ_SECONDS each
# (FUZZ_SKIP="a b": targets left out; none by default).
fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIOK_FUZZ=ON \
	  > $(FUZZ_BUILD).cmake.log 2>&1 || { cat $(FUZZ_BUILD).cmake.log; exit 1; }
	@cmake --build $(FUZZ_BUILD)
	scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	bench/btio

# The documentation site (mkdocs.yml) into $(BUILD)/site: open $(BUILD)/site/index.html
# (it works from disk: tests/docs/test_site.py); diagrams need Graphviz (make deps).
docs: venv
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict -d $(BUILD)/site

# The report's screenshots in docs/images/ (getting-started.md): a small
# campaign, its report, headless Chromium; commit the PNGs it rewrites.
screenshots: build venv
	scripts/screenshots docs/images

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(BUILD).cmake.log $(SAN_BUILD) $(SAN_BUILD).cmake.log $(FUZZ_BUILD) \
	  $(FUZZ_BUILD).cmake.log $(MPICH_BUILD) $(MPICH_BUILD).cmake.log
