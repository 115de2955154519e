/* STDIO cases of the errno table. Failures come from streams opened the
 * wrong way (a read on a "w" stream, a write on an "r" one: EBADF), from a
 * pipe (seeks: ESPIPE), from RLIMIT_FSIZE (EFBIG) and from a "doomed"
 * stream: a "w" stream holding buffered bytes whose descriptor was
 * replaced (dup2) by a read-only one, so that flushing fails with EBADF on
 * a watched regular file. See errno_table.h for T(). */
#include <fcntl.h>
#include <stdio_ext.h>
#include <sys/resource.h>

#include "errno_table.h"

static char buf[16384];
/* A stream freopen failed on: closed, but glibc keeps the FILE; held here
 * so that LeakSanitizer (sanitizer builds) does not call it a leak. */
static FILE *volatile freopen_failed;

static FILE *doomed_stream(const char *name)
{
	FILE *f = fopen(name, "w");
	CHECK(f != NULL, "fopen %s", name);
	CHECK(fputs("pending bytes", f) >= 0, "fputs");
	int ro = open("ro.txt", O_RDONLY);
	CHECK(ro >= 0 && dup2(ro, fileno(f)) == fileno(f), "dup2 over %s", name);
	CLOSE_OK(ro);
	return f;
}

/* Drops what a failed stream still holds, then closes it (must succeed). */
static void discard(FILE *f)
{
	__fpurge(f);
	CHECK(fclose(f) == 0, "fclose after purge");
}

static int vprint(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfprintf(f, fmt, ap);
	va_end(ap);
	return r;
}

static void open_close_cases(void)
{
	FILE *g;
	T("fopen_w", K_PTR, W_OK_, g = fopen("s1.txt", "w"));
	T("fclose_ok", K_NUM, W_OK_, fclose(g));
	T("fopen_r", K_PTR, W_OK_, g = fopen("ro.txt", "r"));
	CHECK(fclose(g) == 0, "fclose");
	T("fopen64_ok", K_PTR, W_OK_, g = fopen64("s1.txt", "a"));
	CHECK(fclose(g) == 0, "fclose");
	T("fopen_enoent", K_PTR, ENOENT, fopen("missing/s", "r"));
	T("fopen_eisdir", K_PTR, EISDIR, fopen("dir", "w"));
	T("fopen_einval", K_PTR, EINVAL, fopen("s1.txt", "z"));
	T("fopen_enotdir", K_PTR, ENOTDIR, fopen("ro.txt/x", "r"));

	int fd = open("s2.txt", O_CREAT | O_RDWR, 0644);
	CHECK(fd >= 0, "open s2.txt");
	T("fdopen_ok", K_PTR, W_OK_, g = fdopen(fd, "r+"));
	CHECK(fclose(g) == 0, "fclose");
	T("fdopen_ebadf", K_PTR, EBADF, fdopen(-1, "r"));
	T("fdopen_ebadf_closed", K_PTR, EBADF, fdopen(CLOSED_FD, "r"));
	fd = open("ro.txt", O_RDONLY);
	CHECK(fd >= 0, "open ro.txt");
	T("fdopen_einval", K_PTR, EINVAL, fdopen(fd, "w"));
	CLOSE_OK(fd);

	g = fopen("s3.txt", "w");
	CHECK(g != NULL, "fopen s3.txt");
	T("freopen_ok", K_PTR, W_OK_, g = freopen("ro.txt", "r", g));
	CHECK(g && fgets(buf, sizeof buf, g) && strcmp(buf, "hello 42\n") == 0, "read back");
	T("freopen_null_path", K_PTR, W_OK_, g = freopen(NULL, "r", g));
	freopen_failed = g;
	T("freopen_enoent", K_PTR, ENOENT, freopen("missing/x", "r", g)); /* g is gone */
	g = fopen("s3.txt", "r");
	CHECK(g != NULL, "fopen s3.txt");
	T("freopen64_ok", K_PTR, W_OK_, g = freopen64("s1.txt", "w", g));
	CHECK(g && fclose(g) == 0, "fclose");

	g = doomed_stream("d1.txt");
	T("fflush_ebadf", K_NUM, EBADF, fflush(g));
	discard(g);
	g = doomed_stream("d2.txt");
	T("fclose_ebadf", K_NUM, EBADF, fclose(g));
	g = doomed_stream("d3.txt");
	T("rewind_ebadf", K_VOID, EBADF, (rewind(g), 0));
	discard(g);
	g = doomed_stream("d4.txt");
	T("fseek_ebadf", K_NUM, EBADF, fseek(g, 0, SEEK_SET));
	discard(g);
}

