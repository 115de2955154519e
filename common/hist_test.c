/* Unit tests for the latency histogram (hist.h).
 *
 * The accuracy tests compare quantiles against exact nearest-rank quantiles
 * of sorted data drawn from the shapes I/O latencies take (uniform, spread
 * over many decades, log-normal, bimodal cache-hit / disk). Data come from a
 * seeded splitmix64, so a failure reproduces. The tests are not linked with
 * libm, so exp() and the normal deviates are computed here.
 *
 * Decoding is attacked with every prefix of a valid encoding and with
 * hand-built encodings that break one rule each; each must give its exact
 * error and leave the histogram empty. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "test_util.h"

#define N_SAMPLES 100000
#define ENC_CAP   16384 /* above the largest possible encoding (~10 KB) */

/* ---------------------------------------------------------------- helpers */

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static double uniform01(uint64_t *s)
{
	return (double)(splitmix64(s) >> 11) * 0x1p-53;
}

/* exp(x) = 2^k * exp(r) with |r| <= ln2/2, where the series converges fast. */
static double exp_nolibm(double x)
{
	const double ln2 = 0.6931471805599453;
	if (x < -700)
		return 0;
	int k = (int)(x / ln2 + (x < 0 ? -0.5 : 0.5));
	double r = x - k * ln2, term = 1, sum = 1;
	for (int i = 1; i < 20; i++) {
		term *= r / i;
		sum += term;
	}
	for (; k > 0; k--)
		sum *= 2;
	for (; k < 0; k++)
		sum /= 2;
	return sum;
}

/* A standard normal deviate by ratio of uniforms (Kinderman-Monahan), which
 * needs only exp: x = v/u is accepted when u <= exp(-x^2/4). */
static double normal(uint64_t *s)
{
	for (;;) {
		double u = uniform01(s);
		double v = (2 * uniform01(s) - 1) * 0.8577638849607068; /* sqrt(2/e) */
		if (u == 0)
			continue;
		double x = v / u;
		if (u <= exp_nolibm(-x * x / 4))
			return x;
	}
}

enum dist { D_UNIFORM, D_LOG_UNIFORM, D_LOG_NORMAL, D_BIMODAL, D__COUNT };
static const char *const dist_name[D__COUNT] = {"uniform 10ns..1ms", "log-uniform 10ns..1h",
                                                "log-normal 100us s=1.5", "bimodal 5us/50ms"};

static uint64_t draw(enum dist d, uint64_t *s)
{
	double x = 0;
	switch (d) {
	case D_UNIFORM:
		x = 10 + uniform01(s) * (1e6 - 10);
		break;
	case D_LOG_UNIFORM:
		x = 10 * exp_nolibm(uniform01(s) * 26.609369868396566); /* ln(3.6e11) */
		break;
	case D_LOG_NORMAL:
		x = 1e5 * exp_nolibm(1.5 * normal(s));
		break;
	default:
		x = (uniform01(s) < 0.6 ? 5e3 : 5e7) * exp_nolibm(0.25 * normal(s));
		break;
	}
	return (uint64_t)(x + 0.5);
}

static uint64_t *gen(enum dist d, uint64_t seed, size_t n)
{
	uint64_t *v = malloc(n * sizeof *v);
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = draw(d, &seed);
	return v;
}

static void record_all(struct iop_hist *h, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(iop_hist_record(h, v[i]), IOP_OK);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The index of the nearest-rank quantile, ceil(q * n) - 1. */
static size_t rank_index(double q, size_t n)
{
	double x = q * (double)n;
	size_t r = (size_t)x;
	if ((double)r < x)
		r++;
	return r ? r - 1 : 0;
}

static size_t encode(const struct iop_hist *h, uint8_t *buf)
{
	struct iop_wcur c = iop_wcur_make(buf, ENC_CAP);
	iop_hist_encode(h, &c);
	assert_int_equal(c.err, IOP_OK);
	return (size_t)(c.p - buf);
}

/* Same contents: summary, canonical encoding, and quantiles on a fine grid. */
static void assert_same(const struct iop_hist *a, const struct iop_hist *b)
{
	static uint8_t ea[ENC_CAP], eb[ENC_CAP];
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->min, b->min);
	assert_int_equal(a->max, b->max);
	assert_int_equal(a->sum, b->sum);
	size_t na = encode(a, ea), nb = encode(b, eb);
	assert_int_equal(na, nb);
	assert_memory_equal(ea, eb, na);
	for (int i = 0; i <= 1000; i++)
		assert_int_equal(iop_hist_quantile(a, i / 1000.0),
		                 iop_hist_quantile(b, i / 1000.0));
}

