// SPDX-License-Identifier: GPL-2.0
/*
 * ovpn-cli - drive the ovpn module from the selftests.
 *
 * rtnetlink creates, removes and inspects ovpn links; the "ovpn" generic
 * netlink family carries everything else.
 *
 * Exit status: 0 on success, 1 on a usage error or a local failure (message
 * on stderr), 2 when the kernel refused the request.  A refusal is printed on
 * stdout as one line, "ERR <ENAME> <extack message or ->".
 *
 * Key file of new_key, a format of this tool: text where blank lines and
 * lines starting with '#' are skipped, and exactly four lines of hex digits
 * (either case) remain:
 *
 *	key A		32 bytes, 64 digits
 *	key B		32 bytes
 *	nonce tail A	8 bytes, 16 digits
 *	nonce tail B	8 bytes
 *
 * A cipher takes the first 16, 24 or 32 bytes of each key.  Key direction 0
 * encrypts with key A and tail A and decrypts with key B and tail B;
 * direction 1 is the other way round, so two ends given the same file and
 * opposite directions understand each other.  In the epoch data format
 * (new_key's "epoch") each direction's whole 32-byte key is its first
 * epoch secret, as openvpn takes it from its key material, the cipher key
 * sent only gives the key size, and the nonce tails are not sent.
 *
 * Peers file of new_multi_peer: one peer a line,
 *
 *	<peer_id> <raddr> <rport> <vpn4|-> <vpn6|-> [tx_id]
 *
 * where '#' starts a comment and blank lines are skipped.  That of
 * tcp_listen has no <rport>: a connection belongs to the first peer not
 * added yet whose <raddr> is its source address, whatever its port.
 *
 * On a TCP socket a peer was added on, recv() gives one OpenVPN record at a
 * time, 2-byte big-endian length included, and send() takes one such
 * record; the kernel keeps the data records to itself.
 */

/* strchrnul(), strerrorname_np() */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/ovpn.h>
#include <linux/rtnetlink.h>

#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define CLI_NAME		"ovpn-cli"
#define CLI_REPLY_TIMEOUT_MS	5000
#define CLI_LISTEN_DEFAULT_S	10
/* listen_mcast's receive buffer: a burst of thousands of notifications */
#define CLI_LISTEN_RCVBUF	(8 << 20)
#define CLI_LISTEN_MAX_S	86400
#define CLI_MAX_GRPS		32
#define CLI_MAX_OPS		256
#define CLI_EXTACK_LEN		256
#define CLI_LINE_MAX		1024
#define CLI_VALUE_MAX		128
#define CLI_MSG_SLACK		128
#define CLI_CTRL_SHOW		8
#define CLI_PEER_COLS		6

/* TCP: records shown and sent, listen backlog */
#define CLI_RECORD_BUF		65600
#define CLI_RECORD_SHOW		64
#define CLI_RECORD_MAX		0xffff
#define CLI_SEND_WAIT_MS	10000
#define CLI_SEND_PAUSE_MS	10
#define CLI_TCP_BACKLOG		16

/* key material: what a key file holds */
#define CLI_KEY_LINES		4
#define CLI_KEY_FILE_LEN	32

/* the largest attribute set nested in a reply or a notification */
#define CLI_NEST_MAX		OVPN_A_PEER_MAX
static_assert((int)OVPN_A_KEYCONF_MAX <= (int)CLI_NEST_MAX, "nest max");

/* kernel-internal errno that may still leak to userspace */
#define CLI_ENOTSUPP		524

enum cli_rc {
	RC_OK = 0,
	RC_USAGE = 1,
	RC_LOCAL = 1,
	RC_KERNEL = 2,
};

static const char * const ovpn_mode_names[] = {
	[OVPN_MODE_P2P] = "p2p",
	[OVPN_MODE_MP] = "mp",
};

/* OVPN_CMD_* in their uapi order, which is fixed */
static const char * const ovpn_cmd_names[] = {
	[OVPN_CMD_PEER_NEW] = "peer_new", "peer_set", "peer_get", "peer_del",
	"peer_del_ntf", "key_new", "key_get", "key_swap", "key_swap_ntf",
	"key_del", "peer_float_ntf",
};

static_assert(ARRAY_SIZE(ovpn_cmd_names) == OVPN_CMD_MAX + 1, "cmd names");

static const char * const ovpn_slot_names[] = {
	[OVPN_KEY_SLOT_PRIMARY] = "primary",
	[OVPN_KEY_SLOT_SECONDARY] = "secondary",
};

static const char * const ovpn_alg_names[] = {
	[OVPN_CIPHER_ALG_NONE] = "none",
	[OVPN_CIPHER_ALG_AES_GCM] = "aes-gcm",
	[OVPN_CIPHER_ALG_CHACHA20_POLY1305] = "chacha20-poly1305",
};

static const char * const ovpn_reason_names[] = {
	[OVPN_DEL_PEER_REASON_TEARDOWN] = "teardown",
	[OVPN_DEL_PEER_REASON_USERSPACE] = "userspace",
	[OVPN_DEL_PEER_REASON_EXPIRED] = "expired",
	[OVPN_DEL_PEER_REASON_TRANSPORT_ERROR] = "transport_error",
	[OVPN_DEL_PEER_REASON_TRANSPORT_DISCONNECT] = "transport_disconnect",
};

/* new_key ciphers; "none" lets a test see the kernel refuse it */
static const struct {
	const char *name;
	unsigned int alg;
	unsigned int key_len;
} cli_ciphers[] = {
	{ "aes128", OVPN_CIPHER_ALG_AES_GCM, 16 },
	{ "aes192", OVPN_CIPHER_ALG_AES_GCM, 24 },
	{ "aes256", OVPN_CIPHER_ALG_AES_GCM, 32 },
	{ "chachapoly", OVPN_CIPHER_ALG_CHACHA20_POLY1305, 32 },
	{ "none", OVPN_CIPHER_ALG_NONE, 32 },
};

/* options of the peer and key commands, each allowed by some of them */
enum {
	CLI_OPT_REMOTE = 1 << 0,
	CLI_OPT_VPN = 1 << 1,
	CLI_OPT_TX_ID = 1 << 2,
	CLI_OPT_LOCAL = 1 << 3,
	CLI_OPT_KEEPALIVE = 1 << 4,
	CLI_OPT_MARK = 1 << 5,
	CLI_OPT_STAY = 1 << 6,
	CLI_OPT_CTRL = 1 << 7,
	CLI_OPT_MSSFIX = 1 << 8,
};

#define CLI_NEW_PEER_OPTS	(CLI_OPT_VPN | CLI_OPT_TX_ID | \
				 CLI_OPT_LOCAL | CLI_OPT_KEEPALIVE | \
				 CLI_OPT_MARK | CLI_OPT_STAY | CLI_OPT_MSSFIX)
#define CLI_SET_PEER_OPTS	(CLI_OPT_REMOTE | CLI_OPT_VPN | \
				 CLI_OPT_TX_ID | CLI_OPT_LOCAL | \
				 CLI_OPT_KEEPALIVE | CLI_OPT_MSSFIX)
#define CLI_MULTI_PEER_OPTS	(CLI_OPT_KEEPALIVE | CLI_OPT_MARK | \
				 CLI_OPT_STAY)
#define CLI_NEW_TCP_PEER_OPTS	(CLI_OPT_VPN | CLI_OPT_TX_ID | \
				 CLI_OPT_KEEPALIVE | CLI_OPT_CTRL | \
				 CLI_OPT_STAY | CLI_OPT_MSSFIX)
#define CLI_TCP_LISTEN_OPTS	(CLI_OPT_CTRL | CLI_OPT_STAY)

static const struct {
	const char *name;
	int nargs;
	unsigned int bit;
} cli_opt_names[] = {
	{ "remote", 2, CLI_OPT_REMOTE },
	{ "vpn", 1, CLI_OPT_VPN },
	{ "tx_id", 1, CLI_OPT_TX_ID },
	{ "local", 1, CLI_OPT_LOCAL },
	{ "keepalive", 2, CLI_OPT_KEEPALIVE },
	{ "mark", 1, CLI_OPT_MARK },
	{ "stay", 0, CLI_OPT_STAY },
	{ "ctrl", 1, CLI_OPT_CTRL },
	{ "mssfix", 1, CLI_OPT_MSSFIX },
};

/**
 * struct cli_nl - a netlink socket and the state of its current request
 * @sk: libnl socket
 * @cb: callbacks, all bound to this structure
 * @parse: called for every reply that is not an ACK, an error or a DONE;
 *	returns 0 or -1 (message already printed)
 * @parse_arg: second argument of @parse
 * @done: the request got its ACK, its error or the end of its dump
 * @failed: @parse rejected a reply
 * @error: positive errno reported by the kernel, 0 if none
 * @has_offs: @offs is set
 * @offs: extack offset of the offending attribute within the request
 * @has_miss: @miss_type is set
 * @miss_type: extack type of the missing attribute
 * @msg: extack message, empty if none
 */
struct cli_nl {
	struct nl_sock *sk;
	struct nl_cb *cb;
	int (*parse)(struct nlmsghdr *nlh, void *arg);
	void *parse_arg;
	bool done;
	bool failed;
	int error;
	bool has_offs;
	unsigned int offs;
	bool has_miss;
	unsigned int miss_type;
	char msg[CLI_EXTACK_LEN];
};

struct cli_family {
	bool found;
	char name[GENL_NAMSIZ];
	unsigned int id;
	unsigned int version;
	unsigned int maxattr;
	unsigned int n_grps;
	struct {
		char name[GENL_NAMSIZ];
		unsigned int id;
	} grps[CLI_MAX_GRPS];
	unsigned int n_ops;
	struct {
		unsigned int cmd;
		unsigned int flags;
	} ops[CLI_MAX_OPS];
};

struct cli_link {
	bool seen;
	bool is_ovpn;
	bool has_mode;
	unsigned int mode;
};

/**
 * struct cli_addr - an IP address from the command line or a file
 * @family: AF_INET or AF_INET6, 0 for none
 * @v4: the address when @family is AF_INET, network order
 * @v6: the address when @family is AF_INET6
 * @has_scope: a "%scope" suffix was given (IPv6 only)
 * @scope: interface index of that scope
 */
struct cli_addr {
	int family;
	struct in_addr v4;
	struct in6_addr v6;
	bool has_scope;
	unsigned int scope;
};

/**
 * struct cli_opts - the options of a command line, see cli_opt_names
 * @given: CLI_OPT_* seen
 * @remote: remote address (CLI_OPT_REMOTE)
 * @rport: remote port (CLI_OPT_REMOTE)
 * @vpn4: VPN IPv4 address, if @vpn4.family is set (CLI_OPT_VPN)
 * @vpn6: VPN IPv6 address, if @vpn6.family is set (CLI_OPT_VPN)
 * @local: local address (CLI_OPT_LOCAL)
 * @ka_interval: keepalive interval (CLI_OPT_KEEPALIVE)
 * @ka_timeout: keepalive timeout (CLI_OPT_KEEPALIVE)
 * @tx_id: peer id of outgoing packets (CLI_OPT_TX_ID)
 * @mark: SO_MARK of the transport socket (CLI_OPT_MARK)
 * @mssfix: largest outer packet TCP SYNs are clamped for (CLI_OPT_MSSFIX)
 * @rec: a control record, length prefix included, allocated (CLI_OPT_CTRL)
 * @rec_len: bytes in @rec
 */
struct cli_opts {
	unsigned int given;
	struct cli_addr remote;
	unsigned long rport;
	struct cli_addr vpn4;
	struct cli_addr vpn6;
	struct cli_addr local;
	unsigned long ka_interval;
	unsigned long ka_timeout;
	unsigned long tx_id;
	unsigned long mark;
	unsigned long mssfix;
	unsigned char *rec;
	size_t rec_len;
};

/* how far a TCP connection of a peer is */
enum cli_conn {
	CLI_CONN_NONE,		/* none yet: the peer is not added */
	CLI_CONN_OPEN,		/* added, its records are printed */
	CLI_CONN_QUIET,		/* end of stream or error seen, still open */
	CLI_CONN_CLOSED,	/* closed on SIGUSR1 */
};

/**
 * struct cli_peer - the peer of a PEER_* request
 * @id: peer id
 * @fd: transport socket, -1 to send no OVPN_A_PEER_SOCKET
 * @conn: state of @fd, a TCP connection (new_tcp_peer, tcp_listen)
 * @o: everything else; the remote address alone is sent only when
 *	@o.given has CLI_OPT_REMOTE
 */
struct cli_peer {
	unsigned long id;
	int fd;
	enum cli_conn conn;
	struct cli_opts o;
};

/* new_key's data formats: which key directions carry an epoch secret */
enum { CLI_EPOCH_NONE, CLI_EPOCH_BOTH, CLI_EPOCH_ENCRYPT_ONLY };
static const char *const cli_formats[] = {
	[CLI_EPOCH_NONE] = "v2",
	[CLI_EPOCH_BOTH] = "epoch",
	[CLI_EPOCH_ENCRYPT_ONLY] = "epoch-encrypt-only",
};

