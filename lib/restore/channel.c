// SPDX-License-Identifier: GPL-2.0
/*
 * A restart's channels: the connections between its processes, and to
 * the job's other nodes, made again a kind at a time (Documentation/
 * decisions.md, "Channel kinds"). Each kind, in a file of its own, has
 * two steps: make, every channel of the kind made and sending nothing;
 * talk, each may talk to its peer. No kind's channel talks before every
 * kind's are made, here and, for a job over several nodes, on every node
 * (@o->made: ckptd's "made" and "talk"), so that nothing a channel sends
 * finds its peer missing. TCP is the one kind built (tcp.c); a verbs kind
 * would make its queue pairs in the first step, exchange their new
 * numbers at @o->made as TCP's addresses go through the address map, and
 * connect them and post their receives again in the second.
 */
#include "err.h"
#include "restore_int.h"

static const struct restore_channel *const kinds[] = {
	&restore_channel_tcp,
};

#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

int restore_make_channels(struct restore_chans *c)
{
	unsigned int i;
	int ret = 0;

	c->from = *c->nr;
	for (i = 0; !ret && i < NR_KINDS; i++)
		ret = kinds[i]->make(c);
	if (!ret && c->o && c->o->made)
		ret = c->o->made(c->o->made_arg, c->err);
	for (i = 0; !ret && i < NR_KINDS; i++)
		ret = kinds[i]->talk(c);
	return ret;
}
