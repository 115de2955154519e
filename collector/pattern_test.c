/* Unit tests for the access-pattern classifier (pattern.h) and its use per
 * (process, file, layer, class) in the leaf's counters (proc.h). */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "pattern.h"
#include "proc.h"

#define KIB 4096

static void first_call_of_a_file(void **state)
{
	struct coll_pat a = {0}, b = {0};
	assert_int_equal(coll_pat_next(&a, 0, KIB), COLL_PAT_CONSEC);    /* at the start */
	assert_int_equal(coll_pat_next(&b, 3 * KIB, KIB), COLL_PAT_SEQ); /* further on */
	assert_int_equal(a.n[COLL_PAT_CONSEC], 1);
	assert_int_equal(b.n[COLL_PAT_SEQ], 1);
}

static void consecutive(void **state)
{
	struct coll_pat s = {0};
	for (uint64_t i = 0; i < 10; i++)
		assert_int_equal(coll_pat_next(&s, i * KIB, KIB), COLL_PAT_CONSEC);
	assert_int_equal(s.n[COLL_PAT_CONSEC], 10);
	assert_int_equal(s.n[COLL_PAT_STRIDE] + s.n[COLL_PAT_SEQ] + s.n[COLL_PAT_RANDOM], 0);
}

/* Rank r of 4 writing interleaved blocks: offset (4 i + r) blocks. */
static void interleaved_strided(void **state)
{
	for (uint64_t r = 0; r < 4; r++) {
		struct coll_pat s = {0};
		assert_int_equal(coll_pat_next(&s, r * KIB, KIB),
		                 r ? COLL_PAT_SEQ : COLL_PAT_CONSEC);
		/* the second has no stride before it to equal */
		assert_int_equal(coll_pat_next(&s, (4 + r) * KIB, KIB), COLL_PAT_SEQ);
		for (uint64_t i = 2; i < 100; i++)
			assert_int_equal(coll_pat_next(&s, (4 * i + r) * KIB, KIB),
			                 COLL_PAT_STRIDE);
		assert_int_equal(s.n[COLL_PAT_STRIDE], 98);
		assert_int_equal(s.n[COLL_PAT_RANDOM], 0);
	}
}

static void stride_change(void **state)
{
	struct coll_pat s = {0};
	coll_pat_next(&s, 0, KIB);
	coll_pat_next(&s, 10 * KIB, KIB);
	assert_int_equal(coll_pat_next(&s, 20 * KIB, KIB), COLL_PAT_STRIDE);
	/* forward, but another stride: sequential, and the new stride holds next */
	assert_int_equal(coll_pat_next(&s, 50 * KIB, KIB), COLL_PAT_SEQ);
	assert_int_equal(coll_pat_next(&s, 80 * KIB, KIB), COLL_PAT_STRIDE);
	/* a consecutive call in between breaks the stride */
	assert_int_equal(coll_pat_next(&s, 81 * KIB, KIB), COLL_PAT_CONSEC);
	assert_int_equal(coll_pat_next(&s, 111 * KIB, KIB), COLL_PAT_SEQ);
}

static void backward_and_overlap(void **state)
{
	struct coll_pat s = {0};
	coll_pat_next(&s, 100 * KIB, KIB);
	assert_int_equal(coll_pat_next(&s, 10 * KIB, KIB), COLL_PAT_RANDOM); /* backward */
	assert_int_equal(coll_pat_next(&s, 10 * KIB, KIB), COLL_PAT_RANDOM); /* the same again */
	assert_int_equal(coll_pat_next(&s, 10 * KIB + 100, KIB), COLL_PAT_RANDOM); /* overlaps */
	/* after a backward call there is no stride: forward again is sequential */
	assert_int_equal(coll_pat_next(&s, 20 * KIB, KIB), COLL_PAT_SEQ);
	/* a backward constant step is not strided */
	struct coll_pat d = {0};
	coll_pat_next(&d, 90 * KIB, KIB);
	coll_pat_next(&d, 80 * KIB, KIB);
	assert_int_equal(coll_pat_next(&d, 70 * KIB, KIB), COLL_PAT_RANDOM);
	assert_int_equal(d.n[COLL_PAT_RANDOM], 2);
}

