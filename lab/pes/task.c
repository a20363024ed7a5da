/* SPDX-License-Identifier: MIT */
/* Guest tasks. The running task is tracked rather than read at each sample: QEMU lets a
 * user-mode callback read no kernel memory, riscv's tp and arm64's sp_el0 hold `current`
 * only in kernel mode, and in M-mode (OpenSBI) nothing does. So the plugin hooks the
 * kernel's context switch (riscv __switch_to, arm64 cpu_switch_to: `next` in the second
 * argument register) and keeps the task from there: one callback per switch, exact in
 * every mode. Two more hooks keep names and executables current: __set_task_comm
 * (exec and prctl renames: task, new name, exec flag) and finalize_exec (the new image's
 * mm->start_code/end_code are set by then). A task is read once, from kernel mode, when
 * first seen; its parents are announced first so the FORK chain is complete. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pes.h"

enum {
	O_PID, O_TGID, O_COMM, O_MM, O_PARENT, O_LEADER, O_STACK, O_EXE, O_START, O_END,
	O_FPATH, O_DENTRY, O_DNAME, O_QNAME, O_THREAD_SIZE, O_PTREGS_SIZE, O_PGD,
	O_DPARENT, O_VM_START, O_VM_END, O_VM_MM, O_VM_FLAGS, O_VM_PGOFF, O_VM_FILE, O_VM_EXEC,
	O_PAGE_SHIFT, O_N
};
static const char *const off_names[O_N] = {
	"task_struct.pid", "task_struct.tgid", "task_struct.comm", "task_struct.mm",
	"task_struct.real_parent", "task_struct.group_leader", "task_struct.stack",
	"mm_struct.exe_file", "mm_struct.start_code", "mm_struct.end_code", "file.f_path",
	"path.dentry", "dentry.d_name", "qstr.name", "thread_size", "pt_regs.size", "mm_struct.pgd",
	"dentry.d_parent", "vm_area_struct.vm_start", "vm_area_struct.vm_end",
	"vm_area_struct.vm_mm", "vm_area_struct.vm_flags", "vm_area_struct.vm_pgoff",
	"vm_area_struct.vm_file", "vm_exec", "page_shift",
};
static int64_t off[O_N];

bool offsets_load(const char *path, char *err, size_t errlen)
{
	for (int i = 0; i < O_N; i++)
		off[i] = -1;
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read offsets=%s: %s (the lab writes it beside the "
			 "kernel: .cache/lab/<arch>/offsets-<tag>)", path, strerror(errno));
		return false;
	}
	char line[256], name[128];
	long long v;
	int lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0)
			continue;
		if (sscanf(line, "%127s %lld", name, &v) != 2 || v < 0) {
			fclose(f);
			snprintf(err, errlen, "offsets=%s line %d is not 'name value'", path, lineno);
			return false;
		}
		for (int i = 0; i < O_N; i++)
			if (!strcmp(name, off_names[i]))
				off[i] = v;
	}
	fclose(f);
	for (int i = 0; i <= O_PARENT; i++)
		if (off[i] < 0) {
			snprintf(err, errlen, "offsets=%s lacks '%s' (needed to name tasks)", path,
				 off_names[i]);
			return false;
		}
	return true;
}

#define NBUCKET 4096
static struct task *bucket[NBUCKET];
static struct task *boot_task;
uint64_t n_tasks;

static unsigned hslot(uint64_t p)
{
	return (unsigned)((p >> 4) * 0x9E3779B97F4A7C15ULL >> 52) & (NBUCKET - 1);
}

static struct task *find(uint64_t ptr)
{
	for (struct task *t = bucket[hslot(ptr)]; t; t = t->hnext)
		if (t->ptr == ptr)
			return t;
	return NULL;
}

static bool rd32(uint64_t a, int32_t *v)
{
	return gread(a, v, 4);
}

static void read_comm(uint64_t addr, char comm[16])
{
	char b[16] = { 0 };
	if (!gread(addr, b, 16))
		return;
	b[15] = 0;
	memcpy(comm, b, 16);
}

/* executable name: mm->exe_file->f_path.dentry->d_name.name */
static void read_exe(struct task *t)
{
	uint64_t file, dentry, name;
	char b[64] = { 0 };
	if (off[O_EXE] < 0 || off[O_FPATH] < 0 || off[O_DENTRY] < 0 || off[O_DNAME] < 0 ||
	    off[O_QNAME] < 0)
		return;
	if (!gread64(t->mm + off[O_EXE], &file) || !file ||
	    !gread64(file + off[O_FPATH] + off[O_DENTRY], &dentry) || !dentry ||
	    !gread64(dentry + off[O_DNAME] + off[O_QNAME], &name) || !name || !gread(name, b, 63))
		return;
	b[63] = 0;
	if (b[0])
		snprintf(t->exe_name, sizeof(t->exe_name), "%s", b);
}