/**
 * struct cli_key - the key slot of a KEY_* request
 * @peer_id: id of the peer
 * @has_slot: send @slot
 * @slot: OVPN_KEY_SLOT_* or any number
 * @cipher: index in cli_ciphers; -1 to send no key id, cipher or material
 * @key_id: key id
 * @dir: 0 encrypts with key A and decrypts with key B, 1 the other way
 * @epoch: CLI_EPOCH_*: which directions get an epoch secret
 * @key: keys A and B
 * @tail: nonce tails A and B
 */
struct cli_key {
	unsigned long peer_id;
	bool has_slot;
	unsigned long slot;
	int cipher;
	unsigned long key_id;
	unsigned long dir;
	unsigned long epoch;
	unsigned char key[2][CLI_KEY_FILE_LEN];
	unsigned char tail[2][OVPN_NONCE_TAIL_SIZE];
};

/**
 * struct cli_req - a request of the ovpn family
 * @cmd: OVPN_CMD_* or any number
 * @flags: extra netlink flags (NLM_F_DUMP)
 * @has_ifindex: send OVPN_A_IFINDEX, always first
 * @ifindex: its value
 * @body: attributes sent after OVPN_A_IFINDEX, NULL for none; built before
 *	the family id is known, copied into the request
 * @parse: handler of each reply, may be NULL
 * @arg: second argument of @parse
 */
struct cli_req {
	unsigned int cmd;
	int flags;
	bool has_ifindex;
	unsigned int ifindex;
	struct nl_msg *body;
	int (*parse)(struct nlmsghdr *nlh, void *arg);
	void *arg;
};

/**
 * struct cli_tcp - the TCP connections of new_tcp_peer or tcp_listen
 * @req: PEER_NEW for the device
 * @o: ctrl and stay
 * @peers: the peers, each with the connection it is added on
 * @n: entries in @peers
 * @added: peers added so far
 * @lfd: listening sockets, IPv4 and IPv6, -1 for none
 * @sig: signal descriptor of a stay, -1 for none
 * @tag: the lines about a connection name its peer
 */
struct cli_tcp {
	struct cli_req req;
	struct cli_opts o;
	struct cli_peer *peers;
	int n;
	int added;
	int lfd[2];
	int sig;
	bool tag;
};

enum cli_field_kind {
	CLI_F_NUM,
	CLI_F_S32,
	CLI_F_BE16,
	CLI_F_IP,
	CLI_F_ENUM,
	CLI_F_REMOTE,
};

/**
 * struct cli_field - one "key=value" of a printed line, left out when absent
 * @key: the key
 * @attr: attribute holding the value
 * @kind: how to read and print it; CLI_F_REMOTE combines the remote
 *	address, scope and port attributes of the peer set
 * @top: @attr is a top-level attribute rather than one of the nest
 * @names: names of the values of a CLI_F_ENUM, the number if out of range
 * @n_names: entries in @names
 */
struct cli_field {
	const char *key;
	unsigned int attr;
	enum cli_field_kind kind;
	bool top;
	const char * const *names;
	size_t n_names;
};

#define CLI_FIELD(k, a, t)	{ .key = (k), .attr = (a), .kind = (t) }
/* a CLI_F_ENUM named by ovpn_<n>_names */
#define CLI_ENUM(k, a, n)	{ .key = (k), .attr = (a), .kind = CLI_F_ENUM, \
				  .names = ovpn_##n##_names, \
				  .n_names = ARRAY_SIZE(ovpn_##n##_names) }
#define CLI_IFINDEX		{ .key = "ifindex", .attr = OVPN_A_IFINDEX, \
				  .kind = CLI_F_NUM, .top = true }

/**
 * struct cli_view - how a reply or a notification is printed
 * @prefix: start of the line
 * @cmd: the notification it prints, unused for replies
 * @nest: top-level attribute holding the nest of @fields
 * @maxattr: highest attribute of that nest
 * @fields: the values, in the order printed
 * @n_fields: entries in @fields
 */
struct cli_view {
	const char *prefix;
	unsigned int cmd;
	unsigned int nest;
	unsigned int maxattr;
	const struct cli_field *fields;
	size_t n_fields;
};

/**
 * struct cli_listen - progress of listen_mcast
 * @seen: notifications printed
 * @count: notifications to print before leaving
 */
struct cli_listen {
	unsigned long seen;
	unsigned long count;
};

struct cli_cmd {
	const char *name;
	const char *args;
	const char *help;
	int min_args;
	int max_args;
	int (*handler)(const struct cli_cmd *cmd, int argc, char **argv);
};

/* glibc names every errno but the kernel-internal ENOTSUPP */
static const char *errno_name(int err)
{
	static char buf[16];
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	if (err == CLI_ENOTSUPP)
		return "ENOTSUPP";
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

/* Strictly decimal, no sign, no blanks, at most @max. */
static int parse_uint(const char *str, unsigned long max, unsigned long *val)
{
	char *end;

	if (!isdigit((unsigned char)str[0]))
		return -1;

	errno = 0;
	*val = strtoul(str, &end, 10);
	if (errno || *end || *val > max)
		return -1;

	return 0;
}

/* One of @names, as its index, or a decimal number up to @max. */
static int parse_name(const char *str, const char * const *names, size_t n,
		      unsigned long max, unsigned long *val)
{
	for (*val = 0; *val < n; (*val)++)
		if (names[*val] && !strcmp(str, names[*val]))
			return 0;

	return parse_uint(str, max, val);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Pairs of hex digits, none at all included, into at most @max bytes. */
static int parse_hex(const char *str, unsigned char *buf, size_t max,
		     size_t *len)
{
	size_t n = strlen(str), i;
	int hi, lo;

	if (n % 2 || n / 2 > max)
		return -1;

	for (i = 0; i < n / 2; i++) {
		hi = hex_digit(str[2 * i]);
		lo = hex_digit(str[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		buf[i] = hi << 4 | lo;
	}

	*len = n / 2;
	return 0;
}

/* IPv4, or IPv6 with an optional "%<interface name or index>" scope. */
static int parse_addr(const char *str, struct cli_addr *addr)
{
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
	unsigned long scope;
	char *pct;

	memset(addr, 0, sizeof(*addr));
	if (inet_pton(AF_INET, str, &addr->v4) == 1) {
		addr->family = AF_INET;
		return 0;
	}

	if (snprintf(buf, sizeof(buf), "%s", str) >= (int)sizeof(buf))
		return -1;

	pct = strchr(buf, '%');
	if (pct) {
		*pct++ = '\0';
		if (parse_uint(pct, UINT_MAX, &scope)) {
			scope = if_nametoindex(pct);
			if (!scope)
				return -1;
		}
		addr->has_scope = true;
		addr->scope = scope;
	}

	if (inet_pton(AF_INET6, buf, &addr->v6) != 1)
		return -1;

	addr->family = AF_INET6;
	return 0;
}

/* parse_uint() of an argument, telling what is wrong with it. */
static int arg_uint(const char *what, const char *str, unsigned long max,
		    unsigned long *val)
{
	if (!parse_uint(str, max, val))
		return 0;

	fprintf(stderr, "%s: bad %s '%s'\n", CLI_NAME, what, str);
	return -1;
}

/* if_nametoindex(), telling when there is no such interface. */
static int arg_ifindex(const char *name, unsigned int *ifindex)
{
	*ifindex = if_nametoindex(name);
	if (*ifindex)
		return 0;

	fprintf(stderr, "%s: unknown interface '%s'\n", CLI_NAME, name);
	return -1;
}

static void cli_print_help(FILE *out, const struct cli_cmd *cmd,
			   const char *indent)
{
	const char *s, *e;

	fprintf(out, "%s%s%s%s\n", indent, cmd->name, cmd->args[0] ? " " : "",
		cmd->args);

	for (s = cmd->help; s && *s; s = *e ? e + 1 : e) {
		e = strchrnul(s, '\n');
		fprintf(out, "%s    %.*s\n", indent, (int)(e - s), s);
	}
}

static int cmd_usage(const struct cli_cmd *cmd)
{
	fprintf(stderr, "usage: %s ", CLI_NAME);
	cli_print_help(stderr, cmd, "");
	return RC_USAGE;
}

static void cli_nl_extack(struct cli_nl *nl, void *tlvs, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct nlattr *attr;

	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, tlvs, len, NULL) < 0)
		return;

	attr = tb[NLMSGERR_ATTR_MSG];
	if (attr && nla_len(attr) > 0)
		snprintf(nl->msg, sizeof(nl->msg), "%.*s",
			 (int)strnlen(nla_data(attr), nla_len(attr)),
			 (char *)nla_data(attr));

	attr = tb[NLMSGERR_ATTR_OFFS];
	if (attr && nla_len(attr) >= (int)sizeof(__u32)) {
		nl->has_offs = true;
		nl->offs = nla_get_u32(attr);
	}

	attr = tb[NLMSGERR_ATTR_MISS_TYPE];
	if (attr && nla_len(attr) >= (int)sizeof(__u32)) {
		nl->has_miss = true;
		nl->miss_type = nla_get_u32(attr);
	}
}

/*
 * NLMSG_ERROR with a non-zero error.  libnl hands over the payload only; the
 * header sits right before it.  The extack TLVs follow the echoed request,
 * which is cut down to its header when NLM_F_CAPPED is set.
 */
static int cli_nl_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *err,
			 void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)err - NLMSG_HDRLEN);
	struct cli_nl *nl = arg;
	size_t echo, off;

	(void)nla;

	nl->error = err->error < 0 ? -err->error : err->error;
	nl->done = true;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;

	if (nlh->nlmsg_flags & NLM_F_CAPPED)
		echo = sizeof(err->msg);
	else
		echo = err->msg.nlmsg_len;
	off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(err->error) + echo);
	if (echo < sizeof(err->msg) || off >= nlh->nlmsg_len)
		return NL_STOP;

	cli_nl_extack(nl, (char *)nlh + off, nlh->nlmsg_len - off);
	return NL_STOP;
}

static int cli_nl_ack_cb(struct nl_msg *msg, void *arg)
{
	struct cli_nl *nl = arg;

	(void)msg;

	nl->done = true;
	return NL_STOP;
}

/* NLMSG_DONE: a dump that failed midway carries its errno and extack here. */
static int cli_nl_finish_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int len = nlmsg_datalen(nlh);
	struct cli_nl *nl = arg;
	int off, err;

	nl->done = true;

	if (len < (int)sizeof(err))
		return NL_STOP;

	memcpy(&err, nlmsg_data(nlh), sizeof(err));
	if (err >= 0)
		return NL_STOP;

	nl->error = -err;
	off = NLMSG_ALIGN(sizeof(err));
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && len > off)
		cli_nl_extack(nl, (char *)nlmsg_data(nlh) + off, len - off);

	return NL_STOP;
}

static int cli_nl_valid_cb(struct nl_msg *msg, void *arg)
{
	struct cli_nl *nl = arg;

	if (nl->parse && nl->parse(nlmsg_hdr(msg), nl->parse_arg))
		nl->failed = true;

	return NL_OK;
}

static int cli_nl_noseq_cb(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;

	return NL_OK;
}

static void cli_nl_close(struct cli_nl *nl)
{
	nl_cb_put(nl->cb);
	nl_socket_free(nl->sk);
	nl->cb = NULL;
	nl->sk = NULL;
}

static int cli_nl_open(struct cli_nl *nl, int protocol)
{
	int one = 1;
	int ret;

	memset(nl, 0, sizeof(*nl));

	nl->sk = nl_socket_alloc();
	nl->cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!nl->sk || !nl->cb) {
		fprintf(stderr, "%s: out of memory\n", CLI_NAME);
		goto err;
	}

	ret = nl_connect(nl->sk, protocol);
	if (ret < 0) {
		fprintf(stderr, "%s: cannot open netlink socket: %s\n",
			CLI_NAME, nl_geterror(ret));
		goto err;
	}

	if (setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		       &one, sizeof(one)) < 0) {
		fprintf(stderr, "%s: cannot enable NETLINK_EXT_ACK: %s\n",
			CLI_NAME, strerror(errno));
		goto err;
	}

	nl_socket_enable_msg_peek(nl->sk);
	nl_cb_err(nl->cb, NL_CB_CUSTOM, cli_nl_err_cb, nl);
	nl_cb_set(nl->cb, NL_CB_ACK, NL_CB_CUSTOM, cli_nl_ack_cb, nl);
	nl_cb_set(nl->cb, NL_CB_FINISH, NL_CB_CUSTOM, cli_nl_finish_cb, nl);
	nl_cb_set(nl->cb, NL_CB_VALID, NL_CB_CUSTOM, cli_nl_valid_cb, nl);
	return 0;

err:
	cli_nl_close(nl);
	return -1;
}

