// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenVPN data channel offload - KUnit tests of the TCP option walk
 *
 * Included by mss.c when CONFIG_OVPN_KUNIT_TEST is set, so that the tests
 * reach ovpn_mss_option(), which finds the MSS option a SYN's clamping
 * rewrites.  The options come from the packet, from either end of the
 * tunnel: a malformed list must end the walk, never lead it past the
 * options.  Run with
 *   tools/testing/kunit/kunit.py run --kunitconfig=drivers/net/ovpn
 */

#include <kunit/test.h>

/* The MSS option where a SYN usually carries it, and after others. */
static void ovpn_mss_option_found(struct kunit *test)
{
	u8 first[] = { TCPOPT_MSS, TCPOLEN_MSS, 0x05, 0xb4 };
	u8 later[] = { TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK_PERM, 2,
		       TCPOPT_WINDOW, 3, 7, TCPOPT_MSS, TCPOLEN_MSS, 0x05,
		       0x8c, TCPOPT_NOP };

	KUNIT_EXPECT_PTR_EQ(test, ovpn_mss_option(first, sizeof(first)),
			    &first[2]);
	KUNIT_EXPECT_PTR_EQ(test, ovpn_mss_option(later, sizeof(later)),
			    &later[9]);
}

/* No MSS option: none, after the end-of-list, or of the wrong length. */
static void ovpn_mss_option_absent(struct kunit *test)
{
	u8 none[] = { TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK_PERM, 2 };
	u8 ended[] = { TCPOPT_EOL, TCPOPT_MSS, TCPOLEN_MSS, 0x05, 0xb4 };
	u8 bad_len[] = { TCPOPT_MSS, 3, 0x05, TCPOPT_NOP };

	KUNIT_EXPECT_NULL(test, ovpn_mss_option(none, sizeof(none)));
	KUNIT_EXPECT_NULL(test, ovpn_mss_option(ended, sizeof(ended)));
	KUNIT_EXPECT_NULL(test, ovpn_mss_option(bad_len, sizeof(bad_len)));
}

/* Lengths that would loop forever or reach past the options. */
static void ovpn_mss_option_malformed(struct kunit *test)
{
	u8 zero_len[] = { TCPOPT_WINDOW, 0, TCPOPT_MSS, TCPOLEN_MSS, 5, 0 };
	u8 one_len[] = { TCPOPT_WINDOW, 1, TCPOPT_MSS, TCPOLEN_MSS, 5, 0 };
	u8 past_end[] = { TCPOPT_WINDOW, 3, 7, TCPOPT_MSS, TCPOLEN_MSS, 5 };
	u8 no_len[] = { TCPOPT_NOP, TCPOPT_NOP, TCPOPT_NOP, TCPOPT_MSS };

	KUNIT_EXPECT_NULL(test, ovpn_mss_option(zero_len, sizeof(zero_len)));
	KUNIT_EXPECT_NULL(test, ovpn_mss_option(one_len, sizeof(one_len)));
	KUNIT_EXPECT_NULL(test, ovpn_mss_option(past_end, sizeof(past_end)));
	KUNIT_EXPECT_NULL(test, ovpn_mss_option(no_len, sizeof(no_len)));
}

static struct kunit_case ovpn_mss_cases[] = {
	KUNIT_CASE(ovpn_mss_option_found),
	KUNIT_CASE(ovpn_mss_option_absent),
	KUNIT_CASE(ovpn_mss_option_malformed),
	{}
};

static struct kunit_suite ovpn_mss_suite = {
	.name = "ovpn-mss",
	.test_cases = ovpn_mss_cases,
};

kunit_test_suite(ovpn_mss_suite);
