# hpmpes: the lab's precise event sampler, a QEMU 10 TCG plugin (lab/pes, docs/pes.md).
# A host shared object loaded by qemu-system-riscv64/aarch64: -fPIC, hidden symbols but
# the plugin entry points, and no library but libc; the QEMU plugin API and the few glib
# calls it needs resolve against the qemu binary when it loads the plugin. It writes
# perf.data through the project's writer (src/perffile/perf_file.c, shared with hpm record).
PES_SRC := $(sort $(wildcard lab/pes/*.c)) src/perffile/perf_file.c
PES_HDR := $(wildcard lab/pes/*.h) src/perffile/perf_file.h src/util/sorted.h

EXTRA_ALL += $(BUILD)/lab/libhpmpes.so

$(BUILD)/lab/libhpmpes.so: $(PES_SRC) $(PES_HDR)
	@mkdir -p $(@D)
	$(HOSTCC) -O2 -g $(WARN) -D_GNU_SOURCE -Isrc/perffile -Isrc/util -fPIC -fvisibility=hidden -shared \
		-Wl,--allow-shlib-undefined -o $@ $(PES_SRC)
