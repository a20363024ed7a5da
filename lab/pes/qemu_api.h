/* SPDX-License-Identifier: MIT */
/* The part of QEMU's TCG plugin interface (API version 4, QEMU 10.0) that hpmpes calls,
 * declared here from the documented interface
 * (https://www.qemu.org/docs/master/devel/tcg-plugins.html) so the plugin builds without
 * QEMU or glib headers. Every symbol resolves against the running qemu-system-* binary
 * (and the glib it links) when QEMU loads the plugin. Enum values and struct layouts are
 * part of that ABI and must match it exactly. */
#ifndef HPMPES_QEMU_API_H
#define HPMPES_QEMU_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QAPI_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

typedef struct {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus, max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_scoreboard;
struct qemu_plugin_register;

/* one uint64_t inside each vCPU's entry of a scoreboard */
typedef struct {
	struct qemu_plugin_scoreboard *score;
	size_t offset;
} qemu_plugin_u64;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64, QEMU_PLUGIN_INLINE_STORE_U64 };
enum qemu_plugin_cond {
	QEMU_PLUGIN_COND_NEVER, QEMU_PLUGIN_COND_ALWAYS, QEMU_PLUGIN_COND_EQ, QEMU_PLUGIN_COND_NE,
	QEMU_PLUGIN_COND_LT, QEMU_PLUGIN_COND_LE, QEMU_PLUGIN_COND_GT, QEMU_PLUGIN_COND_GE,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

typedef struct {
	struct qemu_plugin_register *handle;
	const char *name;
	const char *feature;
} qemu_plugin_reg_descriptor;

/* glib's public array headers (data pointer first, then the length) */
typedef struct {
	char *data;
	unsigned len;
} GArray;
typedef struct {
	uint8_t *data;
	unsigned len;
} GByteArray;

/* what the plugin exports */
extern QAPI_EXPORT int qemu_plugin_version;
QAPI_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
				    char **argv);

/* what QEMU provides */
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_cond_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
					       enum qemu_plugin_cb_flags flags, enum qemu_plugin_cond cond,
					       qemu_plugin_u64 entry, uint64_t imm, void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(struct qemu_plugin_tb *tb,
						       enum qemu_plugin_op op, qemu_plugin_u64 entry,
						       uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cond_cb(struct qemu_plugin_insn *insn,
						 qemu_plugin_vcpu_udata_cb_t cb,
						 enum qemu_plugin_cb_flags flags,
						 enum qemu_plugin_cond cond, qemu_plugin_u64 entry,
						 uint64_t imm, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(struct qemu_plugin_insn *insn,
							 enum qemu_plugin_op op,
							 qemu_plugin_u64 entry, uint64_t imm);
void qemu_plugin_register_vcpu_mem_inline_per_vcpu(struct qemu_plugin_insn *insn,
						   enum qemu_plugin_mem_rw rw,
						   enum qemu_plugin_op op, qemu_plugin_u64 entry,
						   uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
/* API >= 3: copies the instruction's bytes; returns how many */
size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest, size_t len);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

struct qemu_plugin_scoreboard *qemu_plugin_scoreboard_new(size_t element_size);
void *qemu_plugin_scoreboard_find(struct qemu_plugin_scoreboard *score, unsigned int vcpu_index);

/* a GArray of qemu_plugin_reg_descriptor for the calling vCPU; the caller frees it */
GArray *qemu_plugin_get_registers(void);
/* appends the register's bytes (target order) to buf; returns their number or -1 */
int qemu_plugin_read_register(struct qemu_plugin_register *handle, GByteArray *buf);
/* API 4: buf is resized to len and filled from the current vCPU's virtual address space */
bool qemu_plugin_read_memory_vaddr(uint64_t addr, GByteArray *data, size_t len);

/* glib, as linked into QEMU */
GByteArray *g_byte_array_new(void);
GByteArray *g_byte_array_set_size(GByteArray *array, unsigned length);
char *g_array_free(GArray *array, int free_segment);

#endif
