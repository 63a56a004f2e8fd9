// SPDX-License-Identifier: GPL-2.0
/*
 * ovpn-count - a QEMU TCG plugin that counts what a guest workload costs:
 * instructions and atomic read-modify-writes, kernel and user mode apart,
 * per vCPU, and where each atomic sits.  Unlike wall-clock time these
 * counts do not depend on the host's load or on how slowly TCG emulates
 * the crypto instructions.
 *
 * The guest brackets a workload with two marker instructions, long NOPs
 * that change nothing when run without the plugin:
 *
 *	nopl 0x4f560001(%rax)	0f 1f 80 01 00 56 4f	start a window
 *	nopl 0x4f560002(%rax)	0f 1f 80 02 00 56 4f	end it
 *
 * Everything before a start is forgotten; at each end the window is
 * appended to the output file:
 *
 *	window <n>
 *	vcpu <i> kinsn <count> uinsn <count>		every vCPU
 *	site <address> <vcpu> <count>			every atomic that ran
 *	block <address> <vcpu> <insns>			with modules=
 *	end <n>
 *
 * An instruction is kernel mode when its address is in the upper half of
 * the address space.  It is an atomic RMW when it carries a LOCK prefix or
 * is an XCHG with a memory operand (locked by the CPU).  Instructions are
 * counted per translation block, so a block left early by an exception
 * still counts whole: counts are exact to within interrupts and faults.
 *
 * With modules=<address>, the instructions of every kernel block at or
 * above that address (x86-64's module area: 0xffffffffc0000000) are also
 * counted block by block, so that those of one module can be told apart
 * once its symbols are known; each such block costs a callback per run.
 *
 * With lines=1, a coherence model counts cache-line transfers between
 * vCPUs, the events perf c2c samples on real hardware.  Every memory
 * access, kernel and user mode, is tracked by the physical 64-byte line
 * it touches: which vCPUs hold a copy, and which one holds it
 * modified.  A transfer is a store (or atomic) by one vCPU to a line
 * another vCPU holds (the others' copies are invalidated), or a load of a
 * line another vCPU holds modified (HITM).  The load of an atomic
 * read-modify-write reaches the plugin apart from its store; it is
 * modelled as a store, the request for ownership the CPU issues for it.
 * Caches are infinite: nothing is evicted, and the first access to a line in a window is a miss that
 * moves nothing between vCPUs.  Each window then also prints
 *
 *	xfer <address> <vcpu> <count>		transfers an instruction caused
 *	line <line> <vaddr> <first> <last> <writers> <vcpu> <count>
 *						transfers of one line: its
 *						physical line number, its first
 *						virtual address, the instruction
 *						that touched it first in the
 *						window and the last one that
 *						moved it, the vCPUs that wrote
 *						it (mask)
 *
 * Every memory access then costs a callback, inside windows or not: a
 * boot takes several times longer.
 *
 * Usage: -plugin ovpn-count.so,out=<file>[,modules=<address>][,lines=1]
 */

#include <glib.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define COUNT_MAX_VCPUS		64
#define COUNT_MARK_START	0x4f560001u
#define COUNT_MARK_END		0x4f560002u
#define COUNT_KERNEL_BASE	0xffff800000000000ull

/* The instruction counters one vCPU adds to, inline, as blocks run. */
struct count_insns {
	uint64_t kernel;
	uint64_t user;
};

/*
 * One atomic instruction, found at translation time.  Only vCPU i writes
 * runs[i], from its own thread; a window's start clears them all while
 * the other vCPUs may run, which can lose an increment racing with it,
 * before the workload began.
 */
struct count_site {
	uint64_t vaddr;
	uint64_t runs[COUNT_MAX_VCPUS];
};

static struct qemu_plugin_scoreboard *count_board;
static qemu_plugin_u64 count_kernel;
static qemu_plugin_u64 count_user;

/* Blocks counted one by one (modules=), by address; 0: none. */
static uint64_t count_modules;
static GHashTable *count_blocks;

/* Sites by address; translation of a block may run on any vCPU thread. */
static GHashTable *count_sites;
static GMutex count_lock;

/*
 * The coherence model (lines=1).  Lines are spread over stripes, each
 * with its own lock and table, as every vCPU thread updates them.
 */
#define COUNT_LINE_SHIFT	6
#define COUNT_STRIPES		256

/* One 64-byte line as the model sees it during a window. */
struct count_line {
	uint64_t line;		/* physical address >> COUNT_LINE_SHIFT */
	uint64_t vaddr;		/* the first virtual address it was seen at */
	uint64_t first;		/* the instruction that touched it first */
	uint64_t last;		/* the last instruction that moved it */
	uint64_t holders;	/* vCPUs with a copy, as a mask */
	uint64_t writers;	/* vCPUs that wrote it in the window */
	int owner;		/* the vCPU holding it modified, or -1 */
	uint64_t transfers[];	/* per vCPU, the transfers it caused */
};

