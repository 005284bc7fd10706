// SPDX-License-Identifier: GPL-2.0
/*
 * ckptd's channel steps, a kind at a time (channel.h). TCP is the one
 * kind built; verbs would be a second entry of kinds[], its ends the
 * queue pairs a share's images list, its join the check that each side's
 * posted and completed work requests meet the other's. Its steps inside
 * the processes (a callback before the freeze, the rebuild at a restart)
 * are libckpt's and the restorer's (lib/restore/channel.c), not ckptd's.
 */
#include <errno.h>

#include "channel.h"

static const struct channel_kind *const kinds[] = {
	&channel_tcp,
};

#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

json_t *channel_ends(const char *dir, const struct ckpt_tree *t,
		     struct ckpt_err *err)
{
	json_t *all = json_object(), *ends;
	unsigned int i;

	if (!all) {
		ckpt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < NR_KINDS; i++) {
		ends = kinds[i]->ends(dir, t, err);
		if (ends && json_object_set_new(all, kinds[i]->name, ends)) {
			ckpt_err_set(err, ENOMEM, "out of memory");
			ends = NULL;
		}
		if (!ends) {
			json_decref(all);
			return NULL;
		}
	}
	return all;
}

int channel_add(json_t *all, const char *node, const json_t *from,
		struct ckpt_err *err)
{
	json_t *ends, *list;
	unsigned int i;

	for (i = 0; i < NR_KINDS; i++) {
		ends = json_object_get(from, kinds[i]->name);
		if (!json_is_array(ends))
			return ckpt_err_set(err, EPROTO, "node %.64s: no list of its %s connections",
					    node, kinds[i]->name);
		list = json_object_get(all, kinds[i]->name);
		if (!list && json_object_set_new(all, kinds[i]->name,
						 list = json_array()))
			return ckpt_err_set(err, ENOMEM, "out of memory");
		if (json_array_append_new(list, json_pack("{s:s, s:O}", "node", node,
							  kinds[i]->name, ends)))
			return ckpt_err_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

int channel_join(const json_t *all, json_t *outside, json_t *later,
		 struct ckpt_err *err)
{
	json_t *none = json_array(), *list;
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < NR_KINDS; i++) {
		list = json_object_get(all, kinds[i]->name);
		ret = kinds[i]->join(list ?: none, outside, later, err);
	}
	json_decref(none);
	return ret;
}

json_t *channel_outside(const json_t *from)
{
	json_t *list = json_array(), *e, *o;
	unsigned int i;
	size_t k;

	for (i = 0; list && i < NR_KINDS; i++)
		json_array_foreach(json_object_get(from, kinds[i]->name), k, e) {
			o = kinds[i]->outside(e);
			if (o)
				json_array_append_new(list, o);
		}
	return list;
}