/* ----------------------------------------------------------- bucket mapping */

/* From its parts (a tick by column, collector/tick_cols.c): count, min,
 * max and sum known, the buckets from iop_hist_encode_buckets, or none for
 * values all in min's bucket; refused: count 0, and no buckets for min
 * and max in two buckets. */
static void test_decode_parts(void **state)
{
	(void)state;
	struct iop_hist h, back;
	iop_hist_init(&h);
	iop_hist_init(&back);
	for (uint64_t v = 100; v < 1000000; v = v * 3 + 7)
		assert_int_equal(iop_hist_record(&h, v), IOP_OK);
	static uint8_t buf[ENC_CAP];
	struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
	iop_hist_encode_buckets(&h, &w);
	struct iop_rcur r = iop_rcur_make(buf, (size_t)(w.p - buf));
	assert_int_equal(iop_hist_decode_parts_in(&back, h.count, h.min, h.max, h.sum, &r, NULL, NULL),
	                 IOP_OK);
	assert_int_equal(iop_rcur_left(&r), 0);
	assert_same(&h, &back);
	iop_hist_reset(&h);
	assert_int_equal(iop_hist_record(&h, 777777), IOP_OK);
	assert_int_equal(iop_hist_decode_parts_in(&back, 1, 777777, 777777, 777777, NULL, NULL, NULL),
	                 IOP_OK);
	assert_same(&h, &back);
	assert_int_equal(iop_hist_decode_parts_in(&back, 1, 100, 777777, 777877, NULL, NULL, NULL),
	                 IOP_ERR_MALFORMED);
	assert_int_equal(back.count, 0);
	assert_int_equal(iop_hist_decode_parts_in(&back, 0, 1, 1, 1, NULL, NULL, NULL),
	                 IOP_ERR_MALFORMED);
	assert_int_equal(back.count, 0);
	iop_hist_free(&h);
	iop_hist_free(&back);
}

static void test_exact_buckets(void **state)
{
	for (unsigned v = 0; v < 64; v++) {
		assert_int_equal(iop_hist_bucket(v), v);
		assert_int_equal(iop_hist_bucket_low(v), v);
		assert_int_equal(iop_hist_bucket_high(v), v);
	}
	assert_int_equal(iop_hist_bucket(64), 64);
	assert_int_equal(iop_hist_bucket(65), 64);
	assert_int_equal(iop_hist_bucket(66), 65);
}

static void test_bucket_contains_value(void **state)
{
	uint64_t s = 1;
	for (int i = 0; i < 200000; i++) {
		uint64_t v = splitmix64(&s) >> (splitmix64(&s) % 64);
		uint64_t c = v > IOP_HIST_MAX_NS ? IOP_HIST_MAX_NS : v;
		unsigned b = iop_hist_bucket(v);
		assert_true(b < IOP_HIST_BUCKETS);
		assert_true(iop_hist_bucket_low(b) <= c && c <= iop_hist_bucket_high(b));
		/* Width at most low / 32: what bounds the error by 1/64. */
		if (b >= 64)
			assert_true(32 * (iop_hist_bucket_high(b) - iop_hist_bucket_low(b) + 1) <=
			            iop_hist_bucket_low(b));
		if (c < IOP_HIST_MAX_NS)
			assert_true(iop_hist_bucket(c + 1) >= b);
	}
}

static void test_buckets_contiguous(void **state)
{
	assert_int_equal(iop_hist_bucket_low(0), 0);
	for (unsigned b = 0; b < IOP_HIST_BUCKETS; b++) {
		assert_int_equal(iop_hist_bucket(iop_hist_bucket_low(b)), b);
		assert_int_equal(iop_hist_bucket(iop_hist_bucket_high(b)), b);
		if (b + 1 < IOP_HIST_BUCKETS)
			assert_int_equal(iop_hist_bucket_high(b) + 1, iop_hist_bucket_low(b + 1));
	}
	assert_int_equal(iop_hist_bucket_high(IOP_HIST_BUCKETS - 1), IOP_HIST_MAX_NS);
}