/* mm and executable of t (kernel mode only) */
static void read_mm(struct task *t)
{
	uint64_t mm = 0;
	gread64(t->ptr + off[O_MM], &mm);
	t->mm = mm;
	t->user = mm != 0;
	t->start_code = t->end_code = 0;
	t->exe_name[0] = 0;
	if (!mm)
		return;
	if (off[O_START] >= 0)
		gread64(mm + off[O_START], &t->start_code);
	if (off[O_END] >= 0)
		gread64(mm + off[O_END], &t->end_code);
	read_exe(t);
	t->exe = exe_get(t->exe_name[0] ? t->exe_name : t->comm);
}

/* the (tgid, mm, start) mappings already written, so threads do not repeat them */
static struct {
	int32_t tgid;
	uint64_t mm, start;
} mapped[1024];
static unsigned nmapped;

void task_need_map(struct task *t, unsigned vcpu, uint64_t time)
{
	if (!out_enabled || !t->announced || !t->user || !t->start_code ||
	    t->end_code <= t->start_code || (t->mapped_mm == t->mm && t->mapped_start == t->start_code))
		return;
	t->mapped_mm = t->mm;
	t->mapped_start = t->start_code;
	for (unsigned i = 0; i < nmapped && i < 1024; i++)
		if (mapped[i].tgid == t->tgid && mapped[i].mm == t->mm && mapped[i].start == t->start_code)
			return;
	mapped[nmapped % 1024].tgid = t->tgid;
	mapped[nmapped % 1024].mm = t->mm;
	mapped[nmapped % 1024].start = t->start_code;
	nmapped++;
	bool ok;
	uint64_t pgoff = exe_pgoff(t->exe, t->start_code, &ok);
	char name[80];
	snprintf(name, sizeof(name), "/bin/%s", t->exe_name[0] ? t->exe_name : t->comm);
	out_mmap2(t, t->start_code, t->end_code - t->start_code, pgoff, name, time, vcpu);
}

static void set_epoch(struct task *t)
{
	if (exact_enabled)
		t->epoch = exact_epoch(t->tgid, t->pid, t->comm);
}

/* FORK, COMM and the executable's MMAP2 of t, its process and parents first, once per
 * recording (all records are written from the start trigger on) */
static void announce(struct task *t, unsigned vcpu, uint64_t time, bool exec)
{
	if (!t || t->announced || !out_enabled || !count_started())
		return;
	t->announced = true; /* first: a parent cycle cannot recurse */
	announce(t->parent, vcpu, time, false);
	if (t->pid)
		out_fork(t, t->ppid, t->ptid, time, vcpu);
	out_comm(t, exec, time, vcpu);
	task_need_map(t, vcpu, time);
}

void task_announce(struct task *t, unsigned vcpu, uint64_t time)
{
	announce(t, vcpu, time, false);
}

static struct task *see(uint64_t ptr, int depth);

/* read a new task (kernel mode), and its process or parent, so that announcing it later
 * needs no guest memory */