static void efbig_cases(void)
{
	struct rlimit old, small;
	CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0, "getrlimit");
	small = old;
	small.rlim_cur = 16384;
	CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0, "setrlimit");
	FILE *e = fopen("big.txt", "w");
	CHECK(e && fseek(e, 16384, SEEK_SET) == 0, "fopen/fseek big.txt");
	T("fwrite_buffered", K_COUNT, W_OK_, fwrite(buf, 1, 10, e));
	T("fflush_efbig", K_NUM, EFBIG, fflush(e));
	discard(e);
	e = fopen("big2.txt", "w");
	CHECK(e && fseek(e, 16384, SEEK_SET) == 0, "fopen/fseek big2.txt");
	T("fwrite_efbig", K_COUNT, EFBIG, fwrite(buf, 1, sizeof buf, e));
	discard(e);
	CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0, "setrlimit back");
}

/* The transfers and fflush, each in its plain and its _unlocked form: the
 * same rows for both, named fwrite_ok, fwrite_unlocked_ok ... (through
 * pointers: optimised, the header inlines fputc_unlocked and
 * fgetc_unlocked). */
struct forms {
	const char *suffix;
	size_t (*write)(const void *, size_t, size_t, FILE *);
	int (*puts)(const char *, FILE *);
	int (*putc)(int, FILE *);
	int (*flush)(FILE *);
	size_t (*read)(void *, size_t, size_t, FILE *);
	char *(*gets)(char *, int, FILE *);
	int (*getc)(FILE *);
};
static const struct forms plain = {"", fwrite, fputs, fputc, fflush, fread, fgets, fgetc};
static const struct forms unlocked = {"_unlocked",    fwrite_unlocked, fputs_unlocked,
                                      fputc_unlocked, fflush_unlocked, fread_unlocked,
                                      fgets_unlocked, fgetc_unlocked};

/* "fwrite" "_unlocked" "_ok" (until the next call) */
static const char *case_name(const struct forms *fm, const char *call, const char *what)
{
	static char name[64];
	snprintf(name, sizeof name, "%s%s_%s", call, fm->suffix, what);
	return name;
}

/* 5 writes of 160 bytes in all to f (from buf); the failures on r. */
static void transfer_write_cases(const struct forms *fm, FILE *f, FILE *r)
{
	T(case_name(fm, "fwrite", "ok"), K_COUNT, W_OK_, fm->write(buf, 1, 100, f));
	T(case_name(fm, "fwrite", "items"), K_COUNT, W_OK_, fm->write(buf, 10, 5, f));
	T(case_name(fm, "fwrite", "none"), K_COUNT, W_OK_, fm->write(buf, 10, 0, f));
	T(case_name(fm, "fwrite", "ebadf"), K_COUNT, EBADF, fm->write(buf, 1, 10, r));
	T(case_name(fm, "fputs", "ok"), K_NUM, W_OK_, fm->puts("line one\n", f));
	T(case_name(fm, "fputs", "ebadf"), K_NUM, EBADF, fm->puts("x", r));
	T(case_name(fm, "fputc", "ok"), K_NUM, W_OK_, fm->putc('z', f));
	T(case_name(fm, "fputc", "ebadf"), K_NUM, EBADF, fm->putc('z', r));
	T(case_name(fm, "fflush", "ok"), K_NUM, W_OK_, fm->flush(f));
	T(case_name(fm, "fflush", "read_stream"), K_NUM, W_OK_, fm->flush(r));
}

/* f from its start: 7 reads, the last 3 at its end; the failures on w. */
static void transfer_read_cases(const struct forms *fm, FILE *f, FILE *w)
{
	T(case_name(fm, "rewind", "ok"), K_VOID, W_OK_, (rewind(f), 0));
	T(case_name(fm, "fread", "ok"), K_COUNT, W_OK_, fm->read(buf, 1, 50, f));
	T(case_name(fm, "fread", "items"), K_COUNT, W_OK_, fm->read(buf, 10, 3, f));
	T(case_name(fm, "fread", "ebadf"), K_COUNT, EBADF, fm->read(buf, 1, 10, w));
	T(case_name(fm, "fgets", "ok"), K_PTR, W_OK_, fm->gets(buf, 100, f));
	T(case_name(fm, "fgets", "ebadf"), K_PTR, EBADF, fm->gets(buf, 10, w));
	T(case_name(fm, "fgetc", "ok"), K_NUM, W_OK_, fm->getc(f));
	T(case_name(fm, "fgetc", "ebadf"), K_NUM, EBADF, fm->getc(w));
	T(case_name(fm, "fseek", "end"), K_NUM, W_OK_, fseek(f, 0, SEEK_END));
	T(case_name(fm, "fread", "eof"), K_COUNT, W_EOF_, fm->read(buf, 1, 10, f));
	T(case_name(fm, "fgets", "eof"), K_PTR, W_EOF_, fm->gets(buf, 10, f));
	T(case_name(fm, "fgetc", "eof"), K_NUM, W_EOF_, fm->getc(f));
}