static void test_clamp_above_max(void **state)
{
	assert_int_equal(iop_hist_bucket(IOP_HIST_MAX_NS), IOP_HIST_BUCKETS - 1);
	assert_int_equal(iop_hist_bucket(IOP_HIST_MAX_NS + 1), IOP_HIST_BUCKETS - 1);
	assert_int_equal(iop_hist_bucket(UINT64_MAX), IOP_HIST_BUCKETS - 1);
	assert_int_equal(iop_hist_bucket(IOP_HIST_MAX_NS / 2), IOP_HIST_BUCKETS - 33);
	struct iop_hist h;
	iop_hist_init(&h);
	assert_int_equal(iop_hist_record(&h, UINT64_MAX), IOP_OK);
	assert_int_equal(h.max, IOP_HIST_MAX_NS);
	assert_int_equal(h.sum, IOP_HIST_MAX_NS);
	assert_int_equal(iop_hist_quantile(&h, 0.5), IOP_HIST_MAX_NS);
	iop_hist_free(&h);
}

/* ---------------------------------------------------------------- accuracy */

static void check_accuracy(enum dist d, uint64_t seed)
{
	static const double qs[] = {0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999};
	uint64_t *v = gen(d, seed, N_SAMPLES);
	struct iop_hist h;
	iop_hist_init(&h);
	record_all(&h, v, N_SAMPLES);
	qsort(v, N_SAMPLES, sizeof *v, cmp_u64);

	double worst = 0;
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
		uint64_t exact = v[rank_index(qs[i], N_SAMPLES)];
		uint64_t est = iop_hist_quantile(&h, qs[i]);
		assert_true(exact > 0);
		double err =
		    (est > exact ? (double)(est - exact) : (double)(exact - est)) / (double)exact;
		if (err > 0.03)
			fail_msg("%s q=%g: exact %llu, estimate %llu", dist_name[d], qs[i],
			         (unsigned long long)exact, (unsigned long long)est);
		if (err > worst)
			worst = err;
	}
	printf("    %-24s worst relative error %.4f%%\n", dist_name[d], worst * 100);
	assert_true(worst < 1.0 / 64);
	assert_int_equal(iop_hist_quantile(&h, 0), v[0]);
	assert_int_equal(iop_hist_quantile(&h, 1), v[N_SAMPLES - 1]);
	assert_int_equal(h.count, N_SAMPLES);
	iop_hist_free(&h);
	free(v);
}

static void test_accuracy_uniform(void **state)
{
	check_accuracy(D_UNIFORM, 11);
}

static void test_accuracy_log_uniform(void **state)
{
	check_accuracy(D_LOG_UNIFORM, 22);
}

static void test_accuracy_log_normal(void **state)
{
	check_accuracy(D_LOG_NORMAL, 33);
}

static void test_accuracy_bimodal(void **state)
{
	check_accuracy(D_BIMODAL, 44);
}

static void test_quantile_edges(void **state)
{
	struct iop_hist h;
	iop_hist_init(&h);
	assert_int_equal(iop_hist_quantile(&h, 0), 0);
	assert_int_equal(iop_hist_quantile(&h, 0.5), 0);
	assert_int_equal(iop_hist_quantile(&h, 1), 0);
	assert_int_equal(iop_hist_record(&h, 1000001), IOP_OK);
	for (int i = -1; i <= 2; i++) /* one value: every q is it, not its bucket's middle */
		assert_int_equal(iop_hist_quantile(&h, i / 2.0), 1000001);
	assert_int_equal(iop_hist_record(&h, 7), IOP_OK);
	assert_int_equal(iop_hist_quantile(&h, -3), 7);
	assert_int_equal(iop_hist_quantile(&h, __builtin_nan("")), 7);
	assert_int_equal(iop_hist_quantile(&h, 0.5), 7);        /* rank 1 */
	assert_int_equal(iop_hist_quantile(&h, 0.51), 1000001); /* rank 2, clamped to max */
	assert_int_equal(iop_hist_quantile(&h, 7), 1000001);
	iop_hist_free(&h);
}

