// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's own fault: a module whose only job is to make the kernel log
 * a WARNING when it is loaded, so the lab's self-test can prove that a
 * guest warning fails a run.  Never part of the driver.
 */

#include <linux/bug.h>
#include <linux/module.h>

static int __init lab_warn_init(void)
{
	WARN(1, "ovpn lab: deliberate warning from the lab self-test\n");
	/* Nothing to keep loaded. */
	return -EAGAIN;
}
module_init(lab_warn_init);

MODULE_DESCRIPTION("ovpn lab self-test: emits one kernel warning");
MODULE_LICENSE("GPL");