/* An instruction that accesses memory, and the transfers it caused. */
struct count_mem_site {
	uint64_t vaddr;
	bool atomic;		/* a LOCK-prefixed or XCHG read-modify-write */
	uint64_t transfers[];	/* per vCPU */
};

struct count_stripe {
	GMutex lock;
	GHashTable *lines;
};

static bool count_lines;
static unsigned int count_vcpus;
static struct count_stripe count_stripes[COUNT_STRIPES];
static GHashTable *count_mem_sites;

/* The window: open or not, its number and the counters when it opened. */
static bool count_open;
static unsigned int count_window;
static uint64_t count_start_kernel[COUNT_MAX_VCPUS];
static uint64_t count_start_user[COUNT_MAX_VCPUS];
static FILE *count_out;

static bool count_is_kernel(uint64_t vaddr)
{
	return vaddr >= COUNT_KERNEL_BASE;
}

/*
 * Skips the legacy prefixes and REX of an x86-64 instruction.  Returns
 * the offset of its opcode and whether one of the prefixes was LOCK.
 */
static size_t count_skip_prefixes(const uint8_t *b, size_t len, bool *lock)
{
	size_t i = 0;

	*lock = false;
	for (; i < len; i++) {
		switch (b[i]) {
		case 0xf0:
			*lock = true;
			break;
		case 0xf2: case 0xf3: case 0x2e: case 0x36: case 0x3e:
		case 0x26: case 0x64: case 0x65: case 0x66: case 0x67:
			break;
		default:
			if ((b[i] & 0xf0) == 0x40)	/* REX */
				break;
			return i;
		}
	}
	return i;
}

static bool count_is_atomic(const uint8_t *b, size_t len)
{
	size_t op;
	bool lock;

	op = count_skip_prefixes(b, len, &lock);
	if (lock)
		return true;
	/* XCHG r/m, r: a memory operand (ModRM mod != 3) locks the bus. */
	return op + 1 < len && (b[op] == 0x86 || b[op] == 0x87) &&
	       (b[op + 1] & 0xc0) != 0xc0;
}

/* The marker code of a "nopl disp32(%rax)", or 0 for anything else. */
static uint32_t count_marker(const uint8_t *b, size_t len)
{
	uint32_t disp;

	if (len != 7 || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80)
		return 0;
	memcpy(&disp, b + 3, sizeof(disp));
	if (disp != COUNT_MARK_START && disp != COUNT_MARK_END)
		return 0;
	return disp;
}

static void count_clear_site(gpointer key, gpointer value, gpointer data)
{
	struct count_site *site = value;

	memset(site->runs, 0, sizeof(site->runs));
}

/* A site's or, data being "block", a block's counts of the window. */
static void count_print_site(gpointer key, gpointer value, gpointer data)
{
	struct count_site *site = value;
	int i, n = qemu_plugin_num_vcpus();

	for (i = 0; i < n && i < COUNT_MAX_VCPUS; i++)
		if (site->runs[i])
			fprintf(count_out, "%s %" PRIx64 " %d %" PRIu64 "\n",
				data ? (const char *)data : "site",
				site->vaddr, i, site->runs[i]);
}

static void count_clear_mem_site(gpointer key, gpointer value, gpointer data)
{
	struct count_mem_site *site = value;

	memset(site->transfers, 0, count_vcpus * sizeof(site->transfers[0]));
}

/* Forget every line: the next window starts with cold caches. */
static void count_clear_lines(void)
{
	int i;

	if (!count_lines)
		return;
	g_hash_table_foreach(count_mem_sites, count_clear_mem_site, NULL);
	for (i = 0; i < COUNT_STRIPES; i++) {
		g_mutex_lock(&count_stripes[i].lock);
		g_hash_table_remove_all(count_stripes[i].lines);
		g_mutex_unlock(&count_stripes[i].lock);
	}
}

static void count_print_mem_site(gpointer key, gpointer value, gpointer data)
{
	struct count_mem_site *site = value;
	unsigned int i;

	for (i = 0; i < count_vcpus; i++)
		if (site->transfers[i])
			fprintf(count_out, "xfer %" PRIx64 " %u %" PRIu64 "\n",
				site->vaddr, i, site->transfers[i]);
}

static void count_print_line(gpointer key, gpointer value, gpointer data)
{
	struct count_line *l = value;
	unsigned int i;

	for (i = 0; i < count_vcpus; i++)
		if (l->transfers[i])
			fprintf(count_out, "line %" PRIx64 " %" PRIx64 " %"
				PRIx64 " %" PRIx64 " %" PRIx64 " %u %" PRIu64
				"\n", l->line, l->vaddr, l->first, l->last,
				l->writers, i, l->transfers[i]);
}