/* ------------------------------------------------------------------- merge */

static void test_merge_associative(void **state)
{
	enum { PART = 20000 };
	uint64_t *pa = gen(D_LOG_NORMAL, 5, PART), *pb = gen(D_UNIFORM, 6, PART),
	         *pc = gen(D_BIMODAL, 7, PART);
	struct iop_hist a, b, c, all, left, bc, right;
	struct iop_hist *hs[] = {&a, &b, &c, &all, &left, &bc, &right};
	for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
		iop_hist_init(hs[i]);
	record_all(&a, pa, PART);
	record_all(&b, pb, PART);
	record_all(&c, pc, PART);
	record_all(&all, pc, PART); /* another order, so the storage grows differently */
	record_all(&all, pa, PART);
	record_all(&all, pb, PART);

	assert_int_equal(iop_hist_merge(&left, &a), IOP_OK); /* (a + b) + c */
	assert_int_equal(iop_hist_merge(&left, &b), IOP_OK);
	assert_int_equal(iop_hist_merge(&left, &c), IOP_OK);
	assert_int_equal(iop_hist_merge(&bc, &b), IOP_OK); /* a + (b + c) */
	assert_int_equal(iop_hist_merge(&bc, &c), IOP_OK);
	assert_int_equal(iop_hist_merge(&right, &a), IOP_OK);
	assert_int_equal(iop_hist_merge(&right, &bc), IOP_OK);
	assert_int_equal(left.count, 3 * PART);
	assert_same(&left, &right);
	assert_same(&left, &all);
	assert_same(&bc, &bc);

	for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
		iop_hist_free(hs[i]);
	free(pa);
	free(pb);
	free(pc);
}

static void test_merge_empty(void **state)
{
	uint64_t *v = gen(D_LOG_NORMAL, 8, 5000);
	struct iop_hist h, ref, empty, copy;
	iop_hist_init(&h);
	iop_hist_init(&ref);
	iop_hist_init(&empty);
	iop_hist_init(&copy);
	record_all(&h, v, 5000);
	record_all(&ref, v, 5000);

	assert_int_equal(iop_hist_merge(&h, &empty), IOP_OK);
	assert_same(&h, &ref);
	assert_int_equal(iop_hist_merge(&copy, &h), IOP_OK);
	assert_same(&copy, &ref);
	assert_int_equal(iop_hist_merge(&empty, &empty), IOP_OK);
	assert_int_equal(empty.count, 0);
	assert_null(empty.bucket);

	/* Merging into itself doubles it. */
	record_all(&ref, v, 5000);
	assert_int_equal(iop_hist_merge(&h, &h), IOP_OK);
	assert_same(&h, &ref);

	iop_hist_free(&h);
	iop_hist_free(&ref);
	iop_hist_free(&copy);
	free(v);
}

/* A bucket can hold UINT32_MAX; going past it is refused, not saturated. */
static void test_bucket_count_limit(void **state)
{
	static uint8_t before[ENC_CAP], after[ENC_CAP];
	struct iop_hist h, g;
	iop_hist_init(&h);
	iop_hist_init(&g);
	assert_int_equal(iop_hist_record_n(&h, 5, UINT64_C(1) << 32), IOP_ERR_INVAL);
	assert_int_equal(h.count, 0);
	assert_int_equal(iop_hist_record_n(&h, 1000, UINT32_MAX), IOP_OK);
	assert_int_equal(iop_hist_record(&h, 2000), IOP_OK);
	size_t n = encode(&h, before);
	assert_int_equal(iop_hist_record(&h, 1000), IOP_ERR_INVAL);
	assert_int_equal(iop_hist_record(&g, 1001), IOP_OK); /* same bucket */
	assert_int_equal(iop_hist_record(&g, 1), IOP_OK);
	assert_int_equal(iop_hist_merge(&h, &g), IOP_ERR_INVAL);
	assert_int_equal(encode(&h, after), n);
	assert_memory_equal(before, after, n);
	assert_int_equal(h.min, 1000);
	assert_int_equal(h.count, (uint64_t)UINT32_MAX + 1);

	/* The sum saturates instead, in the product and in the addition. */
	iop_hist_reset(&g);
	assert_int_equal(iop_hist_record_n(&g, IOP_HIST_MAX_NS, UINT32_MAX), IOP_OK);
	assert_int_equal(g.sum, UINT64_MAX);
	iop_hist_reset(&g);
	assert_int_equal(iop_hist_record_n(&g, IOP_HIST_MAX_NS, 1u << 22), IOP_OK);
	assert_int_equal(g.sum, IOP_HIST_MAX_NS << 22);
	assert_int_equal(iop_hist_record_n(&g, IOP_HIST_MAX_NS, 1u << 22), IOP_OK);
	assert_int_equal(g.sum, UINT64_MAX);
	iop_hist_free(&h);
	iop_hist_free(&g);
}

