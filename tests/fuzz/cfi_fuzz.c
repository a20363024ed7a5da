/* libFuzzer harness for the lab sampler's user-stack unwinder (lab/pes/cfi.c, the riscv
 * prologue analyser in lab/pes/riscv64.c): call-frame information comes from the user's own
 * binaries, so a malformed .eh_frame/.debug_frame or odd code must end a chain, never crash
 * QEMU.
 *
 *   make fuzz-build && build/fuzz/cfi_fuzz tests/data/fuzz/cfi        (docs/fuzzing.md)
 *
 * Input: a flags byte (bit 0: arm64, else riscv64; bit 1: the section is .debug_frame, else
 * .eh_frame), a 16-bit little-endian section length, the section, then the rest: the code
 * and stack image both, mapped at BASE. Function starts are BASE + every 64th byte; a few
 * register sets taken from the image's first words are unwound for up to 64 frames each,
 * by CFI, then the prologue, as the sampler does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pes.h"

#define BASE 0x10000ULL

struct opts opt;

/* the ISA files' load/store address decoder reads registers; the unwinder never calls it */
uint64_t reg(struct regs *r, int id)
{
	(void)r;
	(void)id;
	return 0;
}

struct image {
	const uint8_t *p;
	size_t n;
};

static bool rd(void *ctx, uint64_t a, uint64_t *v)
{
	const struct image *m = ctx;
	if (a < BASE || a - BASE > m->n || m->n - (a - BASE) < 8)
		return false;
	memcpy(v, m->p + (a - BASE), 8);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	opt.isa = data[0] & 1 ? &isa_aarch64 : &isa_riscv64;
	bool dbg = data[0] & 2;
	size_t len = data[1] | (size_t)data[2] << 8;
	if (len > size - 3)
		len = size - 3;
	const uint8_t *sec = data + 3;
	struct image m = { sec + len, size - 3 - len };
	struct exe e = { .text = (uint8_t *)m.p, .text_va = BASE, .text_len = m.n };
	size_t nf = m.n / 64 + 1;
	e.fstart = malloc(nf * sizeof(uint64_t));
	for (size_t i = 0; i < nf; i++)
		e.fstart[e.nf++] = BASE + 64 * i;
	cfi_load(&e, dbg ? NULL : sec, dbg ? 0 : len, BASE, dbg ? sec : NULL, dbg ? len : 0);
	for (int k = 0; k < 4; k++) {
		struct uregs u = { .known = ~0ULL };
		for (int i = 0; i < 32; i++) {
			uint64_t w = 0;
			rd(&m, BASE + 8 * (uint64_t)((k * 7 + i) % 16), &w);
			/* stack-like values near the image, code-like values inside it */
			u.v[i] = BASE + (w % (m.n + 64));
		}
		u.pc = u.v[k];
		for (int f = 0; f < 64; f++) {
			int rc = cfi_step(&e, &u, rd, &m);
			if (rc == CFI_NONE)
				rc = prologue_step(&e, &u, rd, &m);
			if (rc != CFI_OK)
				break;
		}
	}
	cfi_free(e.cfi);
	free(e.fstart);
	return 0;
}