static void count_print_lines(void)
{
	int i;

	if (!count_lines)
		return;
	g_hash_table_foreach(count_mem_sites, count_print_mem_site, NULL);
	for (i = 0; i < COUNT_STRIPES; i++) {
		g_mutex_lock(&count_stripes[i].lock);
		g_hash_table_foreach(count_stripes[i].lines, count_print_line,
				     NULL);
		g_mutex_unlock(&count_stripes[i].lock);
	}
}

static void count_open_window(void)
{
	int i, n = qemu_plugin_num_vcpus();

	g_hash_table_foreach(count_sites, count_clear_site, NULL);
	g_hash_table_foreach(count_blocks, count_clear_site, NULL);
	count_clear_lines();
	for (i = 0; i < n && i < COUNT_MAX_VCPUS; i++) {
		count_start_kernel[i] = qemu_plugin_u64_get(count_kernel, i);
		count_start_user[i] = qemu_plugin_u64_get(count_user, i);
	}
	__atomic_store_n(&count_open, true, __ATOMIC_RELEASE);
}

static void count_close_window(void)
{
	int i, n = qemu_plugin_num_vcpus();

	__atomic_store_n(&count_open, false, __ATOMIC_RELEASE);
	fprintf(count_out, "window %u\n", count_window);
	for (i = 0; i < n && i < COUNT_MAX_VCPUS; i++)
		fprintf(count_out, "vcpu %d kinsn %" PRIu64 " uinsn %" PRIu64
			"\n", i,
			qemu_plugin_u64_get(count_kernel, i) -
			count_start_kernel[i],
			qemu_plugin_u64_get(count_user, i) -
			count_start_user[i]);
	g_hash_table_foreach(count_sites, count_print_site, NULL);
	g_hash_table_foreach(count_blocks, count_print_site, "block");
	count_print_lines();
	fprintf(count_out, "end %u\n", count_window);
	fflush(count_out);
	count_window++;
}

static void count_marker_run(unsigned int vcpu, void *data)
{
	uint32_t code = GPOINTER_TO_UINT(data);

	g_mutex_lock(&count_lock);
	if (code == COUNT_MARK_START)
		count_open_window();
	else if (__atomic_load_n(&count_open, __ATOMIC_ACQUIRE))
		count_close_window();
	g_mutex_unlock(&count_lock);
}

static void count_atomic_run(unsigned int vcpu, void *data)
{
	struct count_site *site = data;

	if (vcpu < COUNT_MAX_VCPUS &&
	    __atomic_load_n(&count_open, __ATOMIC_RELAXED))
		site->runs[vcpu]++;
}

/*
 * One access by @vcpu to @line, in the model: what a MESI-like protocol
 * moves between caches, counted against @site.
 */
static void count_line_access(unsigned int vcpu, uint64_t line,
			      uint64_t vaddr, struct count_mem_site *site,
			      bool store)
{
	struct count_stripe *stripe;
	uint64_t bit = 1ull << vcpu;
	struct count_line *l;
	bool moved = false;

	stripe = &count_stripes[(line ^ (line >> 8)) % COUNT_STRIPES];
	g_mutex_lock(&stripe->lock);
	l = g_hash_table_lookup(stripe->lines, &line);
	if (!l) {
		l = g_malloc0(sizeof(*l) + count_vcpus * sizeof(uint64_t));
		l->line = line;
		l->vaddr = vaddr & ~((1ull << COUNT_LINE_SHIFT) - 1);
		l->first = site->vaddr;
		l->owner = -1;
		g_hash_table_insert(stripe->lines, &l->line, l);
	}
	if (store) {
		/* Other copies are invalidated: a request for ownership. */
		moved = l->holders & ~bit;
		l->holders = bit;
		l->owner = vcpu;
		l->writers |= bit;
	} else if (!(l->holders & bit)) {
		/* A miss served by the cache holding it modified: HITM. */
		moved = l->owner >= 0;
		l->owner = -1;
		l->holders |= bit;
	}
	if (moved) {
		l->transfers[vcpu]++;
		l->last = site->vaddr;
	}
	g_mutex_unlock(&stripe->lock);
	/* Only this vCPU's thread writes its slot. */
	if (moved)
		site->transfers[vcpu]++;
}

static void count_mem_run(unsigned int vcpu, qemu_plugin_meminfo_t info,
			  uint64_t vaddr, void *data)
{
	struct count_mem_site *site = data;
	struct qemu_plugin_hwaddr *hw;
	uint64_t pa;

	if (vcpu >= count_vcpus ||
	    !__atomic_load_n(&count_open, __ATOMIC_RELAXED))
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;
	pa = qemu_plugin_hwaddr_phys_addr(hw);
	count_line_access(vcpu, pa >> COUNT_LINE_SHIFT, vaddr, site,
			  site->atomic || qemu_plugin_mem_is_store(info));
}

