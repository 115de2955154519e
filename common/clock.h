/* Clocks for event times and durations.
 *
 * The shim stamps two times per call, so reading the clock must be cheap.
 * On x86-64 with an invariant TSC (CPUID says so, and a calibration against
 * CLOCK_MONOTONIC agrees with itself) ticks are TSC cycles: about 8 ns to
 * read, against about 20 ns for clock_gettime. Anywhere else, or when
 * IOPULSE_CLOCK=mono is set, ticks are CLOCK_MONOTONIC nanoseconds. Either
 * way iop_clock_ns() maps ticks onto CLOCK_REALTIME nanoseconds, the time
 * base of every event on the wire. */
#ifndef IOP_CLOCK_H
#define IOP_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

enum iop_clock_source { IOP_CLOCK_MONO = 0, IOP_CLOCK_TSC = 1 };

struct iop_clock {
	enum iop_clock_source source;
	uint64_t tick0;    /* ticks at the reference point */
	uint64_t real0_ns; /* CLOCK_REALTIME at the reference point */
	uint64_t mult;     /* ns = (ticks * mult) >> shift */
	unsigned shift;
	double tsc_hz; /* measured TSC frequency (0 when not used) */
};

/* Nanoseconds of CLOCK_MONOTONIC and CLOCK_REALTIME. */
uint64_t iop_mono_ns(void);
uint64_t iop_real_ns(void);

/* True when this CPU advertises an invariant TSC (x86-64 only). */
bool iop_tsc_invariant(void);

/* Chooses the source and calibrates it, spending about calib_ms
 * milliseconds (1..1000) when the TSC is a candidate. Never fails: when the
 * TSC is absent, not invariant, refused by IOPULSE_CLOCK=mono, or its two
 * calibration halves disagree by more than 0.1 %, it falls back to
 * CLOCK_MONOTONIC. */
void iop_clock_init(struct iop_clock *c, unsigned calib_ms);

/* True when the TSC should be the source: invariant, and IOPULSE_CLOCK is
 * not "mono". */
bool iop_clock_tsc_wanted(void);

/* iop_clock_init's TSC calibration taken in steps, for a caller that
 * cannot sleep through it (the shim's sender, which an exit may cut
 * short; its ticks are stamped before it ends): three marks
 * (start, middle, end) with iop_clock_calib_mark(), then
 * iop_clock_calib_done(), which sets c's rate from the first and the last
 * and makes the TSC its source. full: the intervals had their intended
 * length, so the two halves must agree within 0.1 % (a calibration cut
 * short is too short to judge that way; its rate is still the best
 * measure there is). False when the halves disagree, the rate is
 * implausible or a mark is missing (then c is CLOCK_MONOTONIC's when the
 * marks are unusable, the measured TSC otherwise). */
struct iop_clock_calib {
	uint64_t tsc[3], ns[3];
	unsigned n;
};
void iop_clock_calib_mark(struct iop_clock_calib *k);
bool iop_clock_calib_done(struct iop_clock *c, const struct iop_clock_calib *k, bool full);

/* Forces CLOCK_MONOTONIC (tests, and hosts where the TSC misbehaves). */
void iop_clock_init_mono(struct iop_clock *c);

/* Raw ticks: cheap, monotonic within a thread. */
static inline uint64_t iop_clock_ticks(const struct iop_clock *c)
{
#if defined(__x86_64__)
	if (c->source == IOP_CLOCK_TSC)
		return __rdtsc();
#endif
	return iop_mono_ns();
}

/* A duration in ticks, in nanoseconds. */
static inline uint64_t iop_clock_dur_ns(const struct iop_clock *c, uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * c->mult) >> c->shift);
}

/* A tick value as CLOCK_REALTIME nanoseconds. Ticks before the reference
 * point (another thread's older stamp) map correctly too. */
static inline uint64_t iop_clock_ns(const struct iop_clock *c, uint64_t ticks)
{
	if (ticks >= c->tick0)
		return c->real0_ns + iop_clock_dur_ns(c, ticks - c->tick0);
	return c->real0_ns - iop_clock_dur_ns(c, c->tick0 - ticks);
}

/* A double (a count, a time in ns) as a u64, saturating: NaN and
 * anything below 0 give 0, anything from 2^64 up gives UINT64_MAX. A plain
 * cast of an out-of-range double is undefined, and the doubles here can
 * come from a corrupt recording or a user's typing. */
static inline uint64_t iop_sat_u64(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)x;
}

/* Seconds as nanoseconds, rounded, saturating as iop_sat_u64. */
static inline uint64_t iop_ns_of_secs(double s)
{
	return iop_sat_u64(s * 1e9 + 0.5);
}

const char *iop_clock_source_name(enum iop_clock_source s);

#endif
