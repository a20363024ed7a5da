# Fuzzing (docs/fuzzing.md): libFuzzer harnesses for the C parsers, atheris harnesses for the
# Python readers, and gcc-built replay drivers the test suite runs over the kept corpora.
#   make fuzz                      build, then fuzz every target FUZZ_SECONDS (default 60) each
#   make fuzz FUZZ_SECONDS=3600 FUZZ_TARGETS="perfdata_scan evtab"
#   make fuzz-build                the libFuzzer binaries (needs clang + libclang-rt-14-dev)
#   make fuzz-replay               the replay drivers (gcc only; tests/py/test_fuzz_corpora.py)
# New inputs a campaign finds go to build/fuzz/corpus/<target>; the repository keeps a
# minimised copy in tests/data/fuzz/<target> (tests/fuzz/run.sh --merge).
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= perfdata_scan evtab spe cfi perfdata script hpmprof stat_json regions_json truth exact protocol
PERFDATA_NATIVE := src/native/perfdata_scan.c src/native/perfdata_order.c
# libhpm with the harness: its sources and the embedded data (the harness reads HPM_DATA_DIR)
FUZZ_LIB := $(LIB_SRC) $(BUILD)/gen/embedded.c

$(BUILD)/fuzz/perfdata_scan_fuzz: tests/fuzz/perfdata_fuzz.c $(PERFDATA_NATIVE)
	@mkdir -p $(@D)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^

$(BUILD)/fuzz/evtab_fuzz: tests/fuzz/evtab_fuzz.c $(FUZZ_LIB) src/lib/internal.h $(HEADERS)
	@mkdir -p $(@D)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) $(CPPFLAGS) -pthread -o $@ \
		tests/fuzz/evtab_fuzz.c $(FUZZ_LIB) -lm

$(BUILD)/fuzz/perfdata_scan_replay: tests/fuzz/replay.c tests/fuzz/perfdata_fuzz.c $(PERFDATA_NATIVE) \
				    tests/fuzz/mutate.h
	@mkdir -p $(@D)
	$(HOSTCC) -g -O1 $(WARN) $(FUZZ_SAN) -o $@ $(filter %.c,$^)

$(BUILD)/fuzz/evtab_replay: tests/fuzz/replay.c tests/fuzz/evtab_fuzz.c $(FUZZ_LIB) src/lib/internal.h $(HEADERS) \
			    tests/fuzz/mutate.h
	@mkdir -p $(@D)
	$(HOSTCC) -g -O1 $(WARN) $(FUZZ_SAN) $(CPPFLAGS) -pthread -o $@ \
		tests/fuzz/replay.c tests/fuzz/evtab_fuzz.c $(FUZZ_LIB) -lm

fuzz-build: $(BUILD)/fuzz/perfdata_scan_fuzz $(BUILD)/fuzz/evtab_fuzz $(BUILD)/fuzz/spe_fuzz $(BUILD)/fuzz/cfi_fuzz
fuzz-replay: $(BUILD)/fuzz/perfdata_scan_replay $(BUILD)/fuzz/evtab_replay $(BUILD)/fuzz/spe_replay $(BUILD)/fuzz/cfi_replay

fuzz: fuzz-build $(BUILD)/native/libhpmperf.so
	BUILD=$(BUILD) bash tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

.PHONY: fuzz fuzz-build fuzz-replay

# the lab sampler's user-stack unwinder, with the plugin's ISA files and ELF helpers
CFI_FUZZ_SRC := lab/pes/cfi.c lab/pes/elf.c lab/pes/riscv64.c lab/pes/aarch64.c
$(BUILD)/fuzz/cfi_fuzz: tests/fuzz/cfi_fuzz.c $(CFI_FUZZ_SRC) lab/pes/pes.h src/util/sorted.h
	@mkdir -p $(@D)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) -D_GNU_SOURCE -Ilab/pes -Isrc/util -o $@ \
		tests/fuzz/cfi_fuzz.c $(CFI_FUZZ_SRC)

$(BUILD)/fuzz/cfi_replay: tests/fuzz/replay.c tests/fuzz/cfi_fuzz.c $(CFI_FUZZ_SRC) lab/pes/pes.h src/util/sorted.h tests/fuzz/mutate.h
	@mkdir -p $(@D)
	$(HOSTCC) -g -O1 $(WARN) $(FUZZ_SAN) -D_GNU_SOURCE -Ilab/pes -Isrc/util -o $@ \
		tests/fuzz/replay.c tests/fuzz/cfi_fuzz.c $(CFI_FUZZ_SRC)
