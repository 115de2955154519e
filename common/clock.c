/* Clock source selection and TSC calibration. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "clock.h"

static uint64_t ts_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t iop_mono_ns(void)
{
	return ts_ns(CLOCK_MONOTONIC);
}
uint64_t iop_real_ns(void)
{
	return ts_ns(CLOCK_REALTIME);
}

bool iop_tsc_invariant(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;
	if ((unsigned)__get_cpuid_max(0x80000000, NULL) < 0x80000007u)
		return false;
	__cpuid(0x80000007, a, b, c, d);
	return (d >> 8) & 1; /* "Invariant TSC": constant rate in every P/C-state */
#else
	return false;
#endif
}

const char *iop_clock_source_name(enum iop_clock_source s)
{
	return s == IOP_CLOCK_TSC ? "tsc" : "monotonic";
}

/* Picks mult and shift so that (ticks * mult) >> shift = ns with about 32
 * significant bits in mult. */
static void set_rate(struct iop_clock *c, double ns_per_tick)
{
	c->shift = 32;
	c->mult = (uint64_t)(ns_per_tick * 4294967296.0 + 0.5);
}

void iop_clock_init_mono(struct iop_clock *c)
{
	memset(c, 0, sizeof *c);
	c->source = IOP_CLOCK_MONO;
	set_rate(c, 1.0);
	/* Take both readings close together so the real-time offset is tight. */
	c->tick0 = iop_mono_ns();
	c->real0_ns = iop_real_ns();
}

#if defined(__x86_64__)
/* One calibration sample: TSC and CLOCK_MONOTONIC read back to back, keeping
 * the pair whose TSC bracket is narrowest (least disturbed by preemption). */
static void sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	*tsc = *ns = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = __rdtsc();
		uint64_t n = iop_mono_ns();
		uint64_t t1 = __rdtsc();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	while (nanosleep(&ts, &ts) != 0)
		;
}
#endif

#if defined(__x86_64__)
/* Measures the TSC rate against CLOCK_MONOTONIC over about calib_ms and
 * makes the TSC c's source. False when the two halves of the measurement
 * disagree by more than 0.1 % or the rate is implausible (the rate is set
 * all the same). */
static bool calibrate_tsc(struct iop_clock *c, unsigned calib_ms)
{
	if (calib_ms < 1)
		calib_ms = 1;
	if (calib_ms > 1000)
		calib_ms = 1000;
	uint64_t half = (uint64_t)calib_ms * 500000u;
	uint64_t t0 = 0, n0 = 0, t1 = 0, n1 = 0, t2 = 0, n2 = 0;
	sample(&t0, &n0);
	sleep_ns(half);
	sample(&t1, &n1);
	sleep_ns(half);
	sample(&t2, &n2);
	if (t1 <= t0 || t2 <= t1 || n1 <= n0 || n2 <= n1)
		return false;
	double r1 = (double)(n1 - n0) / (double)(t1 - t0);
	double r2 = (double)(n2 - n1) / (double)(t2 - t1);
	double hz = 1e9 / ((double)(n2 - n0) / (double)(t2 - t0));
	c->source = IOP_CLOCK_TSC;
	c->tsc_hz = hz;
	set_rate(c, 1e9 / hz);
	uint64_t tsc = 0, mono = 0;
	sample(&tsc, &mono);
	c->tick0 = tsc;
	c->real0_ns = iop_real_ns() - (iop_mono_ns() - mono);
	/* Two halves must agree, and the rate must be a plausible CPU clock. */
	return r1 / r2 <= 1.001 && r2 / r1 <= 1.001 && hz >= 1e8 && hz <= 2e10;
}
#endif

bool iop_clock_tsc_wanted(void)
{
	const char *want = getenv("IOPULSE_CLOCK");
	return !(want && strcmp(want, "mono") == 0) && iop_tsc_invariant();
}

void iop_clock_init(struct iop_clock *c, unsigned calib_ms)
{
	iop_clock_init_mono(c);
#if defined(__x86_64__)
	if (iop_clock_tsc_wanted() && !calibrate_tsc(c, calib_ms))
		iop_clock_init_mono(c);
#endif
}

bool iop_clock_init_tsc(struct iop_clock *c, unsigned calib_ms)
{
	iop_clock_init_mono(c);
#if defined(__x86_64__)
	return calibrate_tsc(c, calib_ms);
#else
	return false;
#endif
}
