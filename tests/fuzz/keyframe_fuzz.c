/* libFuzzer target for the keyframe decoder (collector/keyframe.h): a
 * recording's KEYFRAME payload or a viewer's keyframe reply, both
 * untrusted. A keyframe that decodes must encode back to bytes that decode
 * to the same encoding, and the state it gives must take a further tick
 * (a decoded state is used, not only built). */
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "keyframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void apply_one_tick(struct coll_state *s)
{
	struct coll_delta d;
	coll_delta_init(&d, s->ticks_applied ? s->last_t + 1 : 1700000000, s->tick_ns);
	struct coll_key k = coll_key_rank(3, IOP_LAYER_POSIX, IOP_CLASS_WRITE);
	struct coll_cell *c;
	if (coll_tick_row(&d.tick, &k, &c) == IOP_OK)
		coll_cell_add_call(c, 1000, 4096, true, false);
	struct coll_counter ctr = {.file = 1, .ops = 1, .bytes = 4096, .rank = 3, .pid = 9,
	                           .layer = IOP_LAYER_POSIX, .cls = IOP_CLASS_WRITE};
	(void)coll_delta_add_counter(&d, &ctr);
	(void)coll_state_apply(s, &d);
	(void)coll_state_tick(s, d.tick.t);
	(void)coll_state_ranks_live(s);
	(void)coll_state_nodes(s);
	coll_delta_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct coll_state s;
	if (coll_state_decode_keyframe(&s, data, size) == IOP_OK) {
		uint8_t *a = NULL, *b = NULL;
		size_t ca = 0, cb = 0, la, lb;
		if (coll_state_encode_keyframe(&s, 0, &a, &ca, &la) != IOP_OK)
			abort();
		struct coll_state t;
		if (coll_state_decode_keyframe(&t, a, la) != IOP_OK)
			abort();
		if (coll_state_encode_keyframe(&t, 0, &b, &cb, &lb) != IOP_OK || la != lb ||
		    memcmp(a, b, la))
			abort();
		coll_state_free(&t);
		free(a);
		free(b);
		apply_one_tick(&s);
	}
	coll_state_free(&s);
	return 0;
}
