# Arm SPE decoder for hpmkit (python/hpmkit/spe), loaded with hpmkit.native.load("hpmspe").
SPE_SRC := $(wildcard src/native/spe_*.c)
SPE_HDR := $(wildcard src/native/spe*.h)

$(BUILD)/native/libhpmspe.so: $(SPE_SRC) $(SPE_HDR)
	@mkdir -p $(@D)
	$(HOSTCC) -O2 -g $(WARN) -fPIC -fvisibility=hidden -shared -o $@ $(SPE_SRC)

EXTRA_ALL += $(BUILD)/native/libhpmspe.so

# libFuzzer harness (development only, needs clang): make fuzz-spe; see tests/fuzz/spe_fuzz.c
$(BUILD)/fuzz/spe_fuzz: tests/fuzz/spe_fuzz.c $(SPE_SRC) $(SPE_HDR)
	@mkdir -p $(@D)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Isrc/native -o $@ tests/fuzz/spe_fuzz.c $(SPE_SRC)

fuzz-spe: $(BUILD)/fuzz/spe_fuzz
.PHONY: fuzz-spe

# The same harness without libFuzzer, with gcc's sanitizers: replays the corpus and N mutations of
# it (tests/fuzz/spe_replay.c); tests/py/test_spe_decoder.py runs it over the corpus.
$(BUILD)/fuzz/spe_replay: tests/fuzz/spe_replay.c tests/fuzz/spe_fuzz.c $(SPE_SRC) $(SPE_HDR) \
			  tests/fuzz/mutate.h
	@mkdir -p $(@D)
	$(HOSTCC) -g -O1 $(WARN) -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-Isrc/native -o $@ tests/fuzz/spe_replay.c tests/fuzz/spe_fuzz.c $(SPE_SRC)

spe-replay: $(BUILD)/fuzz/spe_replay
.PHONY: spe-replay
