# ksuite: kernel-exercising workloads for cross-ISA kernel profiles (docs/ksuite.md).
# Always static (one file for a board or a lab guest, same start-up path everywhere),
# -O2 with frame pointers so perf/hpm user call chains unwind without DWARF.
KSUITE_SRC := $(sort $(wildcard workloads/ksuite/*.c))
KSUITE_CFLAGS := -O2 -g -fno-omit-frame-pointer $(WARN)

EXTRA_ALL += $(BUILD)/bin/ksuite
CROSS_BINS += bin/ksuite

$(BUILD)/bin/ksuite: $(KSUITE_SRC) workloads/ksuite/ksuite.h
	@mkdir -p $(@D)
	$(CC) $(KSUITE_CFLAGS) -static -pthread -o $@ $(KSUITE_SRC)
