/* mpiio-random-types: a fuzz-style property test of the MPI-IO byte counts
 * (issue 17). Each case draws, from a PRNG seeded by (seed, case, rank), a
 * random datatype tree of depth up to 3 (basic types, contiguous, vector,
 * hvector, indexed, hindexed, indexed_block, struct, subarray, darray, and
 * resized with an extent larger or smaller than the true one), a count (0..8)
 * and a write and a read form: _at with a status or MPI_STATUS_IGNORE, the
 * individual pointer, i*_at + MPI_Wait or MPI_Waitall (with statuses or
 * MPI_STATUSES_IGNORE), _at_all, _all_begin/_end and, with MPI-4, _at_c.
 * It writes COUNT instances from a buffer of random bytes to its own file
 * DIR/rt.<case>.<rank> (MPI_COMM_SELF, default view), reads them back into a
 * zeroed buffer and checks that the type map's bytes came back and no other
 * byte changed, that every status says COUNT and that the file holds COUNT x
 * MPI_Type_size bytes. Types whose COUNT instances overlap are drawn again.
 *
 *   mpiio-random-types [-d DIR] [-s SEED] [-n CASES=40] [-c CASE]
 *
 * Truth (examples/README.md): one mpiio entry per file, write_bytes =
 * read_bytes = MPI_Type_size x count, write_ops = read_ops = 1; the ranks'
 * lines (long: one entry per case) are printed by rank 0 in one write.
 *
 * Replaying a seed: rank 0 prints the seed and every rank each case (count,
 * sizes, forms, type tree) on stderr. The seed is -s, else the environment's
 * IOP_RANDOM_TYPES_SEED, else 1; a case depends on the seed, its number and
 * the rank, so rerun with the same seed and 2 ranks:
 *   IOP_RANDOM_TYPES_SEED=7 ctest -R mpiio_bytes_random_types --output-on-failure
 * or run the command of `ctest -R mpiio_bytes_random_types -V -N` by hand
 * with -s SEED, adding -c CASE to run that case alone. */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "truth.h"

#define MAX_DEPTH 3
#define MAX_BYTES (1 << 20) /* type size x count, per case */
#define MAX_SPAN  (4 << 20) /* bytes of memory COUNT instances span */
#define MAX_DRAWS 200
#define DESC_MAX  2048

/* MPICH before 4.1 (Debian 12 has 4.0.2) flattens some memory types wrong in
 * ROMIO (its own flattening, replaced in 4.1 by MPIX_Type_iov;
 * pmodels/mpich#7169): data land in the wrong places when a resized type's
 * lb lies above its data or when an indexed or hindexed type holds a child
 * with holes, and transfers hang when an indexed type with an empty block
 * holds a child with holes or blocks out of order. Such types are not drawn
 * there: resized lb 0, indexed_block for such children, no empty blocks. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define OLD_ROMIO 1
#else
#define OLD_ROMIO 0
#endif

struct options {
	const char *dir;
	uint64_t seed;
	int cases;
	int only; /* -c: the one case to run, or -1 */
};