/* ------------------------------------------------------------------ packing */

/* A histogram whose largest bucket holds most observations: 1, 2 and 4
 * bytes a count. */
static void fill_peaked(struct iop_hist *h, uint64_t most)
{
	iop_hist_init(h);
	uint64_t *v = gen(D_LOG_UNIFORM, most, 3000);
	record_all(h, v, 3000);
	free(v);
	assert_int_equal(iop_hist_record_n(h, 5000, most), IOP_OK);
}

/* Packed, a histogram has the same contents in fewer bytes; recording or
 * merging into it, or merging it into itself, gives what the unpacked one
 * gives. */
static void test_pack(void **state)
{
	const uint64_t most[] = {200, 60000, 70000};
	const size_t width[] = {1, 2, 4};
	for (size_t w = 0; w < sizeof most / sizeof *most; w++) {
		struct iop_hist h, ref;
		fill_peaked(&h, most[w]);
		fill_peaked(&ref, most[w]);
		unsigned first = iop_hist_bucket(h.min), last = iop_hist_bucket(h.max);
		size_t size = iop_hist_packed_size(&h);
		size_t want = (last + 1 - first) * width[w];
		assert_int_equal(size, (want + 3) & ~(size_t)3);
		uint32_t *mem = malloc(size);
		assert_non_null(mem);
		memset(mem, 0xa5, size);
		assert_int_equal(iop_hist_pack(&h, mem), size);
		assert_int_equal(iop_hist_packed_size(&h), size); /* measured the same packed */
		assert_same(&h, &ref);

		struct iop_hist sum; /* a packed histogram merged into another */
		iop_hist_init(&sum);
		assert_int_equal(iop_hist_merge(&sum, &h), IOP_OK);
		assert_same(&sum, &ref);
		assert_int_equal(iop_hist_merge(&sum, &h), IOP_OK);
		assert_int_equal(iop_hist_merge(&ref, &ref), IOP_OK);
		assert_same(&sum, &ref);

		struct iop_hist self; /* packed merged into itself */
		fill_peaked(&self, most[w]);
		uint32_t *mem2 = malloc(size);
		assert_non_null(mem2);
		iop_hist_pack(&self, mem2);
		assert_int_equal(iop_hist_merge(&self, &self), IOP_OK);
		assert_same(&self, &ref);
		iop_hist_free(&self);
		free(mem2);

		/* a record into the packed one: narrow counts move out first */
		uint8_t *before = malloc(size);
		assert_non_null(before);
		memcpy(before, mem, size);
		struct iop_hist plain; /* the same, never packed */
		fill_peaked(&plain, most[w]);
		assert_int_equal(iop_hist_record(&h, 1u << 30), IOP_OK);
		if (width[w] < 4) /* 4-byte counts are written in place */
			assert_memory_equal(before, mem, size);
		assert_int_equal(iop_hist_record(&plain, 1u << 30), IOP_OK);
		assert_int_equal(iop_hist_merge(&h, &h), IOP_OK);
		assert_int_equal(iop_hist_merge(&plain, &plain), IOP_OK);
		assert_same(&h, &plain);
		if (width[w] < 4) { /* h no longer reads mem */
			memset(mem, 0x5a, size);
			assert_same(&h, &plain);
		}
		iop_hist_free(&plain);

		/* reset lets packed memory go without writing it */
		fill_peaked(&self, most[w]);
		uint32_t *mem3 = malloc(size);
		assert_non_null(mem3);
		iop_hist_pack(&self, mem3);
		memcpy(before, mem3, size);
		iop_hist_reset(&self);
		if (width[w] < 4)
			assert_memory_equal(before, mem3, size);
		assert_int_equal(self.count, 0);
		assert_int_equal(iop_hist_record(&self, 77), IOP_OK);
		assert_int_equal(iop_hist_quantile(&self, 0.5), 77);
		free(mem3);
		free(before);
		iop_hist_free(&self);
		iop_hist_free(&h);
		free(mem);
		iop_hist_free(&sum);
		iop_hist_free(&ref);
	}
	struct iop_hist empty;
	iop_hist_init(&empty);
	assert_int_equal(iop_hist_packed_size(&empty), 0);
	assert_int_equal(iop_hist_pack(&empty, NULL), 0);
	assert_int_equal(empty.count, 0);
	assert_int_equal(iop_hist_quantile(&empty, 0.5), 0);
}

