/* Codec: round trips of every fixed width and varint boundary, explicit
 * byte order, and bounds: puts that do not fit and gets past the end fail
 * without touching memory outside the buffer, and the error sticks. */
#include <string.h>

#include "codec.h"
#include "test_util.h"

static void fixed_widths_are_little_endian(void **state)
{
	uint8_t buf[15];
	struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
	iop_put_u8(&w, 0xab);
	iop_put_u16le(&w, 0x1234);
	iop_put_u32le(&w, 0xdeadbeef);
	iop_put_u64le(&w, 0x0102030405060708u);
	assert_int_equal(w.err, IOP_OK);
	assert_int_equal(iop_wcur_room(&w), 0);
	const uint8_t want[15] = {0xab, 0x34, 0x12, 0xef, 0xbe, 0xad, 0xde, 8, 7, 6, 5, 4, 3, 2, 1};
	assert_memory_equal(buf, want, sizeof want);

	struct iop_rcur r = iop_rcur_make(buf, sizeof buf);
	assert_int_equal(iop_get_u8(&r), 0xab);
	assert_int_equal(iop_get_u16le(&r), 0x1234);
	assert_int_equal(iop_get_u32le(&r), 0xdeadbeef);
	assert_true(iop_get_u64le(&r) == 0x0102030405060708u);
	assert_int_equal(r.err, IOP_OK);
	assert_int_equal(iop_rcur_left(&r), 0);
}

static const uint64_t varint_cases[] = {
    0,
    1,
    127,
    128,
    255,
    300,
    16383,
    16384,
    (1u << 21) - 1,
    1u << 21,
    0xffffffffu,
    (uint64_t)1 << 35,
    (uint64_t)1 << 56,
    ((uint64_t)1 << 63) - 1,
    (uint64_t)1 << 63,
    UINT64_MAX,
};

static void varints_round_trip_at_every_boundary(void **state)
{
	for (size_t i = 0; i < sizeof varint_cases / sizeof *varint_cases; i++) {
		uint64_t v = varint_cases[i];
		uint8_t buf[IOP_VARINT_MAX];
		struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
		iop_put_varint(&w, v);
		assert_int_equal(w.err, IOP_OK);
		size_t n = (size_t)(w.p - buf);
		assert_int_equal(n, iop_varint_len(v));
		struct iop_rcur r = iop_rcur_make(buf, n);
		assert_true(iop_get_varint(&r) == v);
		assert_int_equal(r.err, IOP_OK);
		assert_int_equal(iop_rcur_left(&r), 0);
		/* every shorter prefix is truncated */
		for (size_t k = 0; k < n; k++) {
			struct iop_rcur t = iop_rcur_make(buf, k);
			assert_true(iop_get_varint(&t) == 0);
			assert_int_equal(t.err, IOP_ERR_TRUNCATED);
		}
	}
	assert_int_equal(iop_varint_len(UINT64_MAX), IOP_VARINT_MAX);
	assert_int_equal(iop_varint_len(127), 1);
	assert_int_equal(iop_varint_len(128), 2);
}

static void zigzag_maps_small_magnitudes_to_small_codes(void **state)
{
	const int64_t v[] = {0, -1, 1, -2, 2, INT64_MAX, INT64_MIN, -123456789};
	const uint64_t z[] = {0, 1, 2, 3, 4, UINT64_MAX - 1, UINT64_MAX, 246913577};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		assert_true(iop_zigzag(v[i]) == z[i]);
		assert_true(iop_unzigzag(z[i]) == v[i]);
	}
	uint8_t buf[32];
	struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
	iop_put_svarint(&w, -64);
	iop_put_svarint(&w, INT64_MIN);
	assert_int_equal(buf[0], 127); /* -64 fits one byte */
	struct iop_rcur r = iop_rcur_make(buf, (size_t)(w.p - buf));
	assert_true(iop_get_svarint(&r) == -64);
	assert_true(iop_get_svarint(&r) == INT64_MIN);
	assert_int_equal(r.err, IOP_OK);
}

