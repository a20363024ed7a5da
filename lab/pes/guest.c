/* SPDX-License-Identifier: MIT */
/* Reading the guest: registers of the vCPU in a callback and its virtual memory.
 * QEMU checks memory reads against the current privilege (measured: a user-mode callback
 * cannot read kernel memory, a kernel-mode one cannot read user pages while SUM/PAN is
 * off), so callers read kernel structures only from kernel-mode callbacks. */
#include <string.h>
#include "pes.h"

static struct qemu_plugin_register *handle[R_NREGS];
static GByteArray *rbuf, *mbuf;

/* Handles come from the first vCPU; every vCPU of a machine has the same register list. */
void guest_init_regs(void)
{
	if (rbuf)
		return;
	rbuf = g_byte_array_new();
	mbuf = g_byte_array_new();
	GArray *a = qemu_plugin_get_registers();
	const qemu_plugin_reg_descriptor *d = (const void *)a->data;
	for (int id = 0; id < R_NREGS; id++) {
		const char *want = opt.isa->reg_names[id];
		for (unsigned k = 0; want && k < a->len; k++)
			if (!strcmp(d[k].name, want)) {
				handle[id] = d[k].handle;
				break;
			}
	}
	g_array_free(a, 1);
	for (int id = 0; id <= R_PC; id++)
		if (!handle[id] && id != 0)
			pes_fatal("QEMU does not expose register '%s' of %s to plugins; this plugin "
				  "needs QEMU 10 (plugin API 4)", opt.isa->reg_names[id], opt.isa->name);
}

bool reg_ok(int id)
{
	return handle[id] != NULL;
}

uint64_t reg(struct regs *r, int id)
{
	if (r->have & (1ULL << id))
		return r->v[id];
	uint64_t v = 0;
	if (handle[id]) {
		g_byte_array_set_size(rbuf, 0);
		int n = qemu_plugin_read_register(handle[id], rbuf);
		if (n > 0)
			memcpy(&v, rbuf->data, n > 8 ? 8 : (size_t)n); /* little-endian targets */
	}
	r->v[id] = v;
	r->have |= 1ULL << id;
	return v;
}

bool gread(uint64_t addr, void *dst, size_t len)
{
	if (!len || !qemu_plugin_read_memory_vaddr(addr, mbuf, len) || mbuf->len < len)
		return false;
	memcpy(dst, mbuf->data, len);
	return true;
}

bool gread64(uint64_t addr, uint64_t *v)
{
	return gread(addr, v, 8);
}
