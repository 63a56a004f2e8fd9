/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OpenVPN data channel offload - module
 *
 * What the module shares with every file: its workqueue.
 */

#ifndef _NET_OVPN_MAIN_H_
#define _NET_OVPN_MAIN_H_

#include <linux/workqueue.h>

/*
 * The module's own workqueue: every deferred teardown (RCU-deferred object
 * freeing, peer removal requested from atomic context, keepalive) runs
 * here, so that module exit can drain it before the code goes away.
 */
extern struct workqueue_struct *ovpn_wq;

#endif /* _NET_OVPN_MAIN_H_ */
