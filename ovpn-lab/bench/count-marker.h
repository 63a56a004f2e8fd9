/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The markers the ovpn-count QEMU plugin recognises: long NOPs with a
 * magic displacement, harmless without the plugin.  Everything a vCPU runs
 * between a start and an end is one counting window.
 */

#ifndef _OVPN_COUNT_MARKER_H_
#define _OVPN_COUNT_MARKER_H_

/* nopl 0x4f560001(%rax) */
static inline void count_mark_start(void)
{
	asm volatile(".byte 0x0f, 0x1f, 0x80, 0x01, 0x00, 0x56, 0x4f"
		     ::: "memory");
}

/* nopl 0x4f560002(%rax) */
static inline void count_mark_end(void)
{
	asm volatile(".byte 0x0f, 0x1f, 0x80, 0x02, 0x00, 0x56, 0x4f"
		     ::: "memory");
}

#endif /* _OVPN_COUNT_MARKER_H_ */