/* ----------------------------------------------------------- serialization */

static void test_round_trip(void **state)
{
	static uint8_t buf[ENC_CAP], again[ENC_CAP];
	uint64_t *v = gen(D_LOG_UNIFORM, 9, 30000);
	struct iop_hist h, d;
	iop_hist_init(&h);
	iop_hist_init(&d);
	record_all(&h, v, 30000);
	assert_int_equal(iop_hist_record(&d, 3), IOP_OK); /* stale contents to replace */
	assert_int_equal(iop_hist_record(&d, UINT64_MAX), IOP_OK);

	size_t n = encode(&h, buf);
	struct iop_rcur c = iop_rcur_make(buf, n);
	assert_int_equal(iop_hist_decode(&d, &c), IOP_OK);
	assert_int_equal(iop_rcur_left(&c), 0);
	assert_same(&h, &d);
	assert_int_equal(encode(&d, again), n);
	assert_memory_equal(buf, again, n);

	struct iop_wcur w = iop_wcur_make(again, n - 1);
	iop_hist_encode(&h, &w);
	assert_int_equal(w.err, IOP_ERR_FULL);
	iop_hist_free(&h);
	iop_hist_free(&d);
	free(v);
}

static void test_round_trip_empty(void **state)
{
	uint8_t buf[ENC_CAP];
	struct iop_hist h, d;
	iop_hist_init(&h);
	iop_hist_init(&d);
	assert_int_equal(encode(&h, buf), 1);
	assert_int_equal(buf[0], 0);
	assert_int_equal(iop_hist_record(&d, 12345), IOP_OK);
	struct iop_rcur c = iop_rcur_make(buf, 1);
	assert_int_equal(iop_hist_decode(&d, &c), IOP_OK);
	assert_int_equal(d.count, 0);
	assert_int_equal(iop_hist_quantile(&d, 0.5), 0);
	assert_int_equal(encode(&d, buf), 1);
	iop_hist_free(&d);
}

static void test_encoded_size(void **state)
{
	static uint8_t buf[ENC_CAP];
	uint64_t *v = gen(D_LOG_NORMAL, 10, N_SAMPLES);
	struct iop_hist h;
	iop_hist_init(&h);
	record_all(&h, v, N_SAMPLES);
	size_t n = encode(&h, buf);
	size_t dense = (size_t)(h.hi - h.lo) * sizeof *h.bucket;
	printf("    %d log-normal values: %zu bytes encoded (%u buckets stored, %zu bytes dense)\n",
	       N_SAMPLES, n, (unsigned)(h.hi - h.lo), dense);
	assert_true(n < 1500);
	assert_true(n < dense);
	iop_hist_free(&h);
	free(v);
}

/* ---------------------------------------------------------------- decoding */

/* Decodes len bytes into a histogram that held data; expects err and an
 * empty, still usable histogram. */
static void expect_decode(const uint8_t *buf, size_t len, enum iop_err err)
{
	struct iop_hist h;
	iop_hist_init(&h);
	assert_int_equal(iop_hist_record(&h, 77777), IOP_OK);
	struct iop_rcur c = iop_rcur_make(buf, len);
	enum iop_err got = iop_hist_decode(&h, &c);
	if (got != err)
		fail_msg("decode gave %s, expected %s", iop_errname(got), iop_errname(err));
	if (err != IOP_OK) {
		assert_int_equal(h.count, 0);
		assert_int_equal(iop_hist_quantile(&h, 0.5), 0);
		assert_int_equal(iop_hist_record(&h, 5), IOP_OK);
		assert_int_equal(iop_hist_quantile(&h, 0.5), 5);
	}
	iop_hist_free(&h);
}

