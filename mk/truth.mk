# hpm-truth: kernel workloads with exactly known per-call instruction counts, the ground
# truth of the lab's precise sampling (docs/pes.md). Static, frame pointers, like ksuite.
EXTRA_ALL += $(BUILD)/bin/hpm-truth
CROSS_BINS += bin/hpm-truth

$(BUILD)/bin/hpm-truth: workloads/truth/truth.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fno-omit-frame-pointer $(WARN) -static -o $@ $<