static void cli_nl_print_error(const struct cli_nl *nl)
{
	printf("ERR %s %s\n", errno_name(nl->error),
	       nl->msg[0] ? nl->msg : "-");

	if (nl->has_offs)
		fprintf(stderr, "%s: offending attribute at offset %u\n",
			CLI_NAME, nl->offs);
	if (nl->has_miss)
		fprintf(stderr, "%s: missing attribute type %u\n",
			CLI_NAME, nl->miss_type);
}

static int cli_build_failed(struct nl_msg *msg)
{
	nlmsg_free(msg);
	fprintf(stderr, "%s: cannot build the request\n", CLI_NAME);
	return RC_LOCAL;
}

/**
 * cli_nl_request - send a request and collect the whole answer
 * @nl: open socket
 * @msg: request, consumed
 * @parse: handler of each reply message, may be NULL
 * @arg: second argument of @parse
 *
 * Return: RC_OK, RC_KERNEL once the ERR line is printed, or RC_LOCAL.
 */
static int cli_nl_request(struct cli_nl *nl, struct nl_msg *msg,
			  int (*parse)(struct nlmsghdr *nlh, void *arg),
			  void *arg)
{
	struct pollfd pfd = { .events = POLLIN };
	int ret;

	nl->parse = parse;
	nl->parse_arg = arg;
	nl->done = false;
	nl->failed = false;
	nl->error = 0;
	nl->has_offs = false;
	nl->has_miss = false;
	nl->msg[0] = '\0';

	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		fprintf(stderr, "%s: cannot send the request: %s\n",
			CLI_NAME, nl_geterror(ret));
		return RC_LOCAL;
	}

	pfd.fd = nl_socket_get_fd(nl->sk);
	while (!nl->done) {
		ret = poll(&pfd, 1, CLI_REPLY_TIMEOUT_MS);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			fprintf(stderr, "%s: poll: %s\n", CLI_NAME,
				strerror(errno));
			return RC_LOCAL;
		}
		if (!ret) {
			fprintf(stderr, "%s: no answer from the kernel\n",
				CLI_NAME);
			return RC_LOCAL;
		}

		/* an error answer makes libnl return < 0 after our callback */
		ret = nl_recvmsgs(nl->sk, nl->cb);
		if (ret < 0 && !nl->done) {
			fprintf(stderr, "%s: cannot receive the answer: %s\n",
				CLI_NAME, nl_geterror(ret));
			return RC_LOCAL;
		}
	}

	if (nl->error) {
		cli_nl_print_error(nl);
		return RC_KERNEL;
	}

	return nl->failed ? RC_LOCAL : RC_OK;
}

/* rtnetlink */

static struct nl_msg *cli_link_msg(int type, int flags, const char *ifname)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nl_msg *msg;

	msg = nlmsg_alloc_simple(type, flags);
	if (!msg)
		return NULL;

	if (nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
	    nla_put_string(msg, IFLA_IFNAME, ifname) < 0) {
		nlmsg_free(msg);
		return NULL;
	}

	return msg;
}

static int cli_link_request(struct nl_msg *msg,
			    int (*parse)(struct nlmsghdr *nlh, void *arg),
			    void *arg)
{
	struct cli_nl nl;
	int ret;

	if (!msg)
		return cli_build_failed(NULL);
	if (cli_nl_open(&nl, NETLINK_ROUTE)) {
		nlmsg_free(msg);
		return RC_LOCAL;
	}

	ret = cli_nl_request(&nl, msg, parse, arg);
	cli_nl_close(&nl);
	return ret;
}

static int cli_new_iface(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct nlattr *linkinfo, *data;
	unsigned long mode = 0;
	bool has_mode = false;
	struct nl_msg *msg;

	if (argc > 2) {
		has_mode = true;
		if (parse_name(argv[2], ovpn_mode_names,
			       ARRAY_SIZE(ovpn_mode_names), 255, &mode)) {
			fprintf(stderr, "%s: bad mode '%s'\n", CLI_NAME,
				argv[2]);
			return cmd_usage(cmd);
		}
	}

	msg = cli_link_msg(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK,
			   argv[1]);
	if (!msg)
		return cli_build_failed(NULL);

	linkinfo = nla_nest_start(msg, IFLA_LINKINFO);
	if (!linkinfo || nla_put_string(msg, IFLA_INFO_KIND, "ovpn") < 0)
		return cli_build_failed(msg);

	if (has_mode) {
		data = nla_nest_start(msg, IFLA_INFO_DATA);
		if (!data || nla_put_u8(msg, IFLA_OVPN_MODE, mode) < 0)
			return cli_build_failed(msg);
		nla_nest_end(msg, data);
	}
	nla_nest_end(msg, linkinfo);

	return cli_link_request(msg, NULL, NULL);
}

static int cli_del_iface(const struct cli_cmd *cmd, int argc, char **argv)
{
	(void)cmd;
	(void)argc;

	return cli_link_request(cli_link_msg(RTM_DELLINK, NLM_F_ACK, argv[1]),
				NULL, NULL);
}

static const struct nla_policy cli_linkinfo_policy[IFLA_INFO_MAX + 1] = {
	[IFLA_INFO_KIND] = { .type = NLA_STRING },
	[IFLA_INFO_DATA] = { .type = NLA_NESTED },
};

static const struct nla_policy cli_ovpn_link_policy[IFLA_OVPN_MAX + 1] = {
	[IFLA_OVPN_MODE] = { .type = NLA_U8 },
};

static int cli_link_parse(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *info[IFLA_INFO_MAX + 1];
	struct nlattr *data[IFLA_OVPN_MAX + 1];
	struct nlattr *tb[IFLA_MAX + 1];
	struct cli_link *link = arg;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return 0;

	if (nlmsg_parse(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX,
			NULL) < 0)
		goto bad;
	link->seen = true;

	if (!tb[IFLA_LINKINFO])
		return 0;
	if (nla_parse_nested(info, IFLA_INFO_MAX, tb[IFLA_LINKINFO],
			     cli_linkinfo_policy) < 0)
		goto bad;
	link->is_ovpn = info[IFLA_INFO_KIND] &&
			!strcmp(nla_get_string(info[IFLA_INFO_KIND]), "ovpn");
	if (!link->is_ovpn || !info[IFLA_INFO_DATA])
		return 0;
	if (nla_parse_nested(data, IFLA_OVPN_MAX, info[IFLA_INFO_DATA],
			     cli_ovpn_link_policy) < 0)
		goto bad;
	if (data[IFLA_OVPN_MODE]) {
		link->has_mode = true;
		link->mode = nla_get_u8(data[IFLA_OVPN_MODE]);
	}
	return 0;

bad:
	fprintf(stderr, "%s: malformed link reply\n", CLI_NAME);
	return -1;
}

static int cli_get_mode(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_link link = {};
	int ret;

	(void)cmd;
	(void)argc;

	ret = cli_link_request(cli_link_msg(RTM_GETLINK, NLM_F_ACK, argv[1]),
			       cli_link_parse, &link);
	if (ret)
		return ret;

	if (!link.seen) {
		fprintf(stderr, "%s: no link in the reply\n", CLI_NAME);
		return RC_LOCAL;
	}
	if (!link.is_ovpn) {
		printf("ERR %s not an ovpn device\n", errno_name(EINVAL));
		return RC_KERNEL;
	}

	if (!link.has_mode)
		printf("none\n");
	else if (link.mode < ARRAY_SIZE(ovpn_mode_names))
		printf("%s\n", ovpn_mode_names[link.mode]);
	else
		printf("%u\n", link.mode);

	return RC_OK;
}

/* generic netlink */

static const struct nla_policy cli_ctrl_policy[CTRL_ATTR_MAX + 1] = {
	[CTRL_ATTR_FAMILY_ID] = { .type = NLA_U16 },
	[CTRL_ATTR_FAMILY_NAME] = { .type = NLA_STRING },
	[CTRL_ATTR_VERSION] = { .type = NLA_U32 },
	[CTRL_ATTR_MAXATTR] = { .type = NLA_U32 },
	[CTRL_ATTR_OPS] = { .type = NLA_NESTED },
	[CTRL_ATTR_MCAST_GROUPS] = { .type = NLA_NESTED },
};

static const struct nla_policy cli_grp_policy[CTRL_ATTR_MCAST_GRP_MAX + 1] = {
	[CTRL_ATTR_MCAST_GRP_NAME] = { .type = NLA_STRING },
	[CTRL_ATTR_MCAST_GRP_ID] = { .type = NLA_U32 },
};

static const struct nla_policy cli_op_policy[CTRL_ATTR_OP_MAX + 1] = {
	[CTRL_ATTR_OP_ID] = { .type = NLA_U32 },
	[CTRL_ATTR_OP_FLAGS] = { .type = NLA_U32 },
};

static int cli_family_grp(struct cli_family *fam, struct nlattr *nest)
{
	struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1];
	unsigned int i = fam->n_grps;

	if (nla_parse_nested(tb, CTRL_ATTR_MCAST_GRP_MAX, nest,
			     cli_grp_policy) < 0 ||
	    !tb[CTRL_ATTR_MCAST_GRP_NAME] || !tb[CTRL_ATTR_MCAST_GRP_ID])
		return -1;

	if (i == ARRAY_SIZE(fam->grps))
		return 0;

	snprintf(fam->grps[i].name, sizeof(fam->grps[i].name), "%s",
		 nla_get_string(tb[CTRL_ATTR_MCAST_GRP_NAME]));
	fam->grps[i].id = nla_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	fam->n_grps++;
	return 0;
}

static int cli_family_op(struct cli_family *fam, struct nlattr *nest)
{
	struct nlattr *tb[CTRL_ATTR_OP_MAX + 1];
	unsigned int i = fam->n_ops;

	if (nla_parse_nested(tb, CTRL_ATTR_OP_MAX, nest, cli_op_policy) < 0 ||
	    !tb[CTRL_ATTR_OP_ID])
		return -1;

	if (i == ARRAY_SIZE(fam->ops))
		return 0;

	fam->ops[i].cmd = nla_get_u32(tb[CTRL_ATTR_OP_ID]);
	if (tb[CTRL_ATTR_OP_FLAGS])
		fam->ops[i].flags = nla_get_u32(tb[CTRL_ATTR_OP_FLAGS]);
	fam->n_ops++;
	return 0;
}

static int cli_family_parse(struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct cli_family *fam = arg;
	struct nlattr *nest;
	int rem;

	if (genlmsg_parse(nlh, 0, tb, CTRL_ATTR_MAX, cli_ctrl_policy) < 0 ||
	    !tb[CTRL_ATTR_FAMILY_ID] || !tb[CTRL_ATTR_FAMILY_NAME])
		goto bad;

	snprintf(fam->name, sizeof(fam->name), "%s",
		 nla_get_string(tb[CTRL_ATTR_FAMILY_NAME]));
	fam->id = nla_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_VERSION])
		fam->version = nla_get_u32(tb[CTRL_ATTR_VERSION]);
	if (tb[CTRL_ATTR_MAXATTR])
		fam->maxattr = nla_get_u32(tb[CTRL_ATTR_MAXATTR]);

	if (tb[CTRL_ATTR_MCAST_GROUPS])
		nla_for_each_nested(nest, tb[CTRL_ATTR_MCAST_GROUPS], rem)
			if (cli_family_grp(fam, nest))
				goto bad;

	if (tb[CTRL_ATTR_OPS])
		nla_for_each_nested(nest, tb[CTRL_ATTR_OPS], rem)
			if (cli_family_op(fam, nest))
				goto bad;

	fam->found = true;
	return 0;

bad:
	fprintf(stderr, "%s: malformed family reply\n", CLI_NAME);
	return -1;
}

/* Open a generic netlink socket and describe the ovpn family through it. */
static int cli_genl_open(struct cli_nl *nl, struct cli_family *fam)
{
	struct nl_msg *msg;
	int ret;

	memset(fam, 0, sizeof(*fam));

	if (cli_nl_open(nl, NETLINK_GENERIC))
		return RC_LOCAL;

	msg = nlmsg_alloc();
	if (!msg ||
	    !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, 0,
			 CTRL_CMD_GETFAMILY, 1) ||
	    nla_put_string(msg, CTRL_ATTR_FAMILY_NAME, OVPN_FAMILY_NAME) < 0) {
		ret = cli_build_failed(msg);
		goto err;
	}

	ret = cli_nl_request(nl, msg, cli_family_parse, fam);
	if (ret)
		goto err;

	if (!fam->found) {
		fprintf(stderr, "%s: no family in the reply\n", CLI_NAME);
		ret = RC_LOCAL;
		goto err;
	}

	return RC_OK;

err:
	cli_nl_close(nl);
	return ret;
}