/* The leaf's state: per (file, layer, class); counters sent once dirty. */
static void per_file_layer_class(void **state)
{
	struct proc p;
	proc_init(&p, 1, 2, 3);
	assert_int_equal(proc_set_name(&p, 5, 0xabc), IOP_OK);
	assert_int_equal(proc_set_name(&p, 6, 0xdef), IOP_OK);
	/* MPI-IO calls and their POSIX pieces at the same offsets, reads
	 * between writes, another file: each its own stream */
	for (uint64_t i = 0; i < 10; i++) {
		uint64_t o = (4 * i + 1) * KIB;
		enum coll_pattern want = i < 2 ? COLL_PAT_SEQ : COLL_PAT_STRIDE;
		assert_int_equal(proc_pattern(&p, 5, IOP_LAYER_POSIX, IOP_CLASS_WRITE, o, KIB),
		                 want);
		assert_int_equal(proc_pattern(&p, 5, IOP_LAYER_MPIIO, IOP_CLASS_WRITE, o, KIB),
		                 want);
		assert_int_equal(proc_pattern(&p, 5, IOP_LAYER_POSIX, IOP_CLASS_READ, i * KIB, KIB),
		                 COLL_PAT_CONSEC);
		assert_int_equal(
		    proc_pattern(&p, 6, IOP_LAYER_POSIX, IOP_CLASS_WRITE, (10 - i) * KIB, KIB),
		    i ? COLL_PAT_RANDOM : COLL_PAT_SEQ);
	}
	struct coll_counter c;
	unsigned n = 0, strided = 0;
	while (proc_take_pattern(&p, &c)) {
		n++;
		assert_int_equal(c.rank, 3);
		assert_true(c.file == 0xabc || c.file == 0xdef);
		strided += (unsigned)c.pat[COLL_PAT_STRIDE];
	}
	assert_int_equal(n, 4); /* each changed counter once */
	assert_int_equal(strided, 16);
	assert_false(proc_take_pattern(&p, &c));
	/* a counter sent because the shim's counts grew takes its pattern along */
	proc_pattern(&p, 5, IOP_LAYER_POSIX, IOP_CLASS_WRITE, 41 * KIB, KIB);
	struct iop_counter k = {.file = 5,
	                        .layer = IOP_LAYER_POSIX,
	                        .cls = IOP_CLASS_WRITE,
	                        .ops = 11},
	                   now;
	bool changed;
	uint64_t pat[COLL_PAT__COUNT];
	assert_int_equal(proc_counter(&p, &k, &now, &changed, pat), IOP_OK);
	assert_true(changed);
	assert_int_equal(pat[COLL_PAT_STRIDE], 9);
	assert_false(proc_take_pattern(&p, &c)); /* sent with it */
	proc_free(&p);
}

static void names(void **state)
{
	assert_string_equal(coll_pat_name(COLL_PAT_STRIDE), "strided");
	assert_string_equal(coll_pat_short(COLL_PAT_RANDOM), "rand");
}

/* A run's calls at once (coll_pat_run) come out as call by call: state
 * and counts, from any state before, at any stride (backward, zero,
 * overlapping, at the edge of the offsets). */
static void a_run_at_once(void **state)
{
	(void)state;
	static const uint64_t strides[] = {0, 1, KIB, 2 * KIB, 3 * KIB, KIB - 1, (uint64_t)-KIB,
	                                   (uint64_t)-1, UINT64_C(1) << 63};
	static const uint64_t offsets[] = {0, KIB, 7 * KIB + 5, UINT64_MAX - 10 * KIB,
	                                   UINT64_MAX - KIB};
	static const uint64_t sizes[] = {0, KIB, 2 * KIB};
	unsigned seen = 0;
	srand(11);
	for (int round = 0; round < 4000; round++) {
		struct coll_pat a = {0};
		for (int k = rand() % 3; k > 0; k--) { /* a state before the run */
			(void)coll_pat_next(&a, (uint64_t)(rand() % 16) * KIB, KIB);
		}
		struct coll_pat b = a;
		uint64_t off = offsets[rand() % 5], st = strides[rand() % 9], by = sizes[rand() % 3];
		uint64_t n = 1 + (uint64_t)(rand() % 40);
		uint64_t got[COLL_PAT__COUNT] = {0}, want[COLL_PAT__COUNT] = {0};
		coll_pat_run(&a, off, st, by, n, got);
		for (uint64_t i = 0; i < n; i++)
			want[coll_pat_next(&b, off + i * st, by)]++;
		assert_memory_equal(got, want, sizeof got);
		assert_memory_equal(&a, &b, sizeof a);
		for (int p = 0; p < COLL_PAT__COUNT; p++)
			seen |= (want[p] > 3) << p;
	}
	assert_int_equal(seen, 15); /* runs of every pattern were tried */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(first_call_of_a_file),
	    cmocka_unit_test(a_run_at_once),
	    cmocka_unit_test(consecutive),
	    cmocka_unit_test(interleaved_strided),
	    cmocka_unit_test(stride_change),
	    cmocka_unit_test(backward_and_overlap),
	    cmocka_unit_test(per_file_layer_class),
	    cmocka_unit_test(names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