/* splitmix64 */
static uint64_t rng_next(uint64_t *r)
{
	uint64_t z = (*r += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A whole number from LO to HI, both included. */
static int rng_int(uint64_t *r, int lo, int hi)
{
	return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* True one time in N. */
static bool one_in(uint64_t *r, int n)
{
	return rng_next(r) % (uint64_t)n == 0;
}

static void check(int rc, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (rc == MPI_SUCCESS)
		return;
	MPI_Error_string(rc, msg, &len);
	ex_die("%s: %s", what, msg);
}

/* Appends to the description OUT (DESC_MAX bytes), truncating. */
static void append(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char *out, const char *fmt, ...)
{
	size_t used = strlen(out);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out + used, DESC_MAX - used, fmt, ap);
	va_end(ap);
}

static void append_ints(char *out, const char *sep, const int *v, int n)
{
	for (int i = 0; i < n; i++)
		append(out, "%s%d", i ? sep : "", v[i]);
}

/* ------------------------------------------------------------ datatypes */

/* The extent the MPI library steps by; the true bounds of the data. */
struct shape {
	MPI_Aint lb, extent, tlb, textent;
	MPI_Count size;
};

static struct shape shape_of(MPI_Datatype t)
{
	struct shape s;

	check(MPI_Type_get_extent(t, &s.lb, &s.extent), "MPI_Type_get_extent");
	check(MPI_Type_get_true_extent(t, &s.tlb, &s.textent), "MPI_Type_get_true_extent");
	check(MPI_Type_size_x(t, &s.size), "MPI_Type_size_x");
	return s;
}

/* Bytes from the data of the first of BL consecutive instances to the end
 * of the last one's: the least step between such blocks that keeps them
 * apart; and the same in extents, rounded up. */
static MPI_Aint block_span(const struct shape *s, int bl)
{
	return bl ? (bl - 1) * s->extent + s->textent : 0;
}

static int block_steps(const struct shape *s, int bl)
{
	return (int)((block_span(s, bl) + s->extent - 1) / s->extent);
}

static MPI_Aint round8(MPI_Aint x)
{
	return (x + 7) & ~(MPI_Aint)7;
}

static bool is_named(MPI_Datatype t)
{
	int ni, na, nd, combiner;

	check(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner), "MPI_Type_get_envelope");
	return combiner == MPI_COMBINER_NAMED;
}

static void release(MPI_Datatype *t)
{
	if (*t != MPI_DATATYPE_NULL && !is_named(*t))
		check(MPI_Type_free(t), "MPI_Type_free");
	*t = MPI_DATATYPE_NULL;
}

/* Unpacks 0xff bytes as COUNT instances of T at BUF + OFF into a zeroed
 * BUF of LEN bytes: the bytes of the type map become nonzero. Returns how
 * many did (fewer than unpacked when instances overlap). */
static size_t mark(MPI_Datatype t, int count, unsigned char *buf, size_t off, size_t len)
{
	int psize, pos = 0;
	unsigned char *packed;
	size_t marked = 0;

	check(MPI_Pack_size(count, t, MPI_COMM_SELF, &psize), "MPI_Pack_size");
	packed = malloc((size_t)psize + 1);
	if (!packed)
		ex_die("out of memory");
	memset(packed, 0xff, (size_t)psize);
	check(MPI_Unpack(packed, psize, &pos, buf + off, count, t, MPI_COMM_SELF), "MPI_Unpack");
	free(packed);
	for (size_t i = 0; i < len; i++)
		marked += buf[i] != 0;
	return marked;
}

/* A step, smaller than C's true extent and a multiple of 8, at which 8
 * instances of C fit into each other's holes without overlapping; 0 if
 * there is none. Commits C (to unpack into it). */
static MPI_Aint hole_step(uint64_t *r, MPI_Datatype *c, const struct shape *s)
{
	MPI_Aint len = s->tlb + s->textent, steps[256];
	int n = 0;
	unsigned char *m;

	if (s->tlb < 0 || s->textent <= 8 || len > 2048 || !(m = calloc((size_t)len, 1)))
		return 0;
	if (!is_named(*c))
		check(MPI_Type_commit(c), "MPI_Type_commit");
	mark(*c, 1, m, 0, (size_t)len);
	for (MPI_Aint e = 8; e < s->textent && n < 256; e += 8) {
		bool ok = true;
		for (MPI_Aint i = 0; ok && i < len; i++)
			for (MPI_Aint j = 1; ok && j < 8 && j * e <= i; j++)
				ok = !(m[i] && m[i - j * e]);
		if (ok)
			steps[n++] = e;
	}
	free(m);
	return n ? steps[rng_int(r, 0, n - 1)] : 0;
}

static MPI_Datatype gen_basic(uint64_t *r, char *out)
{
	static const char *const names[] = {"BYTE",  "CHAR",  "INT",      "DOUBLE",
	                                    "FLOAT", "SHORT", "LONG_LONG"};
	MPI_Datatype types[] = {MPI_BYTE,  MPI_CHAR,  MPI_INT,      MPI_DOUBLE,
	                        MPI_FLOAT, MPI_SHORT, MPI_LONG_LONG};
	int i = rng_int(r, 0, 6);

	append(out, "%s", names[i]);
	return types[i];
}

static MPI_Datatype gen_type(uint64_t *r, int depth, char *out);

/* A child for a constructor at DEPTH, described in TEXT: a subtree one level
 * down, or a basic type when that has no positive extent (a vector of a
 * darray with nothing on its rank has none). */
static MPI_Datatype child(uint64_t *r, int depth, char *text, struct shape *s)
{
	MPI_Datatype t;

	text[0] = '\0';
	t = gen_type(r, depth - 1, text);
	*s = shape_of(t);
	if (s->extent <= 0) {
		release(&t);
		text[0] = '\0';
		t = gen_basic(r, text);
		*s = shape_of(t);
	}
	return t;
}

/* contiguous, vector, hvector and resized (KIND 0 to 3; 4: resized to an
 * extent smaller than the true one if the child has holes for it): one child
 * and a few numbers; blocks are laid apart. */
static MPI_Datatype gen_simple(uint64_t *r, int depth, int kind, char *out)
{
	char ct[DESC_MAX];
	struct shape s;
	MPI_Datatype c = child(r, depth, ct, &s), t = MPI_DATATYPE_NULL;
	int n = rng_int(r, 1, 4), bl = rng_int(r, 1, 3);

	if (kind == 0) {
		check(MPI_Type_contiguous(n, c, &t), "MPI_Type_contiguous");
		append(out, "contig(%d)", n);
	} else if (kind == 1) {
		int stride = block_steps(&s, bl) + rng_int(r, 0, 2);
		check(MPI_Type_vector(n, bl, stride, c, &t), "MPI_Type_vector");
		append(out, "vector(%d,%d,%d)", n, bl, stride);
	} else if (kind == 2) {
		MPI_Aint stride = round8(block_span(&s, bl)) + 8 * rng_int(r, 0, 2);
		check(MPI_Type_create_hvector(n, bl, stride, c, &t), "MPI_Type_create_hvector");
		append(out, "hvector(%d,%d,%ld)", n, bl, (long)stride);
	} else {
		MPI_Aint lb = OLD_ROMIO ? 0 : 8 * rng_int(r, 0, 2), ext = 0;
		if (kind == 4 || one_in(r, 2))
			ext = hole_step(r, &c, &s);
		if (!ext)
			ext = round8(s.tlb + s.textent) + 8 * rng_int(r, 1, 4);
		check(MPI_Type_create_resized(c, lb, ext, &t), "MPI_Type_create_resized");
		append(out, "resized(%ld,%ld %s)", (long)lb, (long)ext,
		       ext < s.textent ? "smaller" : "larger"); /* than the true extent */
	}
	append(out, "[%s]", ct);
	release(&c);
	return t;
}

/* indexed, hindexed and indexed_block: blocks of one child laid apart with
 * gaps, sometimes in decreasing order; indexed and hindexed blocks after the
 * first may be empty. */
static MPI_Datatype gen_indexed(uint64_t *r, int depth, int kind, char *out)
{
	static const char *const names[] = {"indexed", "hindexed", "indexed_block"};
	char ct[DESC_MAX];
	struct shape s;
	MPI_Datatype c = child(r, depth, ct, &s), t = MPI_DATATYPE_NULL;
	int n = rng_int(r, 1, 4), bl[4], idisp[4], same = rng_int(r, 1, 3);
	bool rev = one_in(r, 4); /* blocks in decreasing displacements */
	MPI_Aint disp[4], at;

	if (OLD_ROMIO && (s.tlb || s.textent != s.size || s.extent != s.size))
		kind = 2; /* a child with holes */
	at = kind == 1 ? 8 * rng_int(r, 0, 1) : rng_int(r, 0, 2);
	for (int i = 0, k; i < n; i++) {
		k = rev ? n - 1 - i : i;
		bl[k] = kind == 2 ? same : rng_int(r, i == 0 || OLD_ROMIO, 3); /* not all empty */
		idisp[k] = (int)(disp[k] = at);
		if (kind == 1)
			at = round8(at + block_span(&s, bl[k])) + 8 * rng_int(r, 0, 1);
		else
			at += block_steps(&s, bl[k]) + rng_int(r, 0, 1);
	}
	if (kind == 0)
		check(MPI_Type_indexed(n, bl, idisp, c, &t), "MPI_Type_indexed");
	else if (kind == 1)
		check(MPI_Type_create_hindexed(n, bl, disp, c, &t), "MPI_Type_create_hindexed");
	else
		check(MPI_Type_create_indexed_block(n, same, idisp, c, &t),
		      "MPI_Type_create_indexed_block");
	append(out, "%s(", names[kind]);
	append_ints(out, ",", bl, n);
	append(out, " @");
	append_ints(out, ",", idisp, n);
	append(out, ")[%s]", ct);
	release(&c);
	return t;
}

/* struct: 2 or 3 fields of different children laid apart, sometimes in
 * decreasing order. */
static MPI_Datatype gen_struct(uint64_t *r, int depth, char *out)
{
	char ct[3][DESC_MAX];
	struct shape s;
	MPI_Datatype c[3], t = MPI_DATATYPE_NULL;
	int n = rng_int(r, 2, 3), bl[3];
	bool rev = one_in(r, 4); /* fields in decreasing displacements */
	MPI_Aint disp[3], at = 8 * rng_int(r, 0, 1);

	for (int i = 0, k; i < n; i++) {
		k = rev ? n - 1 - i : i;
		c[k] = child(r, depth, ct[k], &s);
		bl[k] = rng_int(r, 1, 2);
		disp[k] = at;
		at = round8(at + s.tlb + block_span(&s, bl[k])) + 8 * rng_int(r, 0, 1);
	}
	check(MPI_Type_create_struct(n, bl, disp, c, &t), "MPI_Type_create_struct");
	append(out, "struct(");
	for (int i = 0; i < n; i++) {
		append(out, "%s%d@%ld:%s", i ? ", " : "", bl[i], (long)disp[i], ct[i]);
		release(&c[i]);
	}
	append(out, ")");
	return t;
}

/* subarray (KIND 0) or darray (1) of a child, 1 to 3 dimensions of 1 to 5. */
static MPI_Datatype gen_array(uint64_t *r, int depth, int kind, char *out)
{
	static const int dist[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC,
	                           MPI_DISTRIBUTE_NONE};
	int k[3];
	char ct[DESC_MAX];
	struct shape s;
	MPI_Datatype c = child(r, depth, ct, &s), t = MPI_DATATYPE_NULL;
	int nd = rng_int(r, 1, 3), g[3], sub[3], starts[3], d[3], darg[3], p[3] = {1, 1, 1};
	int order = one_in(r, 2) ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
	int size = rng_int(r, 1, 4), rank = rng_int(r, 0, size - 1);

	if (size == 4 && nd >= 2 && one_in(r, 2)) /* a process grid of 2 x 2 */
		p[0] = p[nd - 1] = 2;
	else
		p[rng_int(r, 0, nd - 1)] = size;
	for (int i = 0; i < nd; i++) {
		g[i] = rng_int(r, 1, kind ? 5 : 4);
		sub[i] = rng_int(r, 1, g[i]);
		starts[i] = rng_int(r, 0, g[i] - sub[i]);
		d[i] = dist[k[i] = rng_int(r, 0, p[i] > 1 ? 1 : 2)];
		darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
		if (d[i] == MPI_DISTRIBUTE_CYCLIC && one_in(r, 2))
			darg[i] = rng_int(r, 1, 3);
		else if (d[i] == MPI_DISTRIBUTE_BLOCK && one_in(r, 2))
			darg[i] = (g[i] + p[i] - 1) / p[i] + rng_int(r, 0, 1);
	}
	append(out, "%s(%s ", kind ? "darray" : "subarray", order == MPI_ORDER_C ? "C" : "F");
	append_ints(out, "x", g, nd);
	if (kind == 0) {
		check(MPI_Type_create_subarray(nd, g, sub, starts, order, c, &t),
		      "MPI_Type_create_subarray");
		append(out, " sub ");
		append_ints(out, "x", sub, nd);
		append(out, " @");
		append_ints(out, ",", starts, nd);
	} else {
		check(MPI_Type_create_darray(size, rank, nd, g, d, darg, p, order, c, &t),
		      "MPI_Type_create_darray");
		append(out, " rank %d of ", rank);
		append_ints(out, "x", p, nd);
		for (int i = 0; i < nd; i++)
			append(out, " %c%d", "BCN"[k[i]],
			       darg[i] == MPI_DISTRIBUTE_DFLT_DARG ? 0 : darg[i]);
	}
	append(out, ")[%s]", ct);
	release(&c);
	return t;
}

/* A random type tree of at most DEPTH constructor levels, described in OUT. */
static MPI_Datatype gen_type(uint64_t *r, int depth, char *out)
{
	int kind;

	if (depth <= 0 || one_in(r, 5))
		return gen_basic(r, out);
	kind = rng_int(r, 0, 9);
	if (kind <= 3)
		return gen_simple(r, depth, kind, out);
	if (kind <= 6)
		return gen_indexed(r, depth, kind - 4, out);
	if (kind == 7)
		return gen_struct(r, depth, out);
	return gen_array(r, depth, kind - 8, out);
}

/* ------------------------------------------------------------ a case */

enum form { F_AT, F_INDIV, F_IAT_WAIT, F_IAT_WAITALL, F_AT_ALL, F_SPLIT, F_AT_C };

static const char *const form_names[] = {"at",     "indiv", "iat+wait", "iat+waitall",
                                         "at_all", "split", "at_c"};

/* What a case does, drawn from its PRNG. */
struct plan {
	int id;
	MPI_Datatype type;
	int count;
	struct shape s;
	size_t off, span;    /* where instance 0 starts in the buffer; its bytes */
	unsigned char *mask; /* span bytes, nonzero at the type map's */
	int form[2];         /* [0] write, [1] read */
	bool status[2];      /* a status, or MPI_STATUS(ES)_IGNORE */
	int draws;
	char text[DESC_MAX];
};

/* Sizes and maps P's buffer; false when the type is empty, has no positive
 * extent, is too big or when its COUNT instances overlap. */
static bool usable(struct plan *p)
{
	MPI_Aint hi;

	p->s = shape_of(p->type);
	if (p->s.size <= 0 || p->s.extent <= 0 || p->s.size * p->count > MAX_BYTES)
		return false;
	p->off = p->s.tlb < 0 ? (size_t)-p->s.tlb : 0;
	hi = p->count ? (p->count - 1) * p->s.extent + p->s.tlb + p->s.textent : 0;
	if (hi < 0 || p->off + (size_t)hi > MAX_SPAN)
		return false;
	p->span = p->off + (size_t)hi + 1;
	if (!(p->mask = calloc(p->span, 1)))
		ex_die("out of memory");
	if (mark(p->type, p->count, p->mask, p->off, p->span) == (size_t)(p->s.size * p->count))
		return true;
	free(p->mask);
	return false;
}

static void draw_plan(uint64_t *r, struct plan *p)
{
	for (p->draws = 1;; p->draws++) {
		if (p->draws > MAX_DRAWS)
			ex_die("case %d: no usable type in %d draws", p->id, MAX_DRAWS);
		int depth = rng_int(r, 1, MAX_DEPTH);
		p->text[0] = '\0';
		if (one_in(r, 4)) /* instances in each other's holes */
			p->type = gen_simple(r, depth, 4, p->text);
		else
			p->type = gen_type(r, depth, p->text);
		p->count = one_in(r, 8) ? 0 : rng_int(r, 1, 8);
		if (!is_named(p->type))
			check(MPI_Type_commit(&p->type), "MPI_Type_commit");
		if (usable(p))
			break;
		release(&p->type);
	}
	for (int d = 0; d < 2; d++) {
		p->form[d] = rng_int(r, 0, MPI_VERSION >= 4 ? F_AT_C : F_AT_C - 1); /* _c: MPI-4 */
		p->status[d] = one_in(r, 2);
	}
}

#define RW(w, pre, post, ...)                                                                      \
	((w) ? MPI_File_##pre##write##post(__VA_ARGS__) : MPI_File_##pre##read##post(__VA_ARGS__))

/* Writes (D = 0) or reads (D = 1) P's COUNT instances at BUF at offset 0 of
 * FH in P's form for D; checks the result and the status if any. */
static void xfer(MPI_File fh, const struct plan *p, int d, void *buf)
{
	bool w = d == 0;
	MPI_Status st[1];
	MPI_Status *stp = p->status[d] ? st : MPI_STATUS_IGNORE;
	MPI_Request req;
	MPI_Datatype t = p->type;
	int rc = MPI_ERR_OTHER, n = p->count;
	char what[64];

	snprintf(what, sizeof what, "case %d: %s %s", p->id, w ? "write" : "read",
	         form_names[p->form[d]]);
	check(MPI_File_seek(fh, 0, MPI_SEEK_SET), what);
	switch (p->form[d]) {
	case F_AT:
		rc = RW(w, , _at, fh, 0, buf, n, t, stp);
		break;
	case F_INDIV:
		rc = RW(w, , , fh, buf, n, t, stp);
		break;
	case F_IAT_WAIT:
	case F_IAT_WAITALL:
		check(RW(w, i, _at, fh, 0, buf, n, t, &req), what);
		if (p->form[d] == F_IAT_WAIT)
			rc = MPI_Wait(&req, stp);
		else
			rc = MPI_Waitall(1, &req, p->status[d] ? st : MPI_STATUSES_IGNORE);
		break;
	case F_AT_ALL:
		rc = RW(w, , _at_all, fh, 0, buf, n, t, stp);
		break;
	case F_SPLIT:
		check(RW(w, , _all_begin, fh, buf, n, t), what);
		rc = RW(w, , _all_end, fh, buf, stp);
		break;
#if MPI_VERSION >= 4
	case F_AT_C:
		rc = RW(w, , _at_c, fh, 0, buf, (MPI_Count)n, t, stp);
		break;
#endif
	}
	check(rc, what);
	if (p->status[d]) {
		check(MPI_Get_count(st, t, &n), what);
		if (n != p->count)
			ex_die("%s: the status says %d, not %d", what, n, p->count);
	}
}

/* The read buffer B must hold A's bytes at the type map and zeros elsewhere
 * (what MPI_Pack of both comparing equal says, and more). */
static void compare(const struct plan *p, const unsigned char *a, const unsigned char *b)
{
	for (size_t i = 0; i < p->span; i++)
		if (p->mask[i] ? b[i] != a[i] : b[i] != 0)
			ex_die("case %d: buffer byte %zu (%s the type map) is %u after the read, "
			       "not %u",
			       p->id, i, p->mask[i] ? "in" : "outside", b[i],
			       p->mask[i] ? a[i] : 0);
}

static void run_case(const struct options *o, int id, int rank, json_t *truth)
{
	uint64_t r = o->seed;
	struct plan p = {.id = id};
	char name[64], path[PATH_MAX];
	unsigned char *a, *b;
	MPI_File fh;
	MPI_Offset fsize;
	uint64_t bytes;

	r = rng_next(&r) + (uint64_t)id;
	r = rng_next(&r) + (uint64_t)rank;
	draw_plan(&r, &p);
	bytes = (uint64_t)p.s.size * (uint64_t)p.count;
	fprintf(stderr,
	        "random-types: rank %d case %d: %d x %lld bytes (extent %ld, true %ld+%ld, "
	        "draw %d), write %s%s, read %s%s: %s\n",
	        rank, id, p.count, (long long)p.s.size, (long)p.s.extent, (long)p.s.tlb,
	        (long)p.s.textent, p.draws, form_names[p.form[0]], p.status[0] ? "+status" : "",
	        form_names[p.form[1]], p.status[1] ? "+status" : "", p.text);
	if (!(a = malloc(p.span)) || !(b = calloc(p.span, 1)))
		ex_die("out of memory");
	for (size_t i = 0; i < p.span; i++)
		a[i] = (unsigned char)rng_next(&r);
	snprintf(name, sizeof name, "rt.%d.%d", id, rank);
	ex_join(path, o->dir, name);
	unlink(path); /* left by an earlier run by hand */
	check(
	    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
	    path);
	xfer(fh, &p, 0, a + p.off);
	check(MPI_File_get_size(fh, &fsize), path);
	if (fsize < 0 || (uint64_t)fsize != bytes)
		ex_die("case %d: the file holds %lld bytes, not %" PRIu64, id, (long long)fsize,
		       bytes);
	xfer(fh, &p, 1, b + p.off);
	check(MPI_File_close(&fh), path);
	compare(&p, a, b);
	ex_truth_add(truth, path, "mpiio",
	             &(struct ex_io){
	                 .write_bytes = bytes, .write_ops = 1, .read_bytes = bytes, .read_ops = 1});
	free(a);
	free(b);
	free(p.mask);
	release(&p.type);
}

/* ------------------------------------------------------------ main */

static struct options parse_options(int argc, char **argv)
{
	struct options o = {.dir = ".", .seed = 1, .cases = 40, .only = -1};
	const char *env = getenv("IOP_RANDOM_TYPES_SEED");
	int c;

	if (env && *env)
		o.seed = ex_parse_count(env, 's', 0, UINT64_MAX);
	while ((c = getopt(argc, argv, "d:s:n:c:")) != -1) {
		if (c == 'd')
			o.dir = optarg;
		else if (c == 's')
			o.seed = ex_parse_count(optarg, 's', 0, UINT64_MAX);
		else if (c == 'n')
			o.cases = (int)ex_parse_count(optarg, 'n', 1, 100000);
		else if (c == 'c')
			o.only = (int)ex_parse_count(optarg, 'c', 0, 99999);
		else
			ex_die("usage: mpiio-random-types [-d DIR] [-s SEED] [-n CASES] [-c CASE]");
	}
	if (optind != argc)
		ex_die("unexpected argument '%s'", argv[optind]);
	if (o.only >= o.cases)
		ex_die("-c %d: there are %d cases (-n)", o.only, o.cases);
	return o;
}

int main(int argc, char **argv)
{
	struct options o;
	json_t *truth;
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	ex_init("random-types", rank);
	o = parse_options(argc, argv);
	ex_mkdir_p(o.dir);
	if (rank == 0) /* replay: IOP_RANDOM_TYPES_SEED=SEED or -s SEED */
		fprintf(stderr, "random-types: seed %" PRIu64 ", %d cases\n", o.seed, o.cases);
	truth = ex_truth_new();
	for (int id = 0; id < o.cases; id++)
		if (o.only < 0 || id == o.only)
			run_case(&o, id, rank, truth);
	ex_truth_print_gathered(truth, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