static int cli_family(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_family fam;
	struct cli_nl nl;
	unsigned int i;
	int ret;

	(void)cmd;
	(void)argc;
	(void)argv;

	ret = cli_genl_open(&nl, &fam);
	if (ret)
		return ret;
	cli_nl_close(&nl);

	printf("name %s\n", fam.name);
	printf("id %u\n", fam.id);
	printf("version %u\n", fam.version);
	printf("maxattr %u\n", fam.maxattr);
	for (i = 0; i < fam.n_grps; i++)
		printf("mcgrp %s %u\n", fam.grps[i].name, fam.grps[i].id);
	for (i = 0; i < fam.n_ops; i++)
		printf("op %u 0x%x\n", fam.ops[i].cmd, fam.ops[i].flags);

	return RC_OK;
}

/* A nested attribute opened by hand, NLA_F_NESTED set whatever libnl does. */
static struct nlattr *cli_nest_start(struct nl_msg *msg, int type)
{
	struct nlattr *start = nlmsg_tail(nlmsg_hdr(msg));

	if (nla_put(msg, type | NLA_F_NESTED, 0, NULL) < 0)
		return NULL;

	return start;
}

/* Close a nest; unlike nla_nest_end() this keeps an empty one. */
static void cli_nest_end(struct nl_msg *msg, struct nlattr *start)
{
	start->nla_len = (char *)nlmsg_tail(nlmsg_hdr(msg)) - (char *)start;
}

/* The address as @attr4 (4 bytes, network order) or @attr6 (16 bytes). */
static int cli_put_addr(struct nl_msg *msg, int attr4, int attr6,
			const struct cli_addr *addr)
{
	if (addr->family == AF_INET)
		return nla_put(msg, attr4, sizeof(addr->v4), &addr->v4);

	return nla_put(msg, attr6, sizeof(addr->v6), &addr->v6);
}

/* Build @req on @nl and send it. */
static int cli_genl_send(struct cli_nl *nl, const struct cli_family *fam,
			 const struct cli_req *req)
{
	struct nlmsghdr *body = req->body ? nlmsg_hdr(req->body) : NULL;
	int len = body ? nlmsg_datalen(body) : 0;
	struct nl_msg *msg;

	msg = nlmsg_alloc_size(len + CLI_MSG_SLACK);
	if (!msg ||
	    !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, fam->id, 0,
			 req->flags, req->cmd, OVPN_FAMILY_VERSION) ||
	    (req->has_ifindex &&
	     nla_put_u32(msg, OVPN_A_IFINDEX, req->ifindex) < 0) ||
	    (len && nlmsg_append(msg, nlmsg_data(body), len,
				 NLMSG_ALIGNTO) < 0))
		return cli_build_failed(msg);

	return cli_nl_request(nl, msg, req->parse, req->arg);
}

/* Send @req on a socket of its own; @req->body is freed. */
static int cli_genl_once(struct cli_req *req)
{
	struct cli_family fam;
	struct cli_nl nl;
	int ret;

	ret = cli_genl_open(&nl, &fam);
	if (!ret) {
		ret = cli_genl_send(&nl, &fam, req);
		cli_nl_close(&nl);
	}

	nlmsg_free(req->body);
	req->body = NULL;
	return ret;
}

/* A request of @cmd for the device @ifname; -1 (told) if there is none. */
static int cli_req_init(struct cli_req *req, unsigned int cmd,
			const char *ifname)
{
	memset(req, 0, sizeof(*req));
	req->cmd = cmd;
	req->has_ifindex = true;
	return arg_ifindex(ifname, &req->ifindex);
}

/*
 * "ifname <name>" or "ifindex <n>" at @argv[*i], once: 1 and *i moved past
 * it when taken, 0 when something else is there, -1 (told) when bad.
 */
static int cli_parse_target(int argc, char **argv, int *i,
			    struct cli_req *req)
{
	bool name = !strcmp(argv[*i], "ifname");
	unsigned long ifindex;

	if (req->has_ifindex || *i + 1 >= argc ||
	    (!name && strcmp(argv[*i], "ifindex")))
		return 0;

	if (name ? arg_ifindex(argv[*i + 1], &req->ifindex) :
	    arg_uint("ifindex", argv[*i + 1], UINT32_MAX, &ifindex))
		return -1;

	if (!name)
		req->ifindex = ifindex;
	req->has_ifindex = true;
	*i += 2;
	return 1;
}

static int cli_count_parse(struct nlmsghdr *nlh, void *arg)
{
	unsigned int *count = arg;

	(void)nlh;

	(*count)++;
	return 0;
}

static int cli_genl_cmd(const struct cli_cmd *cmd, int argc, char **argv)
{
	unsigned int count = 0;
	struct cli_req req = {
		.parse = cli_count_parse,
		.arg = &count,
	};
	unsigned long op;
	int i = 2, ret;

	if (parse_name(argv[1], ovpn_cmd_names, ARRAY_SIZE(ovpn_cmd_names),
		       255, &op)) {
		fprintf(stderr, "%s: unknown command '%s'\n", CLI_NAME,
			argv[1]);
		return cmd_usage(cmd);
	}
	req.cmd = op;

	while (i < argc) {
		ret = cli_parse_target(argc, argv, &i, &req);
		if (ret < 0)
			return cmd_usage(cmd);
		if (ret)
			continue;
		if (strcmp(argv[i], "dump") || req.flags)
			return cmd_usage(cmd);
		req.flags = NLM_F_DUMP;
		i++;
	}

	ret = cli_genl_once(&req);
	if (ret)
		return ret;

	if (req.flags)
		printf("OK %u\n", count);
	else
		printf("OK\n");

	return RC_OK;
}

/* replies and notifications */

/* An unsigned attribute of 1, 2, 4 or 8 bytes (NLA_UINT is 4 or 8). */
static int cli_nla_num(const struct nlattr *attr, unsigned long long *num)
{
	switch (nla_len(attr)) {
	case sizeof(__u8):
		*num = nla_get_u8(attr);
		return 0;
	case sizeof(__u16):
		*num = nla_get_u16(attr);
		return 0;
	case sizeof(__u32):
		*num = nla_get_u32(attr);
		return 0;
	case sizeof(__u64):
		*num = nla_get_u64(attr);
		return 0;
	}

	return -1;
}

/* An address of 4 or 16 bytes as text; its family, or -1. */
static int cli_ntop(const struct nlattr *attr, char *buf, size_t len)
{
	int family;

	if (nla_len(attr) == (int)sizeof(struct in_addr))
		family = AF_INET;
	else if (nla_len(attr) == (int)sizeof(struct in6_addr))
		family = AF_INET6;
	else
		return -1;

	return inet_ntop(family, nla_data(attr), buf, len) ? family : -1;
}

/*
 * "ip:port" or "[ip%scope]:port" out of a peer nest, 0 if it has no
 * address.  Scope 0, no scope, is what the kernel reports for most IPv6
 * remotes: left out.
 */
static int cli_fmt_remote(struct nlattr **tb, char *val, size_t len)
{
	struct nlattr *scope = tb[OVPN_A_PEER_REMOTE_IPV6_SCOPE_ID];
	struct nlattr *port = tb[OVPN_A_PEER_REMOTE_PORT];
	struct nlattr *ip = tb[OVPN_A_PEER_REMOTE_IPV4];
	char addr[INET6_ADDRSTRLEN], scope_s[16] = "", port_s[8] = "";
	int family;

	if (!ip)
		ip = tb[OVPN_A_PEER_REMOTE_IPV6];
	if (!ip)
		return 0;

	family = cli_ntop(ip, addr, sizeof(addr));
	if (family < 0 ||
	    (scope && nla_len(scope) != (int)sizeof(__u32)) ||
	    (port && nla_len(port) != (int)sizeof(__u16)))
		return -1;

	if (scope && nla_get_u32(scope))
		snprintf(scope_s, sizeof(scope_s), "%%%u", nla_get_u32(scope));
	if (port)
		snprintf(port_s, sizeof(port_s), ":%u",
			 ntohs(nla_get_u16(port)));

	if (family == AF_INET6)
		snprintf(val, len, "[%s%s]%s", addr, scope_s, port_s);
	else
		snprintf(val, len, "%s%s", addr, port_s);
	return 1;
}

/* The value of @f as text: 1, 0 when absent, -1 when malformed. */
static int cli_field_value(const struct cli_field *f, struct nlattr **tb,
			   char *val, size_t len)
{
	struct nlattr *attr = tb[f->attr];
	unsigned long long num;

	if (f->kind == CLI_F_REMOTE)
		return cli_fmt_remote(tb, val, len);
	if (!attr)
		return 0;

	switch (f->kind) {
	case CLI_F_S32:
		if (nla_len(attr) != (int)sizeof(__s32))
			return -1;
		snprintf(val, len, "%d", (__s32)nla_get_u32(attr));
		return 1;
	case CLI_F_BE16:
		if (nla_len(attr) != (int)sizeof(__u16))
			return -1;
		snprintf(val, len, "%u", ntohs(nla_get_u16(attr)));
		return 1;
	case CLI_F_IP:
		return cli_ntop(attr, val, len) < 0 ? -1 : 1;
	default:
		break;
	}

	if (cli_nla_num(attr, &num))
		return -1;

	if (f->kind == CLI_F_ENUM && num < f->n_names && f->names[num])
		snprintf(val, len, "%s", f->names[num]);
	else
		snprintf(val, len, "%llu", num);
	return 1;
}

/* a peer's counters: in PEER_GET replies and, last, in PEER_DEL_NTF */
static const struct cli_field cli_counter_fields[] = {
	CLI_FIELD("vpn_rx_bytes", OVPN_A_PEER_VPN_RX_BYTES, CLI_F_NUM),
	CLI_FIELD("vpn_rx_packets", OVPN_A_PEER_VPN_RX_PACKETS, CLI_F_NUM),
	CLI_FIELD("vpn_tx_bytes", OVPN_A_PEER_VPN_TX_BYTES, CLI_F_NUM),
	CLI_FIELD("vpn_tx_packets", OVPN_A_PEER_VPN_TX_PACKETS, CLI_F_NUM),
	CLI_FIELD("link_rx_bytes", OVPN_A_PEER_LINK_RX_BYTES, CLI_F_NUM),
	CLI_FIELD("link_rx_packets", OVPN_A_PEER_LINK_RX_PACKETS, CLI_F_NUM),
	CLI_FIELD("link_tx_bytes", OVPN_A_PEER_LINK_TX_BYTES, CLI_F_NUM),
	CLI_FIELD("link_tx_packets", OVPN_A_PEER_LINK_TX_PACKETS, CLI_F_NUM),
};

static const struct cli_field cli_peer_fields[] = {
	CLI_FIELD("id", OVPN_A_PEER_ID, CLI_F_NUM),
	CLI_FIELD("tx_id", OVPN_A_PEER_TX_ID, CLI_F_NUM),
	CLI_FIELD("mssfix", OVPN_A_PEER_MSSFIX, CLI_F_NUM),
	CLI_FIELD("netnsid", OVPN_A_PEER_SOCKET_NETNSID, CLI_F_S32),
	CLI_FIELD("remote", 0, CLI_F_REMOTE),
	CLI_FIELD("local", OVPN_A_PEER_LOCAL_IPV4, CLI_F_IP),
	CLI_FIELD("local", OVPN_A_PEER_LOCAL_IPV6, CLI_F_IP),
	CLI_FIELD("local_port", OVPN_A_PEER_LOCAL_PORT, CLI_F_BE16),
	CLI_FIELD("vpn4", OVPN_A_PEER_VPN_IPV4, CLI_F_IP),
	CLI_FIELD("vpn6", OVPN_A_PEER_VPN_IPV6, CLI_F_IP),
	CLI_FIELD("keepalive_interval", OVPN_A_PEER_KEEPALIVE_INTERVAL,
		  CLI_F_NUM),
	CLI_FIELD("keepalive_timeout", OVPN_A_PEER_KEEPALIVE_TIMEOUT,
		  CLI_F_NUM),
};

static const struct cli_field cli_key_fields[] = {
	CLI_FIELD("peer_id", OVPN_A_KEYCONF_PEER_ID, CLI_F_NUM),
	CLI_ENUM("slot", OVPN_A_KEYCONF_SLOT, slot),
	CLI_FIELD("key_id", OVPN_A_KEYCONF_KEY_ID, CLI_F_NUM),
	CLI_ENUM("cipher", OVPN_A_KEYCONF_CIPHER_ALG, alg),
};

static const struct cli_field cli_peer_del_fields[] = {
	CLI_IFINDEX,
	CLI_FIELD("id", OVPN_A_PEER_ID, CLI_F_NUM),
	CLI_ENUM("reason", OVPN_A_PEER_DEL_REASON, reason),
};

/* KEY_ID comes as a u16 here, which CLI_F_NUM takes */
static const struct cli_field cli_key_swap_fields[] = {
	CLI_IFINDEX,
	CLI_FIELD("peer_id", OVPN_A_KEYCONF_PEER_ID, CLI_F_NUM),
	CLI_FIELD("key_id", OVPN_A_KEYCONF_KEY_ID, CLI_F_NUM),
};