/* A block of a module: its runs count its instructions, not its runs. */
struct count_block {
	struct count_site site;
	uint64_t insns;
};

static void count_block_run(unsigned int vcpu, void *data)
{
	struct count_block *block = data;

	if (vcpu < COUNT_MAX_VCPUS &&
	    __atomic_load_n(&count_open, __ATOMIC_RELAXED))
		block->site.runs[vcpu] += block->insns;
}

/* The site at vaddr in table, made of size bytes if new. */
static struct count_site *count_site_of(GHashTable *table, uint64_t vaddr,
					size_t size)
{
	struct count_site *site;

	g_mutex_lock(&count_lock);
	site = g_hash_table_lookup(table, &vaddr);
	if (!site) {
		site = g_malloc0(size);
		site->vaddr = vaddr;
		g_hash_table_insert(table, &site->vaddr, site);
	}
	g_mutex_unlock(&count_lock);
	return site;
}

static void count_insn(struct qemu_plugin_insn *insn)
{
	uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
	uint8_t bytes[16];
	uint32_t marker;
	size_t len;

	len = qemu_plugin_insn_data(insn, bytes, sizeof(bytes));
	if (count_lines) {
		struct count_mem_site *site;

		site = (struct count_mem_site *)count_site_of(count_mem_sites,
			vaddr, sizeof(*site) + count_vcpus * sizeof(uint64_t));
		site->atomic = count_is_atomic(bytes, len);
		qemu_plugin_register_vcpu_mem_cb(insn, count_mem_run,
			QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, site);
	}
	marker = count_marker(bytes, len);
	if (marker)
		qemu_plugin_register_vcpu_insn_exec_cb(insn, count_marker_run,
			QEMU_PLUGIN_CB_NO_REGS, GUINT_TO_POINTER(marker));
	else if (count_is_atomic(bytes, len))
		qemu_plugin_register_vcpu_insn_exec_cb(insn, count_atomic_run,
			QEMU_PLUGIN_CB_NO_REGS,
			count_site_of(count_sites, vaddr,
				      sizeof(struct count_site)));
}

static void count_tb_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	qemu_plugin_u64 counter;

	/* A block never mixes kernel and user mode: count it whole. */
	counter = count_is_kernel(vaddr) ? count_kernel : count_user;
	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb,
			QEMU_PLUGIN_INLINE_ADD_U64, counter, n);
	if (count_modules && vaddr >= count_modules) {
		struct count_block *block;

		/* A block translated again at vaddr may differ in length. */
		block = (struct count_block *)count_site_of(count_blocks,
			vaddr, sizeof(*block));
		block->insns = n;
		qemu_plugin_register_vcpu_tb_exec_cb(tb, count_block_run,
			QEMU_PLUGIN_CB_NO_REGS, block);
	}
	for (i = 0; i < n; i++)
		count_insn(qemu_plugin_tb_get_insn(tb, i));
}

static void count_exit(qemu_plugin_id_t id, void *data)
{
	if (count_out)
		fclose(count_out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strncmp(argv[i], "modules=", 8))
			count_modules = g_ascii_strtoull(argv[i] + 8, NULL, 0);
		else if (!strcmp(argv[i], "lines=1"))
			count_lines = true;
	if (!path) {
		fprintf(stderr, "ovpn-count: usage: out=<file>\n");
		return -1;
	}
	if (info->system.max_vcpus > COUNT_MAX_VCPUS) {
		fprintf(stderr, "ovpn-count: at most %d vCPUs\n",
			COUNT_MAX_VCPUS);
		return -1;
	}
	count_out = fopen(path, "w");
	if (!count_out) {
		perror(path);
		return -1;
	}

	count_board = qemu_plugin_scoreboard_new(sizeof(struct count_insns));
	count_kernel = qemu_plugin_scoreboard_u64_in_struct(count_board,
							    struct count_insns,
							    kernel);
	count_user = qemu_plugin_scoreboard_u64_in_struct(count_board,
							  struct count_insns,
							  user);
	count_sites = g_hash_table_new(g_int64_hash, g_int64_equal);
	count_blocks = g_hash_table_new(g_int64_hash, g_int64_equal);
	count_mem_sites = g_hash_table_new(g_int64_hash, g_int64_equal);
	count_vcpus = info->system.max_vcpus;
	for (i = 0; i < COUNT_STRIPES; i++) {
		g_mutex_init(&count_stripes[i].lock);
		count_stripes[i].lines = g_hash_table_new_full(g_int64_hash,
			g_int64_equal, NULL, g_free);
	}

	qemu_plugin_register_vcpu_tb_trans_cb(id, count_tb_translated);
	qemu_plugin_register_atexit_cb(id, count_exit, NULL);
	return 0;
}
