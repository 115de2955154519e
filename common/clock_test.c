/* Clocks: whichever source is chosen, converted ticks track CLOCK_REALTIME
 * and durations track CLOCK_MONOTONIC; IOPULSE_CLOCK=mono forces the
 * fallback; ticks never go backwards within a thread. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "test_util.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};
	nanosleep(&ts, NULL);
}

static void check_tracks_system_clocks(const struct iop_clock *c)
{
	uint64_t t0 = iop_clock_ticks(c), m0 = iop_mono_ns();
	sleep_ms(60);
	uint64_t t1 = iop_clock_ticks(c), m1 = iop_mono_ns();
	double want = (double)(m1 - m0), got = (double)iop_clock_dur_ns(c, t1 - t0);
	/* 0.5 % plus 0.2 ms of slack for the reads not being simultaneous */
	assert_true(got > want * 0.995 - 200000 && got < want * 1.005 + 200000);
	int64_t skew = (int64_t)(iop_clock_ns(c, iop_clock_ticks(c)) - iop_real_ns());
	assert_true(skew > -2000000 && skew < 2000000); /* within 2 ms of real time */
	/* a tick older than the reference point maps before it */
	if (c->tick0 > 1000)
		assert_true(iop_clock_ns(c, c->tick0 - 1000) < c->real0_ns);
}

static void the_chosen_clock_tracks_the_system_clocks(void **state)
{
	struct iop_clock c;
	iop_clock_init(&c, 20);
	printf("# clock source: %s, tsc %.3f MHz, invariant tsc: %s\n",
	       iop_clock_source_name(c.source), c.tsc_hz / 1e6, iop_tsc_invariant() ? "yes" : "no");
	if (c.source == IOP_CLOCK_TSC)
		assert_true(c.tsc_hz > 1e8);
	check_tracks_system_clocks(&c);
}

static void the_environment_can_force_the_fallback(void **state)
{
	setenv("IOPULSE_CLOCK", "mono", 1);
	struct iop_clock c;
	iop_clock_init(&c, 5);
	unsetenv("IOPULSE_CLOCK");
	assert_int_equal(c.source, IOP_CLOCK_MONO);
	assert_true(c.tsc_hz == 0);
	assert_true(iop_clock_dur_ns(&c, 123456789) == 123456789); /* ticks are ns */
	check_tracks_system_clocks(&c);
}

/* The shim's sender calibrates in steps and an exit may cut that short:
 * marks 1 ms apart still give a rate that tracks the system clocks, and a
 * calibration with a mark missing is refused. */
static void a_calibration_cut_short_still_tracks(void **state)
{
	if (!iop_clock_tsc_wanted()) {
		printf("# no invariant TSC here: nothing to calibrate\n");
		return;
	}
	struct iop_clock c;
	struct iop_clock_calib k = {0};
	iop_clock_calib_mark(&k);
	assert_false(iop_clock_calib_done(&c, &k, false)); /* one mark: no rate */
	assert_int_equal(c.source, IOP_CLOCK_MONO);
	sleep_ms(1);
	iop_clock_calib_mark(&k);
	iop_clock_calib_mark(&k);
	iop_clock_calib_mark(&k); /* a fourth is ignored */
	assert_int_equal(k.n, 3);
	assert_true(iop_clock_calib_done(&c, &k, false));
	assert_int_equal(c.source, IOP_CLOCK_TSC);
	struct iop_clock full;
	iop_clock_init(&full, 20);
	printf("# tsc %.3f MHz after 1 ms, %.3f MHz after 20 ms\n", c.tsc_hz / 1e6,
	       full.tsc_hz / 1e6);
	if (full.source == IOP_CLOCK_TSC)
		assert_true(c.tsc_hz > full.tsc_hz * 0.995 && c.tsc_hz < full.tsc_hz * 1.005);
	check_tracks_system_clocks(&c);
}

static void ticks_never_go_backwards(void **state)
{
	struct iop_clock c;
	iop_clock_init(&c, 5);
	uint64_t prev = iop_clock_ticks(&c);
	for (int i = 0; i < 1000000; i++) {
		uint64_t t = iop_clock_ticks(&c);
		assert_true(t >= prev);
		prev = t;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(the_chosen_clock_tracks_the_system_clocks),
	    cmocka_unit_test(the_environment_can_force_the_fallback),
	    cmocka_unit_test(a_calibration_cut_short_still_tracks),
	    cmocka_unit_test(ticks_never_go_backwards),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