static const struct cli_field cli_peer_float_fields[] = {
	CLI_IFINDEX,
	CLI_FIELD("id", OVPN_A_PEER_ID, CLI_F_NUM),
	CLI_FIELD("remote", 0, CLI_F_REMOTE),
};

/* fields cli_<f>_fields, in nest attribute @n up to n##_MAX */
#define CLI_VIEW(p, c, n, f)	{ .prefix = (p), .cmd = (c), .nest = n, \
				  .maxattr = n##_MAX, \
				  .fields = cli_##f##_fields, \
				  .n_fields = ARRAY_SIZE(cli_##f##_fields) }

static const struct cli_view cli_peer_view =
	CLI_VIEW("peer", 0, OVPN_A_PEER, peer);
static const struct cli_view cli_key_view =
	CLI_VIEW("key", 0, OVPN_A_KEYCONF, key);

static const struct cli_view cli_ntf_views[] = {
	CLI_VIEW("ntf peer_del", OVPN_CMD_PEER_DEL_NTF, OVPN_A_PEER, peer_del),
	CLI_VIEW("ntf key_swap", OVPN_CMD_KEY_SWAP_NTF, OVPN_A_KEYCONF,
		 key_swap),
	CLI_VIEW("ntf peer_float", OVPN_CMD_PEER_FLOAT_NTF, OVPN_A_PEER,
		 peer_float),
};

/* One line: the prefix of @v, then each of its fields present in @nlh. */
static int cli_print_view(struct nlmsghdr *nlh, const struct cli_view *v)
{
	char line[CLI_LINE_MAX], val[CLI_VALUE_MAX];
	struct nlattr *tb[CLI_NEST_MAX + 1] = {};
	struct nlattr *top[OVPN_A_MAX + 1];
	const struct cli_field *f;
	size_t i, n, len;
	int ret;

	if (genlmsg_parse(nlh, 0, top, OVPN_A_MAX, NULL) < 0 ||
	    (top[v->nest] &&
	     nla_parse_nested(tb, v->maxattr, top[v->nest], NULL) < 0))
		goto bad;

	len = snprintf(line, sizeof(line), "%s", v->prefix);
	/* a peer's counters follow, printed where the message has them */
	n = v->n_fields;
	if (v->nest == OVPN_A_PEER)
		n += ARRAY_SIZE(cli_counter_fields);
	for (i = 0; i < n; i++) {
		f = i < v->n_fields ? &v->fields[i] :
				      &cli_counter_fields[i - v->n_fields];
		ret = cli_field_value(f, f->top ? top : tb, val, sizeof(val));
		if (ret < 0)
			goto bad;
		if (ret && len < sizeof(line))
			len += snprintf(line + len, sizeof(line) - len,
					" %s=%s", f->key, val);
	}

	printf("%s\n", line);
	return 0;

bad:
	fprintf(stderr, "%s: malformed message for '%s'\n", CLI_NAME,
		v->prefix);
	return -1;
}

static int cli_peer_reply(struct nlmsghdr *nlh, void *arg)
{
	(void)arg;

	return cli_print_view(nlh, &cli_peer_view);
}

static int cli_key_reply(struct nlmsghdr *nlh, void *arg)
{
	(void)arg;

	return cli_print_view(nlh, &cli_key_view);
}

/* options */

/* A VPN address, into the slot of its family, each slot once. */
static int cli_set_vpn(struct cli_opts *o, const char *str)
{
	struct cli_addr addr, *slot;

	if (parse_addr(str, &addr) || addr.has_scope)
		return -1;

	slot = addr.family == AF_INET ? &o->vpn4 : &o->vpn6;
	if (slot->family)
		return -1;

	*slot = addr;
	return 0;
}

/* A control payload in hex, framed: its 2-byte length, then itself. */
static int cli_set_record(struct cli_opts *o, const char *hex)
{
	size_t len = strlen(hex) / 2;

	o->rec = malloc(len + 2);
	if (!o->rec || parse_hex(hex, o->rec + 2, CLI_RECORD_MAX, &len))
		return -1;

	o->rec[0] = len >> 8;
	o->rec[1] = len & 0xff;
	o->rec_len = len + 2;
	return 0;
}

/* The arguments @args of the option @bit into @o. */
static int cli_set_opt(struct cli_opts *o, unsigned int bit, char **args)
{
	o->given |= bit;

	switch (bit) {
	case CLI_OPT_REMOTE:
		return parse_addr(args[0], &o->remote) ||
		       parse_uint(args[1], USHRT_MAX, &o->rport) ? -1 : 0;
	case CLI_OPT_VPN:
		return cli_set_vpn(o, args[0]);
	case CLI_OPT_TX_ID:
		return parse_uint(args[0], UINT32_MAX, &o->tx_id);
	case CLI_OPT_LOCAL:
		return parse_addr(args[0], &o->local);
	case CLI_OPT_KEEPALIVE:
		return parse_uint(args[0], UINT32_MAX, &o->ka_interval) ||
		       parse_uint(args[1], UINT32_MAX, &o->ka_timeout) ? -1 : 0;
	case CLI_OPT_MARK:
		return parse_uint(args[0], UINT32_MAX, &o->mark);
	case CLI_OPT_CTRL:
		return cli_set_record(o, args[0]);
	case CLI_OPT_MSSFIX:
		return parse_uint(args[0], USHRT_MAX, &o->mssfix);
	}

	return 0;
}

/* Options of @allowed, each once but vpn (once per family), till the end. */
static int cli_parse_opts(struct cli_opts *o, unsigned int allowed,
			  int argc, char **argv)
{
	unsigned int bit;
	int i, j, nargs;

	for (i = 0; i < argc; i += 1 + nargs) {
		j = 0;
		while (j < (int)ARRAY_SIZE(cli_opt_names) &&
		       strcmp(argv[i], cli_opt_names[j].name))
			j++;
		if (j == (int)ARRAY_SIZE(cli_opt_names))
			goto bad;

		bit = cli_opt_names[j].bit;
		nargs = cli_opt_names[j].nargs;
		if (!(allowed & bit) || i + nargs >= argc ||
		    (bit != CLI_OPT_VPN && (o->given & bit)) ||
		    cli_set_opt(o, bit, argv + i + 1))
			goto bad;
	}

	return 0;

bad:
	fprintf(stderr, "%s: bad, repeated or incomplete option '%s'\n",
		CLI_NAME, argv[i]);
	return -1;
}

/* request bodies */

static int cli_put_remote(struct nl_msg *msg, const struct cli_opts *o)
{
	if (cli_put_addr(msg, OVPN_A_PEER_REMOTE_IPV4, OVPN_A_PEER_REMOTE_IPV6,
			 &o->remote) < 0 ||
	    (o->remote.has_scope &&
	     nla_put_u32(msg, OVPN_A_PEER_REMOTE_IPV6_SCOPE_ID,
			 o->remote.scope) < 0))
		return -1;

	return nla_put_u16(msg, OVPN_A_PEER_REMOTE_PORT, htons(o->rport));
}

static int cli_put_vpn(struct nl_msg *msg, const struct cli_addr *addr)
{
	if (!addr->family)
		return 0;

	return cli_put_addr(msg, OVPN_A_PEER_VPN_IPV4, OVPN_A_PEER_VPN_IPV6,
			    addr);
}

/* The attributes of a peer nest. */
static int cli_peer_put(struct nl_msg *msg, const void *arg)
{
	const struct cli_peer *p = arg;
	const struct cli_opts *o = &p->o;

	if (nla_put_u32(msg, OVPN_A_PEER_ID, p->id) < 0 ||
	    (p->fd >= 0 && nla_put_u32(msg, OVPN_A_PEER_SOCKET, p->fd) < 0) ||
	    ((o->given & CLI_OPT_REMOTE) && cli_put_remote(msg, o) < 0) ||
	    cli_put_vpn(msg, &o->vpn4) < 0 || cli_put_vpn(msg, &o->vpn6) < 0)
		return -1;

	if ((o->given & CLI_OPT_LOCAL) &&
	    cli_put_addr(msg, OVPN_A_PEER_LOCAL_IPV4, OVPN_A_PEER_LOCAL_IPV6,
			 &o->local) < 0)
		return -1;

	if ((o->given & CLI_OPT_KEEPALIVE) &&
	    (nla_put_u32(msg, OVPN_A_PEER_KEEPALIVE_INTERVAL,
			 o->ka_interval) < 0 ||
	     nla_put_u32(msg, OVPN_A_PEER_KEEPALIVE_TIMEOUT,
			 o->ka_timeout) < 0))
		return -1;

	if ((o->given & CLI_OPT_TX_ID) &&
	    nla_put_u32(msg, OVPN_A_PEER_TX_ID, o->tx_id) < 0)
		return -1;

	if ((o->given & CLI_OPT_MSSFIX) &&
	    nla_put_u16(msg, OVPN_A_PEER_MSSFIX, o->mssfix) < 0)
		return -1;

	return 0;
}

/* A body holding one nest @type, filled by @put. */
static struct nl_msg *cli_nest_body(int type,
				    int (*put)(struct nl_msg *msg,
					       const void *arg),
				    const void *arg)
{
	struct nl_msg *body = nlmsg_alloc();
	struct nlattr *nest;

	if (!body)
		return NULL;

	nest = cli_nest_start(body, type);
	if (!nest || put(body, arg) < 0) {
		nlmsg_free(body);
		return NULL;
	}

	cli_nest_end(body, nest);
	return body;
}

static int cli_peer_request(struct cli_req *req, const struct cli_peer *p)
{
	req->body = cli_nest_body(OVPN_A_PEER, cli_peer_put, p);
	if (!req->body)
		return cli_build_failed(NULL);

	return cli_genl_once(req);
}

/* transport sockets */

static socklen_t cli_sockaddr(const struct cli_addr *addr, unsigned long port,
			      struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (addr->family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr = addr->v4;
		return sizeof(*sin);
	}

	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr = addr->v6;
	sin6->sin6_scope_id = addr->scope;
	return sizeof(*sin6);
}

/* Close @fd, if open, keeping errno: -1. */
static int cli_close_err(int fd)
{
	int err = errno;

	if (fd >= 0)
		close(fd);
	errno = err;
	return -1;
}

/*
 * A UDP socket of @local's family bound to @local:@port, IPv6 ones taking
 * IPv4 too, with the SO_MARK of @o if given.
 */
static int cli_udp_socket(const struct cli_addr *local, unsigned long port,
			  const struct cli_opts *o)
{
	unsigned int mark = o->mark;
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, off = 0;

	len = cli_sockaddr(local, port, &ss);
	fd = socket(local->family, SOCK_DGRAM, 0);
	if (fd < 0 ||
	    (local->family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off))) ||
	    ((o->given & CLI_OPT_MARK) &&
	     setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) ||
	    bind(fd, (struct sockaddr *)&ss, len)) {
		fprintf(stderr, "%s: cannot set up the UDP socket: %s\n",
			CLI_NAME, strerror(errno));
		return cli_close_err(fd);
	}

	return fd;
}

/*
 * A TCP socket of @addr's family listening on @addr:@port, SO_REUSEADDR,
 * IPv6 ones for IPv6 only: -1 and errno on failure.
 */
static int cli_tcp_listen(const struct cli_addr *addr, unsigned long port)
{
	struct sockaddr_storage ss;
	socklen_t len = cli_sockaddr(addr, port, &ss);
	int fd, one = 1;

	fd = socket(addr->family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (addr->family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, (struct sockaddr *)&ss, len) ||
	    listen(fd, CLI_TCP_BACKLOG))
		return cli_close_err(fd);

	return fd;
}

/* A TCP socket connected to @addr:@port, -1 (told) if none. */
static int cli_tcp_connect(const struct cli_addr *addr, unsigned long port)
{
	struct sockaddr_storage ss;
	socklen_t len = cli_sockaddr(addr, port, &ss);
	int fd;

	fd = socket(addr->family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len)) {
		fprintf(stderr, "%s: cannot connect: %s\n", CLI_NAME,
			strerror(errno));
		return cli_close_err(fd);
	}

	return fd;
}

/* The local port of @fd, -1 (told) if unknown. */
static int cli_local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len)) {
		fprintf(stderr, "%s: getsockname: %s\n", CLI_NAME,
			strerror(errno));
		return -1;
	}

	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static long long cli_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * The control record of @o, if any, on the TCP socket @fd of a peer, in one
 * send(); again for a while as long as the kernel still holds the one before.
 */
