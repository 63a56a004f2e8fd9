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
 */

#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

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
#define CLI_LISTEN_MAX_S	86400
#define CLI_MAX_GRPS		32
#define CLI_MAX_OPS		256
#define CLI_EXTACK_LEN		256

/* kernel-internal errno that may still leak to userspace */
#define CLI_ENOTSUPP		524

enum cli_rc {
	RC_OK = 0,
	RC_USAGE = 1,
	RC_LOCAL = 1,
	RC_KERNEL = 2,
};

static const struct {
	int err;
	const char *name;
} errno_names[] = {
	{ EPERM, "EPERM" },
	{ ENOENT, "ENOENT" },
	{ ESRCH, "ESRCH" },
	{ EINTR, "EINTR" },
	{ EIO, "EIO" },
	{ ENXIO, "ENXIO" },
	{ E2BIG, "E2BIG" },
	{ EBADF, "EBADF" },
	{ EAGAIN, "EAGAIN" },
	{ ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" },
	{ EFAULT, "EFAULT" },
	{ EBUSY, "EBUSY" },
	{ EEXIST, "EEXIST" },
	{ EXDEV, "EXDEV" },
	{ ENODEV, "ENODEV" },
	{ EINVAL, "EINVAL" },
	{ ENFILE, "ENFILE" },
	{ EMFILE, "EMFILE" },
	{ ENOSPC, "ENOSPC" },
	{ ERANGE, "ERANGE" },
	{ EDEADLK, "EDEADLK" },
	{ ENODATA, "ENODATA" },
	{ EPROTO, "EPROTO" },
	{ EBADMSG, "EBADMSG" },
	{ EOVERFLOW, "EOVERFLOW" },
	{ ENOTSOCK, "ENOTSOCK" },
	{ EDESTADDRREQ, "EDESTADDRREQ" },
	{ EMSGSIZE, "EMSGSIZE" },
	{ EPROTOTYPE, "EPROTOTYPE" },
	{ ENOPROTOOPT, "ENOPROTOOPT" },
	{ EPROTONOSUPPORT, "EPROTONOSUPPORT" },
	{ ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT" },
	{ EOPNOTSUPP, "EOPNOTSUPP" },
	{ EPFNOSUPPORT, "EPFNOSUPPORT" },
	{ EAFNOSUPPORT, "EAFNOSUPPORT" },
	{ EADDRINUSE, "EADDRINUSE" },
	{ EADDRNOTAVAIL, "EADDRNOTAVAIL" },
	{ ENETDOWN, "ENETDOWN" },
	{ ENETUNREACH, "ENETUNREACH" },
	{ ECONNABORTED, "ECONNABORTED" },
	{ ECONNRESET, "ECONNRESET" },
	{ ENOBUFS, "ENOBUFS" },
	{ EISCONN, "EISCONN" },
	{ ENOTCONN, "ENOTCONN" },
	{ ETIMEDOUT, "ETIMEDOUT" },
	{ ECONNREFUSED, "ECONNREFUSED" },
	{ EHOSTUNREACH, "EHOSTUNREACH" },
	{ EALREADY, "EALREADY" },
	{ EINPROGRESS, "EINPROGRESS" },
	{ ENOKEY, "ENOKEY" },
	{ EKEYREJECTED, "EKEYREJECTED" },
	{ CLI_ENOTSUPP, "ENOTSUPP" },
};

static const char * const ovpn_mode_names[] = {
	[OVPN_MODE_P2P] = "p2p",
	[OVPN_MODE_MP] = "mp",
};

static const struct {
	const char *name;
	unsigned int cmd;
} ovpn_cmd_names[] = {
	{ "peer_new", OVPN_CMD_PEER_NEW },
	{ "peer_set", OVPN_CMD_PEER_SET },
	{ "peer_get", OVPN_CMD_PEER_GET },
	{ "peer_del", OVPN_CMD_PEER_DEL },
	{ "peer_del_ntf", OVPN_CMD_PEER_DEL_NTF },
	{ "key_new", OVPN_CMD_KEY_NEW },
	{ "key_get", OVPN_CMD_KEY_GET },
	{ "key_swap", OVPN_CMD_KEY_SWAP },
	{ "key_swap_ntf", OVPN_CMD_KEY_SWAP_NTF },
	{ "key_del", OVPN_CMD_KEY_DEL },
	{ "peer_float_ntf", OVPN_CMD_PEER_FLOAT_NTF },
};

/**
 * struct cli_nl - a netlink socket and the state of its current request
 * @sk: libnl socket
 * @cb: callbacks, all bound to this structure
 * @parse: called for every reply that is not an ACK, an error or a DONE;
 *	returns 0 or -1 (message already printed)
 * @parse_arg: second argument of @parse
 * @nmsgs: replies seen by @parse so far
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
	unsigned int nmsgs;
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

struct cli_cmd {
	const char *name;
	const char *args;
	int min_args;
	int max_args;
	int (*handler)(const struct cli_cmd *cmd, int argc, char **argv);
};

static const char *errno_name(int err)
{
	static char buf[16];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(errno_names); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;

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

static int cmd_usage(const struct cli_cmd *cmd)
{
	fprintf(stderr, "usage: %s %s%s%s\n", CLI_NAME, cmd->name,
		cmd->args[0] ? " " : "", cmd->args);
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

	nl->nmsgs++;
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
	nl->nmsgs = 0;
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
	size_t i;

	if (argc > 2) {
		has_mode = true;
		for (i = 0; i < ARRAY_SIZE(ovpn_mode_names); i++)
			if (!strcmp(argv[2], ovpn_mode_names[i]))
				break;
		mode = i;
		if (i == ARRAY_SIZE(ovpn_mode_names) &&
		    parse_uint(argv[2], 255, &mode)) {
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
	struct nl_msg *msg;

	(void)cmd;
	(void)argc;

	msg = cli_link_msg(RTM_DELLINK, NLM_F_ACK, argv[1]);
	if (!msg)
		return cli_build_failed(NULL);

	return cli_link_request(msg, NULL, NULL);
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
	if (!info[IFLA_INFO_KIND] ||
	    strcmp(nla_get_string(info[IFLA_INFO_KIND]), "ovpn"))
		return 0;
	link->is_ovpn = true;

	if (!info[IFLA_INFO_DATA])
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
	struct nl_msg *msg;
	int ret;

	(void)cmd;
	(void)argc;

	msg = cli_link_msg(RTM_GETLINK, NLM_F_ACK, argv[1]);
	if (!msg)
		return cli_build_failed(NULL);

	ret = cli_link_request(msg, cli_link_parse, &link);
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

static int cli_parse_genl_cmd(const char *str, unsigned int *cmd)
{
	unsigned long val;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ovpn_cmd_names); i++) {
		if (!strcmp(str, ovpn_cmd_names[i].name)) {
			*cmd = ovpn_cmd_names[i].cmd;
			return 0;
		}
	}

	if (parse_uint(str, 255, &val))
		return -1;

	*cmd = val;
	return 0;
}

static int cli_genl_cmd(const struct cli_cmd *cmd, int argc, char **argv)
{
	bool has_ifindex = false, dump = false;
	unsigned long ifindex = 0;
	struct cli_family fam;
	unsigned int genl_cmd;
	struct nl_msg *msg;
	struct cli_nl nl;
	int i, ret;

	if (cli_parse_genl_cmd(argv[1], &genl_cmd)) {
		fprintf(stderr, "%s: unknown command '%s'\n", CLI_NAME,
			argv[1]);
		return cmd_usage(cmd);
	}

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "dump") && !dump) {
			dump = true;
		} else if (!strcmp(argv[i], "ifindex") && !has_ifindex &&
			   i + 1 < argc) {
			has_ifindex = true;
			if (parse_uint(argv[++i], 0xffffffffUL, &ifindex)) {
				fprintf(stderr, "%s: bad ifindex '%s'\n",
					CLI_NAME, argv[i]);
				return cmd_usage(cmd);
			}
		} else if (!strcmp(argv[i], "ifname") && !has_ifindex &&
			   i + 1 < argc) {
			has_ifindex = true;
			ifindex = if_nametoindex(argv[++i]);
			if (!ifindex) {
				fprintf(stderr, "%s: unknown interface '%s'\n",
					CLI_NAME, argv[i]);
				return cmd_usage(cmd);
			}
		} else {
			return cmd_usage(cmd);
		}
	}

	ret = cli_genl_open(&nl, &fam);
	if (ret)
		return ret;

	msg = nlmsg_alloc();
	if (!msg ||
	    !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, fam.id, 0,
			 dump ? NLM_F_DUMP : 0, genl_cmd,
			 OVPN_FAMILY_VERSION) ||
	    (has_ifindex && nla_put_u32(msg, OVPN_A_IFINDEX, ifindex) < 0)) {
		ret = cli_build_failed(msg);
		goto out;
	}

	ret = cli_nl_request(&nl, msg, NULL, NULL);
	if (ret)
		goto out;

	if (dump)
		printf("OK %u\n", nl.nmsgs);
	else
		printf("OK\n");

out:
	cli_nl_close(&nl);
	return ret;
}

static int cli_print_ntf(struct nlmsghdr *nlh, void *arg)
{
	struct genlmsghdr *ghdr = nlmsg_data(nlh);

	(void)arg;

	if (nlmsg_datalen(nlh) < (int)GENL_HDRLEN)
		return 0;

	printf("ntf %u\n", ghdr->cmd);
	fflush(stdout);
	return 0;
}

static long long cli_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int cli_listen_mcast(const struct cli_cmd *cmd, int argc, char **argv)
{
	unsigned long secs = CLI_LISTEN_DEFAULT_S;
	struct pollfd pfd = { .events = POLLIN };
	long long deadline, left;
	struct cli_family fam;
	struct cli_nl nl;
	unsigned int i;
	int ret;

	if (argc > 1 && parse_uint(argv[1], CLI_LISTEN_MAX_S, &secs)) {
		fprintf(stderr, "%s: bad timeout '%s'\n", CLI_NAME, argv[1]);
		return cmd_usage(cmd);
	}

	ret = cli_genl_open(&nl, &fam);
	if (ret)
		return ret;

	for (i = 0; i < fam.n_grps; i++)
		if (!strcmp(fam.grps[i].name, OVPN_MCGRP_PEERS))
			break;
	if (i == fam.n_grps) {
		printf("ERR %s no multicast group %s\n", errno_name(ENOENT),
		       OVPN_MCGRP_PEERS);
		ret = RC_KERNEL;
		goto out;
	}

	ret = nl_socket_add_membership(nl.sk, fam.grps[i].id);
	if (ret < 0) {
		fprintf(stderr, "%s: cannot join group %s: %s\n", CLI_NAME,
			OVPN_MCGRP_PEERS, nl_geterror(ret));
		ret = RC_LOCAL;
		goto out;
	}

	/* notifications carry no sequence number of ours */
	nl_cb_set(nl.cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, cli_nl_noseq_cb, NULL);
	nl.parse = cli_print_ntf;
	nl.parse_arg = NULL;

	pfd.fd = nl_socket_get_fd(nl.sk);
	deadline = cli_now_ms() + secs * 1000LL;
	ret = RC_OK;
	while ((left = deadline - cli_now_ms()) > 0) {
		pfd.revents = 0;
		ret = poll(&pfd, 1, left);
		if (ret < 0 && errno != EINTR) {
			fprintf(stderr, "%s: poll: %s\n", CLI_NAME,
				strerror(errno));
			ret = RC_LOCAL;
			break;
		}
		ret = RC_OK;
		if (!(pfd.revents & POLLIN))
			continue;

		if (nl_recvmsgs(nl.sk, nl.cb) < 0) {
			fprintf(stderr, "%s: cannot receive notifications\n",
				CLI_NAME);
			ret = RC_LOCAL;
			break;
		}
	}

out:
	cli_nl_close(&nl);
	return ret;
}

static const struct cli_cmd cli_cmds[] = {
	{
		.name = "new_iface",
		.args = "<ifname> [p2p|mp|<number>]",
		.min_args = 1,
		.max_args = 2,
		.handler = cli_new_iface,
	},
	{
		.name = "del_iface",
		.args = "<ifname>",
		.min_args = 1,
		.max_args = 1,
		.handler = cli_del_iface,
	},
	{
		.name = "get_mode",
		.args = "<ifname>",
		.min_args = 1,
		.max_args = 1,
		.handler = cli_get_mode,
	},
	{
		.name = "family",
		.args = "",
		.min_args = 0,
		.max_args = 0,
		.handler = cli_family,
	},
	{
		.name = "cmd",
		.args = "<CMD> [ifindex <n> | ifname <name>] [dump]",
		.min_args = 1,
		.max_args = 4,
		.handler = cli_genl_cmd,
	},
	{
		.name = "listen_mcast",
		.args = "[seconds]",
		.min_args = 0,
		.max_args = 1,
		.handler = cli_listen_mcast,
	},
};

static void cli_help(FILE *out)
{
	size_t i;

	fprintf(out, "usage: %s <command> [arguments]\n\ncommands:\n",
		CLI_NAME);
	for (i = 0; i < ARRAY_SIZE(cli_cmds); i++)
		fprintf(out, "  %s%s%s\n", cli_cmds[i].name,
			cli_cmds[i].args[0] ? " " : "", cli_cmds[i].args);
	fprintf(out, "\n<CMD> of cmd: a decimal number or one of:");
	for (i = 0; i < ARRAY_SIZE(ovpn_cmd_names); i++)
		fprintf(out, " %s", ovpn_cmd_names[i].name);
	fprintf(out, "\n\nexit status: 0 ok, 1 usage or local error, ");
	fprintf(out, "2 refused (\"ERR <ENAME> <message>\" on stdout)\n");
}

int main(int argc, char **argv)
{
	const struct cli_cmd *cmd;
	size_t i;

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