static struct task *create(uint64_t ptr, int depth)
{
	int32_t pid, tgid;
	if (!rd32(ptr + off[O_PID], &pid) || !rd32(ptr + off[O_TGID], &tgid))
		return NULL;
	struct task *t = calloc(1, sizeof(*t));
	t->ptr = ptr;
	t->pid = pid;
	t->tgid = tgid;
	snprintf(t->comm, sizeof(t->comm), "%s", pid ? "" : "swapper");
	read_comm(ptr + off[O_COMM], t->comm);
	if (off[O_STACK] >= 0)
		gread64(ptr + off[O_STACK], &t->stack);
	read_mm(t);
	unsigned h = hslot(ptr);
	t->hnext = bucket[h];
	bucket[h] = t;
	n_tasks++;
	set_epoch(t);
	/* FORK: a thread is created by its process (perf's convention: pid == ppid); a
	 * process by its real parent */
	if (pid != tgid) {
		t->ppid = t->ptid = tgid;
		uint64_t leader = 0;
		if (off[O_LEADER] >= 0 && gread64(ptr + off[O_LEADER], &leader) && leader &&
		    leader != ptr && depth < 32)
			t->parent = see(leader, depth + 1);
	} else if (pid) {
		uint64_t parent = 0;
		if (gread64(ptr + off[O_PARENT], &parent) && parent && parent != ptr && depth < 32) {
			t->parent = see(parent, depth + 1);
			if (t->parent) {
				t->ppid = t->parent->tgid;
				t->ptid = t->parent->pid;
			}
		}
	}
	return t;
}

static struct task *see(uint64_t ptr, int depth)
{
	struct task *t = find(ptr);
	return t ? t : create(ptr, depth);
}

/* init_task runs until the first switch, partly with the MMU off: known without reading */
struct task *task_boot(void)
{
	if (boot_task)
		return boot_task;
	struct task *t = calloc(1, sizeof(*t));
	t->ptr = ksym_addr("init_task");
	snprintf(t->comm, sizeof(t->comm), "swapper/0");
	unsigned h = hslot(t->ptr);
	t->hnext = bucket[h];
	bucket[h] = t;
	n_tasks++;
	set_epoch(t);
	return boot_task = t;
}

/* the release string of the running kernel, from its banner "Linux version X ..." */
static void read_release(void)
{
	static bool done;
	static uint64_t a = 1;
	char b[96] = { 0 }, rel[65];
	if (a == 1)
		a = ksym_addr("linux_banner");
	if (done || !a || !gread(a, b, sizeof(b) - 1))
		return;
	done = true;
	if (sscanf(b, "Linux version %64s", rel) == 1)
		out_osrelease(rel);
}

static bool is_start_comm(const char *comm)
{
	return opt.start && !strncmp(comm, opt.start, 15);
}

void on_switch(unsigned vcpu, void *ud)
{
	struct regs r = { 0 };
	read_release();
	uint64_t next = reg(&r, opt.isa->r_arg1);
	struct task *t = find(next);
	int32_t pid;
	/* a freed task_struct reused by a new task: its pid differs */
	if (t && rd32(next + off[O_PID], &pid) && pid != t->pid) {
		t->ptr = 0;
		t = NULL;
	}
	if (!t)
		t = create(next, 0);
	if (!t)
		return;
	vcpus[vcpu].task = t;
	if (!count_started() && is_start_comm(t->comm))
		count_start(vcpu, ud);
	task_announce(t, vcpu, hook_time(vcpu, ud));
}

void on_comm(unsigned vcpu, void *ud)
{
	struct regs r = { 0 };
	uint64_t tsk = reg(&r, opt.isa->r_arg0), buf = reg(&r, opt.isa->r_arg1);
	bool exec = reg(&r, opt.isa->r_arg2) & 1;
	struct task *t = see(tsk, 0);
	if (!t)
		return;
	char comm[16] = { 0 };
	if (!gread(buf, comm, 15))
		return;
	comm[15] = 0;
	if (!strcmp(comm, t->comm))
		return;
	memcpy(t->comm, comm, 16);
	set_epoch(t);
	if (!count_started() && is_start_comm(comm))
		count_start(vcpu, ud);
	if (t->announced)
		out_comm(t, exec, hook_time(vcpu, ud), vcpu);
	else
		announce(t, vcpu, hook_time(vcpu, ud), exec);
}