static int cli_send_ctrl(int fd, const struct cli_opts *o)
{
	long long deadline = cli_now_ms() + CLI_SEND_WAIT_MS;
	ssize_t ret;

	if (!o->rec)
		return RC_OK;

	for (;;) {
		ret = send(fd, o->rec, o->rec_len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (ret == (ssize_t)o->rec_len)
			return RC_OK;
		if (ret >= 0) {
			fprintf(stderr, "%s: control record cut at %zd bytes\n",
				CLI_NAME, ret);
			return RC_LOCAL;
		}
		if ((errno != EAGAIN && errno != EINTR) ||
		    cli_now_ms() >= deadline)
			break;
		poll(NULL, 0, CLI_SEND_PAUSE_MS);
	}

	fprintf(stderr, "%s: cannot send the control record: %s\n", CLI_NAME,
		strerror(errno));
	return RC_LOCAL;
}

/*
 * SIGTERM and SIGINT, and SIGUSR1 and SIGUSR2 if @usr1, blocked, as a
 * descriptor: no handler, and no window between a check of a flag and a
 * wait in which one gets lost.  Blocked, they are queued even where the
 * shell started us with SIGINT ignored.
 */
static int cli_signal_fd(bool usr1)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (usr1) {
		sigaddset(&set, SIGUSR1);
		sigaddset(&set, SIGUSR2);
	}
	fd = sigprocmask(SIG_BLOCK, &set, NULL) ? -1 :
	     signalfd(-1, &set, SFD_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "%s: cannot catch signals: %s\n", CLI_NAME,
			strerror(errno));
	return fd;
}

/*
 * One datagram, or one record of a @stream, from @fd, printed as
 * "CTRL<label> <len> <first bytes in hex, - if none>" unless the stream
 * ends there: what recv() returned, -errno on failure (told unless EAGAIN
 * or EINTR).
 */
static ssize_t cli_recv_ctrl(int fd, bool stream, const char *label)
{
	static unsigned char buf[CLI_RECORD_BUF];
	ssize_t show = stream ? CLI_RECORD_SHOW : CLI_CTRL_SHOW;
	char hex[2 * CLI_RECORD_SHOW + 1] = "-";
	ssize_t len, i;
	int err;

	/* MSG_TRUNC: the length of the datagram, not of what was copied */
	len = recv(fd, buf, sizeof(buf),
		   MSG_DONTWAIT | (stream ? 0 : MSG_TRUNC));
	if (len < 0) {
		err = errno;
		if (err != EAGAIN && err != EINTR)
			fprintf(stderr, "%s: recv: %s\n", CLI_NAME,
				strerror(err));
		return -err;
	}
	if (stream && !len)
		return 0;

	for (i = 0; i < len && i < show; i++)
		snprintf(hex + 2 * i, sizeof(hex) - 2 * i, "%02x", buf[i]);

	printf("CTRL%s %zd %s\n", label, len, hex);
	return len;
}

/* Print what arrives on @fd until a signal can be read from @sig. */
static int cli_stay(int fd, int sig)
{
	struct pollfd pfd[2] = {
		{ .fd = fd, .events = POLLIN },
		{ .fd = sig, .events = POLLIN },
	};

	while (!(pfd[1].revents & POLLIN)) {
		if (poll(pfd, ARRAY_SIZE(pfd), -1) < 0 && errno != EINTR) {
			fprintf(stderr, "%s: poll: %s\n", CLI_NAME,
				strerror(errno));
			return RC_LOCAL;
		}
		if (pfd[0].revents & (POLLIN | POLLERR))
			cli_recv_ctrl(fd, false, "");
	}

	return RC_OK;
}

/*
 * "READY <local port of @fd>"; for a stay (@o), the signal descriptor *@sig
 * first, as READY may be answered by a signal at once, else -1.
 */
static int cli_announce(int fd, const struct cli_opts *o, bool usr1,
			int *sig)
{
	int port = cli_local_port(fd);

	*sig = -1;
	if (port < 0)
		return RC_LOCAL;

	if (o->given & CLI_OPT_STAY) {
		*sig = cli_signal_fd(usr1);
		if (*sig < 0)
			return RC_LOCAL;
	}

	printf("READY %d\n", port);
	return RC_OK;
}

/* The peers are in: "READY <local port>", then stay if asked to. */
static int cli_ready(int fd, const struct cli_opts *o)
{
	int sig, ret;

	ret = cli_announce(fd, o, false, &sig);
	if (ret || sig < 0)
		return ret;

	ret = cli_stay(fd, sig);
	close(sig);
	return ret;
}

/* peer commands */

static int cli_new_peer(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_peer p = { .fd = -1 };
	struct cli_addr any = {};
	unsigned long lport;
	struct cli_req req;
	int ret;

	if (cli_req_init(&req, OVPN_CMD_PEER_NEW, argv[1]) ||
	    arg_uint("peer id", argv[2], UINT32_MAX, &p.id) ||
	    arg_uint("local port", argv[3], USHRT_MAX, &lport))
		return cmd_usage(cmd);

	if (cli_set_opt(&p.o, CLI_OPT_REMOTE, argv + 4)) {
		fprintf(stderr, "%s: bad remote '%s' '%s'\n", CLI_NAME,
			argv[4], argv[5]);
		return cmd_usage(cmd);
	}

	if (cli_parse_opts(&p.o, CLI_NEW_PEER_OPTS, argc - 6, argv + 6))
		return cmd_usage(cmd);

	any.family = p.o.remote.family;
	p.fd = cli_udp_socket(p.o.given & CLI_OPT_LOCAL ? &p.o.local : &any,
			      lport, &p.o);
	if (p.fd < 0)
		return RC_LOCAL;

	ret = cli_peer_request(&req, &p);
	if (!ret)
		ret = cli_ready(p.fd, &p.o);

	close(p.fd);
	return ret;
}

/*
 * A line of a peers file into @p, with a remote port column if @port, else
 * with an address that is not sent: 0, 1 for a line without a peer, -1 when
 * malformed.
 */
static int cli_peer_line(char *line, bool port, struct cli_peer *p)
{
	char *tok[CLI_PEER_COLS + 1], *save = NULL, **vpn;
	int n, cols = port ? CLI_PEER_COLS : CLI_PEER_COLS - 1;

	line[strcspn(line, "#")] = '\0';
	for (n = 0; n <= CLI_PEER_COLS; n++) {
		tok[n] = strtok_r(n ? NULL : line, " \t\r\n", &save);
		if (!tok[n])
			break;
	}

	if (!n)
		return 1;
	if (n < cols - 1 || n > cols)
		return -1;

	memset(&p->o, 0, sizeof(p->o));
	vpn = tok + cols - 3;
	if (parse_uint(tok[0], UINT32_MAX, &p->id) ||
	    (port ? cli_set_opt(&p->o, CLI_OPT_REMOTE, tok + 1) :
		    parse_addr(tok[1], &p->o.remote)) ||
	    (strcmp(vpn[0], "-") && cli_set_vpn(&p->o, vpn[0])) ||
	    (strcmp(vpn[1], "-") && cli_set_vpn(&p->o, vpn[1])) ||
	    (n == cols && cli_set_opt(&p->o, CLI_OPT_TX_ID, vpn + 2)))
		return -1;

	return 0;
}

/* fopen() for reading, telling why it failed. */
static FILE *cli_fopen(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		fprintf(stderr, "%s: %s: %s\n", CLI_NAME, path,
			strerror(errno));
	return f;
}

/*
 * The peers of @path, all checked, into *@peers: how many, or -1 (told).
 * @port: the lines have a remote port, see cli_peer_line().
 */
static int cli_read_peers(const char *path, bool port,
			  struct cli_peer **peers)
{
	struct cli_peer p = { .fd = -1 }, *more;
	unsigned int lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	int n = 0, ret;
	FILE *f;

	f = cli_fopen(path);
	if (!f)
		return -1;

	while (n >= 0 && getline(&line, &cap, f) >= 0) {
		lineno++;
		ret = cli_peer_line(line, port, &p);
		if (ret > 0)
			continue;

		more = ret ? NULL : realloc(*peers, (n + 1) * sizeof(p));
		if (!more) {
			fprintf(stderr, "%s: %s:%u: %s\n", CLI_NAME, path,
				lineno, ret ? "bad peer" : "out of memory");
			n = -1;
			break;
		}
		*peers = more;
		(*peers)[n++] = p;
	}

	free(line);
	fclose(f);
	return n;
}

/* PEER_NEW for each of the @n @peers, all on the socket @fd. */
static int cli_add_peers(struct cli_req *req, struct cli_peer *peers, int n,
			 int fd)
{
	struct cli_family fam;
	struct cli_nl nl;
	int i, ret;

	ret = cli_genl_open(&nl, &fam);
	if (ret)
		return ret;

	for (i = 0; !ret && i < n; i++) {
		peers[i].fd = fd;
		req->body = cli_nest_body(OVPN_A_PEER, cli_peer_put, &peers[i]);
		ret = req->body ? cli_genl_send(&nl, &fam, req) :
				  cli_build_failed(NULL);
		nlmsg_free(req->body);
	}

	cli_nl_close(&nl);
	return ret;
}

static int cli_new_multi_peer(const struct cli_cmd *cmd, int argc,
			      char **argv)
{
	struct cli_addr any = { .family = AF_INET6 };
	struct cli_peer *peers = NULL;
	struct cli_opts o = {};
	unsigned long lport;
	struct cli_req req;
	int i, n, fd, ret;

	if (cli_req_init(&req, OVPN_CMD_PEER_NEW, argv[1]) ||
	    arg_uint("local port", argv[2], USHRT_MAX, &lport) ||
	    cli_parse_opts(&o, CLI_MULTI_PEER_OPTS, argc - 4, argv + 4))
		return cmd_usage(cmd);

	/* a bad file must not leave some of its peers behind */
	n = cli_read_peers(argv[3], true, &peers);
	fd = n < 0 ? -1 : cli_udp_socket(&any, lport, &o);
	if (fd < 0) {
		free(peers);
		return RC_LOCAL;
	}

	/* keepalive, if given, is every peer's */
	for (i = 0; i < n; i++) {
		peers[i].o.given |= o.given & CLI_OPT_KEEPALIVE;
		peers[i].o.ka_interval = o.ka_interval;
		peers[i].o.ka_timeout = o.ka_timeout;
	}
	ret = cli_add_peers(&req, peers, n, fd);
	if (!ret)
		ret = cli_ready(fd, &o);

	close(fd);
	free(peers);
	return ret;
}

/* TCP peers */

/* The address of @ss, its port and scope left out. */
static void cli_addr_of(const struct sockaddr_storage *ss,
			struct cli_addr *addr)
{
	memset(addr, 0, sizeof(*addr));
	addr->family = ss->ss_family;
	if (ss->ss_family == AF_INET)
		addr->v4 = ((const struct sockaddr_in *)ss)->sin_addr;
	else
		addr->v6 = ((const struct sockaddr_in6 *)ss)->sin6_addr;
}

/* Same family and address, whatever the scope. */
static bool cli_addr_same(const struct cli_addr *a, const struct cli_addr *b)
{
	if (a->family != b->family)
		return false;
	if (a->family == AF_INET)
		return a->v4.s_addr == b->v4.s_addr;
	return !memcmp(&a->v6, &b->v6, sizeof(a->v6));
}

/* The first peer not added yet that connects from @from, NULL if none. */
static struct cli_peer *cli_tcp_match(struct cli_tcp *t,
				      const struct cli_addr *from)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->peers[i].conn == CLI_CONN_NONE &&
		    cli_addr_same(&t->peers[i].o.remote, from))
			return &t->peers[i];

	return NULL;
}

/*
 * Add peer @p on its connection @fd, and send it the control record if any:
 * "PEER <id>" when @t tags its lines.  A refusal is final.
 */
static int cli_tcp_add(struct cli_tcp *t, struct cli_peer *p, int fd)
{
	int ret;

	p->fd = fd;
	ret = cli_peer_request(&t->req, p);
	if (ret)
		return ret;

	p->conn = CLI_CONN_OPEN;
	t->added++;
	ret = cli_send_ctrl(fd, &t->o);
	if (!ret && t->tag)
		printf("PEER %lu\n", p->id);
	return ret;
}

/* A connection on the listening socket @lfd, added as the peer it is from. */
static int cli_tcp_accept(struct cli_tcp *t, int lfd)
{
	char name[INET6_ADDRSTRLEN] = "?";
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct cli_addr from;
	struct cli_peer *p;
	int fd;

	fd = accept(lfd, (struct sockaddr *)&ss, &len);
	if (fd < 0) {
		if (errno == EAGAIN || errno == EINTR ||
		    errno == ECONNABORTED)
			return RC_OK;
		fprintf(stderr, "%s: accept: %s\n", CLI_NAME, strerror(errno));
		return RC_LOCAL;
	}

	cli_addr_of(&ss, &from);
	p = cli_tcp_match(t, &from);
	if (p)
		return cli_tcp_add(t, p, fd);

	inet_ntop(from.family, from.family == AF_INET ?
		  (void *)&from.v4 : (void *)&from.v6, name, sizeof(name));
	fprintf(stderr, "UNKNOWN %s\n", name);
	close(fd);
	return RC_OK;
}