/* Builds an encoding from n varints and checks how it decodes. */
static void expect_varints(enum iop_err err, size_t n, const uint64_t *v)
{
	uint8_t buf[256];
	struct iop_wcur c = iop_wcur_make(buf, sizeof buf);
	for (size_t i = 0; i < n; i++)
		iop_put_varint(&c, v[i]);
	assert_int_equal(c.err, IOP_OK);
	expect_decode(buf, (size_t)(c.p - buf), err);
}

#define EXPECT(err, ...)                                                                           \
	expect_varints(err, sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t),                  \
	               (uint64_t[]){__VA_ARGS__})

static void test_decode_truncated(void **state)
{
	static uint8_t buf[ENC_CAP];
	uint64_t *v = gen(D_BIMODAL, 12, 2000);
	struct iop_hist h;
	iop_hist_init(&h);
	record_all(&h, v, 2000);
	size_t n = encode(&h, buf);
	for (size_t len = 0; len <= n; len++) {
		uint8_t *exact = malloc(len ? len : 1); /* so ASan sees any overread */
		assert_non_null(exact);
		memcpy(exact, buf, len);
		expect_decode(exact, len, len < n ? IOP_ERR_TRUNCATED : IOP_OK);
		free(exact);
	}
	iop_hist_free(&h);
	free(v);
}

static void test_decode_rejects(void **state)
{
	const uint64_t M = IOP_HIST_MAX_NS, B = IOP_HIST_BUCKETS, b100 = iop_hist_bucket(100);
	/* count, min, max, sum, n_nonzero, (gap, count)... */
	EXPECT(IOP_OK, 3, 5, 100, 110, 2, 5, 2, b100 - 6, 1);
	EXPECT(IOP_OK, 2, 0, M, M, 2, 0, 1, B - 2, 1);
	/* bucket index out of range */
	EXPECT(IOP_ERR_MALFORMED, 1, M, M, M, 1, B, 1);
	EXPECT(IOP_ERR_MALFORMED, 2, 0, M, M, 2, 0, 1, B - 1, 1);
	EXPECT(IOP_ERR_MALFORMED, 2, 0, M, M, 2, 0, 1, UINT64_MAX, 1);
	/* zero and oversized bucket counts */
	EXPECT(IOP_ERR_MALFORMED, 3, 5, 100, 110, 3, 5, 2, 0, 0, b100 - 7, 1);
	EXPECT(IOP_ERR_MALFORMED, 3, 5, 100, 110, 2, 5, UINT64_C(1) << 32, b100 - 6, 1);
	/* counts not adding up */
	EXPECT(IOP_ERR_INCONSISTENT, 4, 5, 100, 110, 2, 5, 2, b100 - 6, 1);
	EXPECT(IOP_ERR_INCONSISTENT, 2, 5, 100, 110, 2, 5, 2, b100 - 6, 1);
	/* min and max */
	EXPECT(IOP_ERR_MALFORMED, 3, 100, 5, 110, 2, 5, 2, b100 - 6, 1);
	EXPECT(IOP_ERR_MALFORMED, 1, M + 1, M + 1, M, 1, B - 1, 1);
	EXPECT(IOP_ERR_MALFORMED, 3, 5, 100, 110, 2, 6, 2, b100 - 7, 1); /* min not first */
	EXPECT(IOP_ERR_MALFORMED, 3, 5, 100, 110, 2, 5, 2, b100 - 7, 1); /* max not last */
	EXPECT(IOP_ERR_MALFORMED, 3, 5, 100, 110, 1, 5, 3);              /* max not last */
	/* number of non-empty buckets */
	EXPECT(IOP_ERR_MALFORMED, 3, 5, 100, 110, 0);
	EXPECT(IOP_ERR_MALFORMED, 3, 5, 100, 110, B + 1, 5, 2, b100 - 6, 1);
	EXPECT(IOP_ERR_TRUNCATED, 3, 5, 100, 110, B, 5, 2, b100 - 6, 1); /* claims more */
}

