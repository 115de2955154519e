/* Seed corpus for keyframe_fuzz: keyframes of an empty state and of short
 * synthetic jobs (small history tiers, so that rings wrap), written to the
 * directory given. Usage: keyframe_seeds DIR */
#include <stdio.h>
#include <stdlib.h>

#include "keyframe.h"
#include "sim.h"

#define SEC 1000000000ull
#define T0  (1700000000ull * SEC)

static int save(const char *dir, const char *name, const uint8_t *buf, size_t len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len) {
		perror(path);
		if (f)
			fclose(f);
		return 1;
	}
	return fclose(f) != 0;
}

static int save_state(const char *dir, const char *name, const struct coll_state *s)
{
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	int rc = coll_state_encode_keyframe(s, 0, &buf, &cap, &len) != IOP_OK ||
	         save(dir, name, buf, len);
	free(buf);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: keyframe_seeds DIR\n");
		return 1;
	}
	int rc = 0;
	struct coll_state empty;
	coll_state_init(&empty, SEC, NULL);
	rc |= save_state(argv[1], "kf-empty", &empty);
	coll_state_free(&empty);
	struct coll_history_cfg h = {.full_ticks = 4, .bin1_ticks = 2, .bin1_count = 2,
	                             .bin2_ticks = 4, .bin2_count = 2};
	static const unsigned ranks[] = {1, 2, 3};
	static const unsigned seconds[] = {3, 8, 20};
	for (unsigned i = 0; i < 3; i++) {
		struct coll_sim sim;
		if (coll_sim_new(&sim, ranks[i], IOP_WL_MIXED, T0, &h, NULL, NULL) ||
		    coll_sim_run_until(&sim, T0 + seconds[i] * SEC, 8)) {
			fprintf(stderr, "keyframe_seeds: the simulated job failed\n");
			return 1;
		}
		char name[32];
		snprintf(name, sizeof name, "kf-job%u", i);
		rc |= save_state(argv[1], name, coll_root_state(sim.root));
		coll_sim_free(&sim);
	}
	return rc;
}