/* A record of @p, or the end of its stream, or its error: then quiet. */
static void cli_tcp_recv(struct cli_tcp *t, struct cli_peer *p,
			 short revents)
{
	char label[16] = "";
	ssize_t len;

	if (t->tag)
		snprintf(label, sizeof(label), " %lu", p->id);

	len = cli_recv_ctrl(p->fd, true, label);
	if (len > 0 ||
	    ((len == -EAGAIN || len == -EINTR) &&
	     !(revents & (POLLERR | POLLHUP))))
		return;

	if (!len)
		printf("EOF%s\n", label);
	p->conn = CLI_CONN_QUIET;
}

/*
 * A signal: true to leave, on SIGTERM or SIGINT; SIGUSR1 closes all,
 * SIGUSR2 shuts down their sending side (the kernel's next write on one
 * fails).
 */
static bool cli_tcp_signal(struct cli_tcp *t)
{
	struct signalfd_siginfo si;
	int i;

	if (read(t->sig, &si, sizeof(si)) != sizeof(si))
		return false;
	if (si.ssi_signo == SIGUSR2) {
		for (i = 0; i < t->n; i++)
			if (t->peers[i].fd >= 0 &&
			    shutdown(t->peers[i].fd, SHUT_WR))
				fprintf(stderr, "%s: shutdown: %s\n",
					CLI_NAME, strerror(errno));
		printf("SHUT\n");
		return false;
	}
	if (si.ssi_signo != SIGUSR1)
		return true;

	for (i = 0; i < t->n; i++) {
		if (t->peers[i].fd < 0)
			continue;
		close(t->peers[i].fd);
		t->peers[i].fd = -1;
		t->peers[i].conn = CLI_CONN_CLOSED;
	}
	printf("CLOSED\n");
	return false;
}

/* the slots of the poll set of cli_tcp_run(), the peers last */
enum {
	CLI_PFD_SIG,
	CLI_PFD_LISTEN4,
	CLI_PFD_LISTEN6,
	CLI_PFD_PEERS,
};

/*
 * Accept while some peer is not added; for a stay, print the records of
 * the peers' connections too, until SIGTERM or SIGINT.
 */
static int cli_tcp_run(struct cli_tcp *t)
{
	bool stay = t->o.given & CLI_OPT_STAY, done = false;
	int i, nfds = CLI_PFD_PEERS + t->n, ret = RC_OK;
	struct pollfd *pfd = calloc(nfds, sizeof(*pfd));

	if (!pfd) {
		fprintf(stderr, "%s: out of memory\n", CLI_NAME);
		return RC_LOCAL;
	}

	while (!ret && !done && (stay || t->added < t->n)) {
		pfd[CLI_PFD_SIG].fd = t->sig;
		for (i = 0; i < 2; i++)
			pfd[CLI_PFD_LISTEN4 + i].fd =
				t->added < t->n ? t->lfd[i] : -1;
		for (i = 0; i < t->n; i++)
			pfd[CLI_PFD_PEERS + i].fd =
				stay && t->peers[i].conn == CLI_CONN_OPEN ?
				t->peers[i].fd : -1;
		for (i = 0; i < nfds; i++)
			pfd[i].events = POLLIN;

		if (poll(pfd, nfds, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: poll: %s\n", CLI_NAME,
				strerror(errno));
			ret = RC_LOCAL;
			break;
		}

		for (i = 0; i < t->n; i++)
			if (pfd[CLI_PFD_PEERS + i].revents)
				cli_tcp_recv(t, &t->peers[i],
					     pfd[CLI_PFD_PEERS + i].revents);
		for (i = 0; !ret && i < 2; i++)
			if (pfd[CLI_PFD_LISTEN4 + i].revents)
				ret = cli_tcp_accept(t, t->lfd[i]);
		if (!ret && pfd[CLI_PFD_SIG].revents)
			done = cli_tcp_signal(t);
	}

	free(pfd);
	return ret;
}

/* Close what @t holds but its peers array. */
static void cli_tcp_close(struct cli_tcp *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->peers[i].fd >= 0)
			close(t->peers[i].fd);
	for (i = 0; i < 2; i++)
		if (t->lfd[i] >= 0)
			close(t->lfd[i]);
	if (t->sig >= 0)
		close(t->sig);
	free(t->o.rec);
}

static int cli_new_tcp_peer(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_peer p = { .fd = -1 };
	struct cli_tcp t = {
		.peers = &p,
		.n = 1,
		.lfd = { -1, -1 },
		.sig = -1,
	};
	unsigned long rport;
	int fd, ret;

	if (cli_req_init(&t.req, OVPN_CMD_PEER_NEW, argv[1]) ||
	    arg_uint("peer id", argv[2], UINT32_MAX, &p.id) ||
	    arg_uint("remote port", argv[4], USHRT_MAX, &rport))
		return cmd_usage(cmd);

	/* the remote stays out of the request: no CLI_OPT_REMOTE */
	if (parse_addr(argv[3], &p.o.remote)) {
		fprintf(stderr, "%s: bad remote '%s'\n", CLI_NAME, argv[3]);
		return cmd_usage(cmd);
	}

	if (cli_parse_opts(&p.o, CLI_NEW_TCP_PEER_OPTS, argc - 5, argv + 5)) {
		free(p.o.rec);
		return cmd_usage(cmd);
	}
	t.o = p.o;

	fd = cli_tcp_connect(&p.o.remote, rport);
	ret = fd < 0 ? RC_LOCAL : cli_tcp_add(&t, &p, fd);
	if (!ret)
		ret = cli_announce(fd, &t.o, true, &t.sig);
	if (!ret)
		ret = cli_tcp_run(&t);

	/* a refused peer still holds its connection in p.fd */
	cli_tcp_close(&t);
	return ret;
}

static int cli_tcp_listen_cmd(const struct cli_cmd *cmd, int argc,
			      char **argv)
{
	struct cli_addr any4 = { .family = AF_INET };
	struct cli_addr any6 = { .family = AF_INET6 };
	struct cli_tcp t = {
		.lfd = { -1, -1 },
		.sig = -1,
		.tag = true,
	};
	unsigned long lport;
	int port, ret = RC_LOCAL;

	if (cli_req_init(&t.req, OVPN_CMD_PEER_NEW, argv[1]) ||
	    arg_uint("local port", argv[2], USHRT_MAX, &lport) ||
	    cli_parse_opts(&t.o, CLI_TCP_LISTEN_OPTS, argc - 4, argv + 4)) {
		free(t.o.rec);
		return cmd_usage(cmd);
	}

	t.n = cli_read_peers(argv[3], false, &t.peers);
	if (t.n < 0) {
		t.n = 0;
		goto out;
	}

	/* port 0: the IPv6 listener takes the port the IPv4 one got */
	t.lfd[0] = cli_tcp_listen(&any4, lport);
	port = t.lfd[0] < 0 ? -1 : cli_local_port(t.lfd[0]);
	t.lfd[1] = port < 0 ? -1 : cli_tcp_listen(&any6, port);
	if (t.lfd[1] < 0) {
		fprintf(stderr, "%s: cannot listen on port %lu: %s\n",
			CLI_NAME, lport, strerror(errno));
		goto out;
	}

	ret = cli_announce(t.lfd[0], &t.o, true, &t.sig);
	if (!ret)
		ret = cli_tcp_run(&t);

out:
	cli_tcp_close(&t);
	free(t.peers);
	return ret;
}

static int cli_set_peer(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_peer p = { .fd = -1 };
	struct cli_req req;

	if (cli_req_init(&req, OVPN_CMD_PEER_SET, argv[1]) ||
	    arg_uint("peer id", argv[2], UINT32_MAX, &p.id) ||
	    cli_parse_opts(&p.o, CLI_SET_PEER_OPTS, argc - 3, argv + 3))
		return cmd_usage(cmd);

	return cli_peer_request(&req, &p);
}

/* get_peer and del_peer, told apart by their name */
static int cli_peer_cmd(const struct cli_cmd *cmd, int argc, char **argv)
{
	bool get = !strcmp(cmd->name, "get_peer");
	struct cli_peer p = { .fd = -1 };
	struct cli_req req;

	if (cli_req_init(&req, get ? OVPN_CMD_PEER_GET : OVPN_CMD_PEER_DEL,
			 argv[1]))
		return cmd_usage(cmd);

	if (get)
		req.parse = cli_peer_reply;
	/* only get_peer may leave the id out */
	if (argc < 3) {
		req.flags = NLM_F_DUMP;
		return cli_genl_once(&req);
	}

	if (arg_uint("peer id", argv[2], UINT32_MAX, &p.id))
		return cmd_usage(cmd);

	return cli_peer_request(&req, &p);
}

/* key commands */

/* Skip leading and cut trailing blanks. */
static char *cli_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;

	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';

	return s;
}

/* The four lines of a key file (see the top of this file) into @k. */
static int cli_read_key_file(const char *path, struct cli_key *k)
{
	static const size_t sizes[CLI_KEY_LINES] = {
		CLI_KEY_FILE_LEN, CLI_KEY_FILE_LEN,
		OVPN_NONCE_TAIL_SIZE, OVPN_NONCE_TAIL_SIZE,
	};
	unsigned char *dst[CLI_KEY_LINES] = {
		k->key[0], k->key[1], k->tail[0], k->tail[1],
	};
	size_t cap = 0, len;
	unsigned int n = 0;
	char *line = NULL, *s;
	bool bad = false;
	FILE *f;

	f = cli_fopen(path);
	if (!f)
		return -1;

	while (getline(&line, &cap, f) >= 0) {
		s = cli_trim(line);
		if (!*s || *s == '#')
			continue;
		bad = n == CLI_KEY_LINES ||
		      parse_hex(s, dst[n], sizes[n], &len) || len != sizes[n];
		if (bad)
			break;
		n++;
	}

	bad = bad || ferror(f) || n != CLI_KEY_LINES;
	if (bad)
		fprintf(stderr, "%s: %s: not a key file\n", CLI_NAME, path);

	free(line);
	fclose(f);
	return bad ? -1 : 0;
}

static int cli_put_keydir(struct nl_msg *msg, int type,
			  const struct cli_key *k, int which)
{
	struct nlattr *dir = cli_nest_start(msg, type);
	bool epoch = k->epoch == CLI_EPOCH_BOTH ||
		     (k->epoch == CLI_EPOCH_ENCRYPT_ONLY &&
		      type == OVPN_A_KEYCONF_ENCRYPT_DIR);

	if (!dir ||
	    nla_put(msg, OVPN_A_KEYDIR_CIPHER_KEY,
		    cli_ciphers[k->cipher].key_len, k->key[which]) < 0)
		return -1;
	if (epoch ?
	    nla_put(msg, OVPN_A_KEYDIR_EPOCH_SECRET, CLI_KEY_FILE_LEN,
		    k->key[which]) < 0 :
	    nla_put(msg, OVPN_A_KEYDIR_NONCE_TAIL, OVPN_NONCE_TAIL_SIZE,
		    k->tail[which]) < 0)
		return -1;

	cli_nest_end(msg, dir);
	return 0;
}

/* The attributes of a keyconf nest. */
static int cli_key_put(struct nl_msg *msg, const void *arg)
{
	const struct cli_key *k = arg;

	if (nla_put_u32(msg, OVPN_A_KEYCONF_PEER_ID, k->peer_id) < 0 ||
	    (k->has_slot &&
	     nla_put_u32(msg, OVPN_A_KEYCONF_SLOT, k->slot) < 0))
		return -1;

	if (k->cipher < 0)
		return 0;

	if (nla_put_u32(msg, OVPN_A_KEYCONF_KEY_ID, k->key_id) < 0 ||
	    nla_put_u32(msg, OVPN_A_KEYCONF_CIPHER_ALG,
			cli_ciphers[k->cipher].alg) < 0 ||
	    cli_put_keydir(msg, OVPN_A_KEYCONF_ENCRYPT_DIR, k, k->dir) ||
	    cli_put_keydir(msg, OVPN_A_KEYCONF_DECRYPT_DIR, k, !k->dir))
		return -1;

	return 0;
}

static int cli_key_request(struct cli_req *req, const struct cli_key *k)
{
	req->body = cli_nest_body(OVPN_A_KEYCONF, cli_key_put, k);
	if (!req->body)
		return cli_build_failed(NULL);

	return cli_genl_once(req);
}

/* "<ifname> <peer_id> [slot]" of every key command. */
static int cli_key_args(struct cli_req *req, unsigned int cmd, int argc,
			char **argv, struct cli_key *k)
{
	memset(k, 0, sizeof(*k));
	k->cipher = -1;
	k->has_slot = argc > 3;

	if (cli_req_init(req, cmd, argv[1]) ||
	    arg_uint("peer id", argv[2], UINT32_MAX, &k->peer_id))
		return -1;

	if (k->has_slot &&
	    parse_name(argv[3], ovpn_slot_names, ARRAY_SIZE(ovpn_slot_names),
		       UINT32_MAX, &k->slot)) {
		fprintf(stderr, "%s: bad slot '%s'\n", CLI_NAME, argv[3]);
		return -1;
	}

	return 0;
}