void on_exec_done(unsigned vcpu, void *ud)
{
	struct task *t = vcpus[vcpu].task;
	if (!t || !t->ptr)
		return;
	read_mm(t);
	struct regs r = { .have = 0 };
	uaccess_learn(t, &r);
	task_need_map(t, vcpu, hook_time(vcpu, ud));
}

/* The mappings a recorded process makes after its exec (the loader mapping shared
 * libraries, dlopen): perf_event_mmap(vma) is the kernel's own announcement of every new
 * mapping, so its entry is hooked and the executable, file-backed ones are written as
 * MMAP2 with the file's path. The program's own image is announced from mm->exe_file
 * (task_need_map) and skipped here; anonymous and special mappings ([vdso]) carry no
 * file. Without the vm_area_struct offsets (an older offsets file) this is off. */
bool task_can_map(void)
{
	for (int i = O_DPARENT; i < O_N; i++)
		if (off[i] < 0)
			return false;
	return off[O_EXE] >= 0 && off[O_FPATH] >= 0 && off[O_DENTRY] >= 0 && off[O_DNAME] >= 0 &&
	       off[O_QNAME] >= 0;
}

/* the absolute path of a dentry: names up to the root (a dentry that is its own parent) */
static bool dentry_path(uint64_t dentry, char *buf, size_t len)
{
	char parts[16][64];
	int n = 0;
	while (n < 16) {
		uint64_t parent = 0, name = 0;
		if (!gread64(dentry + off[O_DPARENT], &parent) || !parent)
			return false;
		if (parent == dentry)
			break;
		if (!gread64(dentry + off[O_DNAME] + off[O_QNAME], &name) || !name ||
		    !gread(name, parts[n], 63))
			return false;
		parts[n][63] = 0;
		n++;
		dentry = parent;
	}
	if (n == 16 || n == 0)
		return false;
	size_t o = 0;
	buf[0] = 0;
	for (int i = n - 1; i >= 0 && o < len; i--)
		o += (size_t)snprintf(buf + o, len - o, "/%s", parts[i]);
	return o < len;
}

uint64_t n_maps_unnamed;

void on_mmap(unsigned vcpu, void *ud)
{
	struct task *t = vcpus[vcpu].task;
	if (!t || !t->announced || !count_started())
		return;
	struct regs r = { 0 };
	uint64_t vma = reg(&r, opt.isa->r_arg0);
	uint64_t start, end, mm, flags, pgoff, file, exe = 0, dentry;
	if (!gread64(vma + off[O_VM_FILE], &file) || !file ||
	    !gread64(vma + off[O_VM_FLAGS], &flags) || !(flags & (uint64_t)off[O_VM_EXEC]))
		return;
	if (!gread64(vma + off[O_VM_START], &start) || !gread64(vma + off[O_VM_END], &end) ||
	    !gread64(vma + off[O_VM_MM], &mm) || !gread64(vma + off[O_VM_PGOFF], &pgoff) ||
	    end <= start) {
		n_maps_unnamed++;
		return;
	}
	if (mm && gread64(mm + off[O_EXE], &exe) && exe == file)
		return;
	char path[512];
	if (!gread64(file + off[O_FPATH] + off[O_DENTRY], &dentry) || !dentry ||
	    !dentry_path(dentry, path, sizeof(path))) {
		n_maps_unnamed++;
		return;
	}
	out_mmap2(t, start, end - start, pgoff << off[O_PAGE_SHIFT], path, hook_time(vcpu, ud),
		  vcpu);
}

uint64_t task_pt_regs(const struct task *t)
{
	if (!t->stack || off[O_THREAD_SIZE] <= 0 || off[O_PTREGS_SIZE] <= 0)
		return 0;
	return t->stack + (uint64_t)off[O_THREAD_SIZE] - (uint64_t)off[O_PTREGS_SIZE];
}

uint64_t task_thread_size(void)
{
	return off[O_THREAD_SIZE] > 0 ? (uint64_t)off[O_THREAD_SIZE] : 16384;
}

uint64_t task_mm_pgd_off(void)
{
	return off[O_PGD] > 0 ? (uint64_t)off[O_PGD] : 0;
}

uint64_t task_mm_off(void)
{
	return (uint64_t)off[O_MM];
}
