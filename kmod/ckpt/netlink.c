// SPDX-License-Identifier: GPL-2.0
/*
 * The generic-netlink family: how ckptd and administrative tools talk to the
 * engine. Every attribute has a policy; strict validation applies to every
 * command (resv_start_op), so unknown attributes are rejected with extack.
 */

#include <linux/module.h>
#include <net/genetlink.h>

#include <uapi/linux/ckpt.h>

#include "netlink.h"

static struct genl_family ckpt_genl_family;

static const struct nla_policy ckpt_policy[CKPT_A_MAX + 1] = {
	[CKPT_A_UAPI_VERSION]	= { .type = NLA_U32 },
	[CKPT_A_RELEASE]	= { .type = NLA_NUL_STRING,
				    .len = CKPT_RELEASE_LEN - 1 },
};

static int get_version_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_put_reply(msg, info, &ckpt_genl_family, 0,
				CKPT_CMD_GET_VERSION);
	if (!hdr)
		goto err_free_msg;

	if (nla_put_u32(msg, CKPT_A_UAPI_VERSION, CKPT_UAPI_VERSION) ||
	    nla_put_string(msg, CKPT_A_RELEASE, CKPT_RELEASE))
		goto err_free_msg;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free_msg:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static const struct genl_small_ops ckpt_genl_ops[] = {
	{
		.cmd	= CKPT_CMD_GET_VERSION,
		.doit	= get_version_doit,
	},
};

static struct genl_family ckpt_genl_family __ro_after_init = {
	.name		= CKPT_GENL_NAME,
	.version	= CKPT_GENL_VERSION,
	.maxattr	= CKPT_A_MAX,
	.policy		= ckpt_policy,
	.module		= THIS_MODULE,
	.small_ops	= ckpt_genl_ops,
	.n_small_ops	= ARRAY_SIZE(ckpt_genl_ops),
	.resv_start_op	= CKPT_CMD_GET_VERSION + 1,
};

int __init ckpt_netlink_init(void)
{
	return genl_register_family(&ckpt_genl_family);
}

void ckpt_netlink_uninit(void)
{
	genl_unregister_family(&ckpt_genl_family);
}