static int cli_new_key(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_key k;
	struct cli_req req;

	(void)argc;

	if (cli_key_args(&req, OVPN_CMD_KEY_NEW, 4, argv, &k) ||
	    arg_uint("key id", argv[4], UINT32_MAX, &k.key_id) ||
	    arg_uint("key direction", argv[6], 1, &k.dir))
		return cmd_usage(cmd);
	if (argc > 8 &&
	    parse_name(argv[8], cli_formats, ARRAY_SIZE(cli_formats), 0,
		       &k.epoch)) {
		fprintf(stderr, "%s: bad format '%s'\n", CLI_NAME, argv[8]);
		return cmd_usage(cmd);
	}

	for (k.cipher = 0; k.cipher < (int)ARRAY_SIZE(cli_ciphers); k.cipher++)
		if (!strcmp(argv[5], cli_ciphers[k.cipher].name))
			break;
	if (k.cipher == (int)ARRAY_SIZE(cli_ciphers)) {
		fprintf(stderr, "%s: bad cipher '%s'\n", CLI_NAME, argv[5]);
		return cmd_usage(cmd);
	}

	if (cli_read_key_file(argv[7], &k))
		return RC_LOCAL;

	return cli_key_request(&req, &k);
}

/* get_key, swap_keys and del_key, told apart by their name */
static int cli_key_cmd(const struct cli_cmd *cmd, int argc, char **argv)
{
	unsigned int op = OVPN_CMD_KEY_SWAP;
	struct cli_key k;
	struct cli_req req;

	if (!strcmp(cmd->name, "get_key"))
		op = OVPN_CMD_KEY_GET;
	else if (!strcmp(cmd->name, "del_key"))
		op = OVPN_CMD_KEY_DEL;

	if (cli_key_args(&req, op, argc, argv, &k))
		return cmd_usage(cmd);

	if (op == OVPN_CMD_KEY_GET)
		req.parse = cli_key_reply;
	return cli_key_request(&req, &k);
}

/* notifications */

static int cli_ntf_parse(struct nlmsghdr *nlh, void *arg)
{
	struct genlmsghdr *ghdr = nlmsg_data(nlh);
	struct cli_listen *listen = arg;
	size_t i;

	if (nlmsg_datalen(nlh) < (int)GENL_HDRLEN ||
	    listen->seen >= listen->count)
		return 0;

	listen->seen++;
	for (i = 0; i < ARRAY_SIZE(cli_ntf_views); i++)
		if (cli_ntf_views[i].cmd == ghdr->cmd)
			return cli_print_view(nlh, &cli_ntf_views[i]);

	printf("ntf %u\n", ghdr->cmd);
	return 0;
}

/* "[seconds] [count <n>]" of listen_mcast. */
static int cli_listen_args(int argc, char **argv, unsigned long *secs,
			   struct cli_listen *listen)
{
	int i = 1;

	if (i < argc && strcmp(argv[i], "count")) {
		if (arg_uint("timeout", argv[i], CLI_LISTEN_MAX_S, secs))
			return -1;
		i++;
	}

	if (i == argc)
		return 0;

	if (strcmp(argv[i], "count") || i + 2 != argc)
		return -1;

	return arg_uint("count", argv[i + 1], ULONG_MAX - 1, &listen->count);
}

static int cli_join_peers(struct cli_nl *nl, const struct cli_family *fam)
{
	unsigned int i;
	int grp;

	for (i = 0; i < fam->n_grps; i++)
		if (!strcmp(fam->grps[i].name, OVPN_MCGRP_PEERS))
			break;
	if (i == fam->n_grps) {
		printf("ERR %s no multicast group %s\n", errno_name(ENOENT),
		       OVPN_MCGRP_PEERS);
		return RC_KERNEL;
	}

	/*
	 * The kernel decides who may join (CAP_NET_ADMIN): its errno is
	 * printed as any other answer of the kernel's, which libnl's own
	 * join would translate into a code of its own.
	 */
	grp = fam->grps[i].id;
	if (setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK,
		       NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)) < 0) {
		printf("ERR %s cannot join group %s\n", errno_name(errno),
		       OVPN_MCGRP_PEERS);
		return RC_KERNEL;
	}

	return RC_OK;
}

static int cli_listen_mcast(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_listen listen = { .count = ULONG_MAX };
	unsigned long secs = CLI_LISTEN_DEFAULT_S;
	struct pollfd pfd = { .events = POLLIN };
	int rcvbuf = CLI_LISTEN_RCVBUF;
	long long deadline, left;
	struct cli_family fam;
	struct cli_nl nl;
	int ret;

	if (cli_listen_args(argc, argv, &secs, &listen))
		return cmd_usage(cmd);

	ret = cli_genl_open(&nl, &fam);
	if (ret)
		return ret;

	ret = cli_join_peers(&nl, &fam);
	if (ret)
		goto out;

	/* notifications carry no sequence number of ours */
	nl_cb_set(nl.cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, cli_nl_noseq_cb, NULL);
	nl.parse = cli_ntf_parse;
	nl.parse_arg = &listen;
	printf("READY\n");

	pfd.fd = nl_socket_get_fd(nl.sk);
	/*
	 * Peers removed together (a socket closing, timers expiring in the
	 * same second) are notified in one burst: room for thousands, where
	 * root may have it.
	 */
	setsockopt(pfd.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		   sizeof(rcvbuf));
	deadline = cli_now_ms() + secs * 1000LL;
	while (listen.seen < listen.count &&
	       (left = deadline - cli_now_ms()) > 0) {
		pfd.revents = 0;
		if (poll(&pfd, 1, left) < 0 && errno != EINTR) {
			fprintf(stderr, "%s: poll: %s\n", CLI_NAME,
				strerror(errno));
			ret = RC_LOCAL;
			break;
		}
		if (!(pfd.revents & POLLIN))
			continue;

		ret = nl_recvmsgs(nl.sk, nl.cb);
		/* ENOBUFS: some were dropped; those after them still come */
		if (ret == -NLE_NOMEM) {
			printf("ntf overrun\n");
			fflush(stdout);
			ret = RC_OK;
			continue;
		}
		if (ret < 0) {
			fprintf(stderr, "%s: cannot receive notifications\n",
				CLI_NAME);
			ret = RC_LOCAL;
			break;
		}
		ret = RC_OK;
	}

out:
	cli_nl_close(&nl);
	return ret;
}

/* name, handler, least and most arguments, their synopsis, help */
#define CLI_CMD(_name, _fn, _min, _max, _args, _help) \
	{ .name = _name, .handler = _fn, .min_args = _min, \
	  .max_args = _max, .args = _args, .help = _help }

static const struct cli_cmd cli_cmds[] = {
	CLI_CMD("new_iface", cli_new_iface, 1, 2, "<ifname> [p2p|mp|<number>]",
		NULL),
	CLI_CMD("del_iface", cli_del_iface, 1, 1, "<ifname>", NULL),
	CLI_CMD("get_mode", cli_get_mode, 1, 1, "<ifname>", NULL),
	CLI_CMD("family", cli_family, 0, 0, "", NULL),
	CLI_CMD("cmd", cli_genl_cmd, 1, 4,
		"<CMD> [ifindex <n> | ifname <name>] [dump]", NULL),
	CLI_CMD("new_peer", cli_new_peer, 5, INT_MAX,
		"<ifname> <peer_id> <lport> <raddr> <rport> [options]",
		"options: vpn <addr> (once per family), tx_id <n>,\n"
		"  local <addr>, keepalive <interval> <timeout>,\n"
		"  mark <n>, mssfix <n>, stay\n"
		"prints READY <port>; stay: then CTRL <len> <hex> for\n"
		"each datagram received, until SIGTERM or SIGINT"),
	CLI_CMD("new_multi_peer", cli_new_multi_peer, 3, 9,
		"<ifname> <lport> <peers_file> [options]",
		"options: keepalive <interval> <timeout> (every peer's),\n"
		"  mark <n>, stay\n"
		"peers_file lines: <peer_id> <raddr> <rport> <vpn4|->\n"
		"  <vpn6|-> [tx_id]; output as new_peer"),
	CLI_CMD("new_tcp_peer", cli_new_tcp_peer, 4, INT_MAX,
		"<ifname> <peer_id> <raddr> <rport> [options]",
		"options: vpn <addr> (once per family), tx_id <n>,\n"
		"  keepalive <interval> <timeout>, mssfix <n>,\n"
		"  ctrl <hex>, stay\n"
		"connects to raddr:rport and adds the peer on that\n"
		"  socket; ctrl: then sends it one control record,\n"
		"  the payload <hex> after its 2-byte length;\n"
		"prints READY <local port>; stay: then\n"
		"  CTRL <len> <hex> a record received (length prefix\n"
		"  included, 64 bytes shown), EOF at its end, CLOSED\n"
		"  once SIGUSR1 closed the socket, SHUT once SIGUSR2\n"
		"  shut its sending side down; until SIGTERM or SIGINT"),
	CLI_CMD("tcp_listen", cli_tcp_listen_cmd, 3, 6,
		"<ifname> <lport> <peers_file> [ctrl <hex>] [stay]",
		"peers_file lines: <peer_id> <raddr> <vpn4|->\n"
		"  <vpn6|-> [tx_id], raddr the source of its connection;\n"
		"listens on 0.0.0.0 and [::], prints READY <lport>,\n"
		"  then PEER <peer_id> a peer added (UNKNOWN <addr>\n"
		"  on stderr for a stranger), leaving once all are in;\n"
		"stay: also CTRL <peer_id> <len> <hex>, EOF <peer_id>\n"
		"  CLOSED and SHUT as new_tcp_peer, until SIGTERM or\n"
		"  SIGINT"),
	CLI_CMD("set_peer", cli_set_peer, 2, INT_MAX,
		"<ifname> <peer_id> [options]",
		"options: remote <addr> <port>, vpn <addr>,\n"
		"  keepalive <interval> <timeout>, tx_id <n>,\n"
		"  local <addr>, mssfix <n>"),
	CLI_CMD("del_peer", cli_peer_cmd, 2, 2, "<ifname> <peer_id>", NULL),
	CLI_CMD("get_peer", cli_peer_cmd, 1, 2, "<ifname> [peer_id]",
		"one \"peer key=value...\" line a peer; all without id"),
	CLI_CMD("new_key", cli_new_key, 7, 8,
		"<ifname> <peer_id> <slot> <key_id> <cipher> <dir> <file> [format]",
		"slot: primary or secondary; key_id: 0 to 7;\n"
		"cipher: aes128, aes192, aes256, chachapoly or none;\n"
		"dir: 0 or 1; file: see the source;\n"
		"format: v2 (the default), epoch or epoch-encrypt-only"),
	CLI_CMD("get_key", cli_key_cmd, 3, 3,
		"<ifname> <peer_id> <primary|secondary>", NULL),
	CLI_CMD("swap_keys", cli_key_cmd, 2, 2, "<ifname> <peer_id>", NULL),
	CLI_CMD("del_key", cli_key_cmd, 3, 3,
		"<ifname> <peer_id> <primary|secondary>", NULL),
	CLI_CMD("listen_mcast", cli_listen_mcast, 0, 3, "[seconds] [count <n>]",
		"prints READY, then a \"ntf ...\" line a notification"),
};

static void cli_help(FILE *out)
{
	size_t i;

	fprintf(out, "usage: %s <command> [arguments]\n\ncommands:\n",
		CLI_NAME);
	for (i = 0; i < ARRAY_SIZE(cli_cmds); i++)
		cli_print_help(out, &cli_cmds[i], "  ");
	fprintf(out, "\n<CMD> of cmd: a decimal number or one of:");
	for (i = 0; i < ARRAY_SIZE(ovpn_cmd_names); i++)
		if (ovpn_cmd_names[i])
			fprintf(out, " %s", ovpn_cmd_names[i]);
	fprintf(out, "\n\nexit status: 0 ok, 1 usage or local error, ");
	fprintf(out, "2 refused (\"ERR <ENAME> <message>\" on stdout)\n");
}

int main(int argc, char **argv)
{
	const struct cli_cmd *cmd;
	size_t i;

	/* tests read the output of a tool that keeps running */
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (argc < 2) {
		cli_help(stderr);
		return RC_USAGE;
	}

	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "--help")) {
		cli_help(stdout);
		return RC_OK;
	}

	for (i = 0; i < ARRAY_SIZE(cli_cmds); i++) {
		cmd = &cli_cmds[i];
		if (strcmp(argv[1], cmd->name))
			continue;

		/* the handler sees its own name as argv[0] */
		if (argc - 2 < cmd->min_args || argc - 2 > cmd->max_args)
			return cmd_usage(cmd);

		return cmd->handler(cmd, argc - 1, argv + 1);
	}

	fprintf(stderr, "%s: unknown command '%s'\n", CLI_NAME, argv[1]);
	cli_help(stderr);
	return RC_USAGE;
}