static void overlong_varints_are_malformed(void **state)
{
	/* 10th byte above 1 would overflow 64 bits */
	uint8_t ten[10];
	memset(ten, 0xff, 9);
	ten[9] = 0x02;
	struct iop_rcur r = iop_rcur_make(ten, sizeof ten);
	iop_get_varint(&r);
	assert_int_equal(r.err, IOP_ERR_MALFORMED);
	/* 11 bytes */
	uint8_t eleven[11];
	memset(eleven, 0x80, 10);
	eleven[10] = 0;
	r = iop_rcur_make(eleven, sizeof eleven);
	iop_get_varint(&r);
	assert_int_equal(r.err, IOP_ERR_MALFORMED);
	/* a value above a limit */
	uint8_t big[2] = {0x80, 0x01};
	r = iop_rcur_make(big, sizeof big);
	assert_int_equal(iop_get_varint_max(&r, 127), 0);
	assert_int_equal(r.err, IOP_ERR_MALFORMED);
}

static void puts_that_do_not_fit_fail_and_stick(void **state)
{
	uint8_t buf[8];
	memset(buf, 0xee, sizeof buf);
	struct iop_wcur w = iop_wcur_make(buf, 5);
	iop_put_u32le(&w, 1);
	iop_put_u16le(&w, 2); /* needs 2, 1 left */
	assert_int_equal(w.err, IOP_ERR_FULL);
	iop_put_u8(&w, 3); /* would fit, but the error sticks */
	iop_put_varint(&w, 1);
	iop_put_bytes(&w, "x", 1);
	assert_int_equal(w.err, IOP_ERR_FULL);
	assert_int_equal(buf[4], 0xee); /* nothing written after the failure */
	assert_int_equal(buf[5], 0xee);

	/* a varint near the end is length-checked exactly */
	struct iop_wcur v = iop_wcur_make(buf, 2);
	iop_put_varint(&v, 300); /* 2 bytes: fits */
	assert_int_equal(v.err, IOP_OK);
	struct iop_wcur v2 = iop_wcur_make(buf, 2);
	iop_put_varint(&v2, 1u << 14); /* 3 bytes: does not */
	assert_int_equal(v2.err, IOP_ERR_FULL);
}

static void gets_past_the_end_fail_and_stick(void **state)
{
	const uint8_t buf[6] = {1, 2, 3, 4, 5, 6};
	struct iop_rcur r = iop_rcur_make(buf, sizeof buf);
	assert_int_equal(iop_get_u32le(&r), 0x04030201);
	assert_int_equal(iop_get_u32le(&r), 0); /* 2 left */
	assert_int_equal(r.err, IOP_ERR_TRUNCATED);
	assert_int_equal(iop_get_u8(&r), 0); /* sticks */
	assert_null(iop_get_bytes(&r, 1));
	assert_int_equal(iop_rcur_left(&r), 2);

	struct iop_rcur b = iop_rcur_make(buf, sizeof buf);
	const uint8_t *p = iop_get_bytes(&b, 6);
	assert_ptr_equal(p, buf);
	assert_null(iop_get_bytes(&b, 1));
	assert_int_equal(b.err, IOP_ERR_TRUNCATED);
	/* an empty cursor */
	struct iop_rcur e = iop_rcur_make(buf, 0);
	assert_int_equal(iop_get_varint(&e), 0);
	assert_int_equal(e.err, IOP_ERR_TRUNCATED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(fixed_widths_are_little_endian),
	    cmocka_unit_test(varints_round_trip_at_every_boundary),
	    cmocka_unit_test(zigzag_maps_small_magnitudes_to_small_codes),
	    cmocka_unit_test(overlong_varints_are_malformed),
	    cmocka_unit_test(puts_that_do_not_fit_fail_and_stick),
	    cmocka_unit_test(gets_past_the_end_fail_and_stick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