static void test_decode_overlong_varint(void **state)
{
	static const uint8_t in_count[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	                                   0x80, 0x80, 0x80, 0x80, 0x00};
	static const uint8_t tenth_too_big[] = {0xff, 0xff, 0xff, 0xff, 0xff,
	                                        0xff, 0xff, 0xff, 0xff, 0x02};
	expect_decode(in_count, sizeof in_count, IOP_ERR_MALFORMED);
	expect_decode(tenth_too_big, sizeof tenth_too_big, IOP_ERR_MALFORMED);

	/* An overlong varint in a pair, after a valid header. */
	uint8_t buf[64];
	struct iop_wcur c = iop_wcur_make(buf, sizeof buf);
	const uint64_t head[] = {1, 5, 5, 5, 1};
	for (size_t i = 0; i < 5; i++)
		iop_put_varint(&c, head[i]);
	iop_put_bytes(&c, in_count, sizeof in_count);
	assert_int_equal(c.err, IOP_OK);
	expect_decode(buf, (size_t)(c.p - buf), IOP_ERR_MALFORMED);
}

/* ---------------------------------------------------------- record & reset */

static void test_record_n_equals_singles(void **state)
{
	static const uint64_t vals[] = {0, 1, 63, 64, 1000, 123456789, IOP_HIST_MAX_NS, UINT64_MAX};
	struct iop_hist many, one;
	iop_hist_init(&many);
	iop_hist_init(&one);
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		uint64_t n = 1 + i * 37;
		assert_int_equal(iop_hist_record_n(&many, vals[i], n), IOP_OK);
		for (uint64_t k = 0; k < n; k++)
			assert_int_equal(iop_hist_record(&one, vals[i]), IOP_OK);
	}
	assert_int_equal(iop_hist_record_n(&many, 999, 0), IOP_OK); /* no-op */
	assert_same(&many, &one);
	assert_int_equal(many.min, 0);
	assert_int_equal(many.max, IOP_HIST_MAX_NS);
	iop_hist_free(&many);
	iop_hist_free(&one);
}

static void test_reset(void **state)
{
	uint64_t *v = gen(D_LOG_NORMAL, 13, 3000);
	struct iop_hist h, fresh;
	iop_hist_init(&h);
	iop_hist_init(&fresh);
	record_all(&h, v, 3000);
	uint32_t *storage = h.bucket;
	iop_hist_reset(&h);
	assert_int_equal(h.count, 0);
	assert_int_equal(h.sum, 0);
	assert_int_equal(iop_hist_quantile(&h, 0.9), 0);
	assert_ptr_equal(h.bucket, storage); /* memory kept */

	assert_int_equal(iop_hist_record(&h, 42), IOP_OK);
	assert_int_equal(iop_hist_record(&h, 4242424242), IOP_OK);
	assert_int_equal(iop_hist_record(&fresh, 42), IOP_OK);
	assert_int_equal(iop_hist_record(&fresh, 4242424242), IOP_OK);
	assert_same(&h, &fresh);
	iop_hist_free(&h);
	assert_null(h.bucket);
	assert_int_equal(h.count, 0);
	iop_hist_free(&fresh);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exact_buckets),
	    cmocka_unit_test(test_decode_parts),
	    cmocka_unit_test(test_bucket_contains_value),
	    cmocka_unit_test(test_buckets_contiguous),
	    cmocka_unit_test(test_clamp_above_max),
	    cmocka_unit_test(test_accuracy_uniform),
	    cmocka_unit_test(test_accuracy_log_uniform),
	    cmocka_unit_test(test_accuracy_log_normal),
	    cmocka_unit_test(test_accuracy_bimodal),
	    cmocka_unit_test(test_quantile_edges),
	    cmocka_unit_test(test_merge_associative),
	    cmocka_unit_test(test_merge_empty),
	    cmocka_unit_test(test_bucket_count_limit),
	    cmocka_unit_test(test_pack),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_round_trip_empty),
	    cmocka_unit_test(test_encoded_size),
	    cmocka_unit_test(test_decode_truncated),
	    cmocka_unit_test(test_decode_rejects),
	    cmocka_unit_test(test_decode_overlong_varint),
	    cmocka_unit_test(test_record_n_equals_singles),
	    cmocka_unit_test(test_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
