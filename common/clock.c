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

void iop_clock_calib_mark(struct iop_clock_calib *k)
{
	if (k->n >= 3)
		return;
#if defined(__x86_64__)
	sample(&k->tsc[k->n], &k->ns[k->n]);
#else
	k->tsc[k->n] = k->ns[k->n] = iop_mono_ns();
#endif
	k->n++;
}

bool iop_clock_calib_done(struct iop_clock *c, const struct iop_clock_calib *k, bool full)
{
	iop_clock_init_mono(c);
#if defined(__x86_64__)
	const uint64_t *t = k->tsc, *n = k->ns;
	if (k->n < 3 || t[2] <= t[0] || n[2] <= n[0])
		return false;
	double hz = 1e9 / ((double)(n[2] - n[0]) / (double)(t[2] - t[0]));
	c->source = IOP_CLOCK_TSC;
	c->tsc_hz = hz;
	set_rate(c, 1e9 / hz);
	uint64_t tsc = 0, mono = 0;
	sample(&tsc, &mono);
	c->tick0 = tsc;
	c->real0_ns = iop_real_ns() - (iop_mono_ns() - mono);
	if (hz < 1e8 || hz > 2e10)
		return false;
	if (!full)
		return true;
	/* Two halves must agree. */
	if (t[1] <= t[0] || t[2] <= t[1] || n[1] <= n[0] || n[2] <= n[1])
		return false;
	double r1 = (double)(n[1] - n[0]) / (double)(t[1] - t[0]);
	double r2 = (double)(n[2] - n[1]) / (double)(t[2] - t[1]);
	return r1 / r2 <= 1.001 && r2 / r1 <= 1.001;
#else
	(void)k;
	(void)full;
	return false;
#endif
}

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
	struct iop_clock_calib k = {0};
	iop_clock_calib_mark(&k);
	sleep_ns(half);
	iop_clock_calib_mark(&k);
	sleep_ns(half);
	iop_clock_calib_mark(&k);
	return iop_clock_calib_done(c, &k, true);
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