static void write_cases(FILE *f, FILE *r)
{
	transfer_write_cases(&plain, f, r);
	T("fprintf_ok", K_NUM, W_OK_, fprintf(f, "%d %s\n", 42, "x"));
	T("fprintf_ebadf", K_NUM, EBADF, fprintf(r, "%d\n", 1));
	T("vfprintf_ok", K_NUM, W_OK_, vprint(f, "%d-%d\n", 1, 2));
	T("vfprintf_ebadf", K_NUM, EBADF, vprint(r, "%d\n", 3));
	T("fflush_all", K_NUM, W_OK_, fflush(NULL));
}

static void position_cases(FILE *f, FILE *p)
{
	fpos_t pos;
	fpos64_t pos64;
	T("ftell_ok", K_NUM, W_OK_, ftell(f));
	T("ftell_espipe", K_NUM, ESPIPE, ftell(p));
	T("ftello_ok", K_NUM, W_OK_, ftello(f));
	T("ftello_espipe", K_NUM, ESPIPE, ftello(p));
	T("ftello64_ok", K_NUM, W_OK_, ftello64(f));
	T("fseek_set", K_NUM, W_OK_, fseek(f, 3, SEEK_SET));
	T("fseek_einval_whence", K_NUM, EINVAL, fseek(f, 0, 99));
	T("fseek_einval_neg", K_NUM, EINVAL, fseek(f, -100, SEEK_SET));
	T("fseek_espipe", K_NUM, ESPIPE, fseek(p, 0, SEEK_SET));
	T("fseeko_set", K_NUM, W_OK_, fseeko(f, 9, SEEK_SET));
	T("fseeko_einval", K_NUM, EINVAL, fseeko(f, -1000, SEEK_SET));
	T("fseeko_espipe", K_NUM, ESPIPE, fseeko(p, 4, SEEK_CUR));
	T("fseeko64_set", K_NUM, W_OK_, fseeko64(f, 11, SEEK_SET));
	CHECK(fgetpos(f, &pos) == 0 && fgetpos64(f, &pos64) == 0, "fgetpos");
	T("fseek_cur", K_NUM, W_OK_, fseek(f, 5, SEEK_CUR));
	T("fsetpos_ok", K_NUM, W_OK_, fsetpos(f, &pos));
	row_value("fsetpos_where", ftell(f), 11);
	T("fsetpos_espipe", K_NUM, ESPIPE, fsetpos(p, &pos));
	T("fsetpos64_ok", K_NUM, W_OK_, fsetpos64(f, &pos64));
}

static void scan_cases(FILE *w)
{
	union {
		float f;
		char *p;
		char pad[16];
	} u = {0};
	int i = 0;
	char s[8];
	FILE *sc = fopen("scan.txt", "w+");
	CHECK(sc && fputs("17 abc 1.5s\n", sc) >= 0, "fill scan.txt");
	rewind(sc);
	T("fscanf_ok", K_NUM, W_OK_, fscanf(sc, "%d", &i));
	row_value("fscanf_value", i, 17);
	T("fscanf_nomatch", K_NUM, W_OK_, fscanf(sc, "%d", &i));
	T("fscanf_str", K_NUM, W_OK_, fscanf(sc, "%3s", s));
	/* C99 reads "%as" as a float then a literal 's'; GNU's old scanf as
	 * a malloc'd string: which one the program was built for must hold */
	T("fscanf_c99_a", K_NUM, W_OK_, fscanf(sc, "%as", &u.f));
	row_value("fscanf_c99_a_value", u.f > -1e6f && u.f < 1e6f ? (long)(u.f * 10) : -1, 15);
	T("fscanf_eof", K_NUM, W_EOFANY_, fscanf(sc, "%d", &i));
	T("fscanf_ebadf", K_NUM, EBADF, fscanf(w, "%d", &i));
	CHECK(fclose(sc) == 0, "fclose scan.txt");
}

/* The _unlocked forms on unlocked.txt, pattern bytes written (no newline
 * among them): the driver finds 5 writes and 7 reads of 160 bytes each in
 * the sink's counters when the shim is active. */
static void unlocked_cases(FILE *r, FILE *w)
{
	memcpy(buf, safety_pattern(sizeof buf), sizeof buf);
	FILE *u = fopen("unlocked.txt", "w+");
	CHECK(u != NULL, "fopen unlocked.txt");
	transfer_write_cases(&unlocked, u, r);
	transfer_read_cases(&unlocked, u, w);
	CHECK(fclose(u) == 0, "fclose unlocked.txt");
}

void stdio_cases(void)
{
	memcpy(buf, safety_pattern(sizeof buf), sizeof buf);
	open_close_cases();
	efbig_cases();
	FILE *f = fopen("s.txt", "w+"), *r = fopen("ro.txt", "r"), *w = fopen("wo.txt", "w");
	FILE *p = fdopen(pipe_r, "r");
	CHECK(f && r && w && p, "fopen streams");
	write_cases(f, r);
	transfer_read_cases(&plain, f, w);
	position_cases(f, p);
	scan_cases(w);
	unlocked_cases(r, w);
	CHECK(fclose(f) == 0 && fclose(r) == 0 && fclose(w) == 0 && fclose(p) == 0, "fclose");
}
