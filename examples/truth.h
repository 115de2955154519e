/* Shared helpers for the C example programs in examples/: the "truth" line
 * each rank prints at the end (what it did, per file and per layer, as one
 * JSON object on one stdout line), option parsing, directory creation and
 * fatal errors. Tests and benchmarks compare these truth lines with what the
 * shim recorded, so the counters here must be exactly what the program
 * called and got back.
 *
 * A truth line looks like
 *   {"example":"fpp","rank":0,"files":[{"path":"/abs/fpp.0","layer":"posix",
 *    "write_bytes":65536,"write_ops":64,"read_bytes":65536,"read_ops":64}]}
 * (on a single line). Everything else the programs say goes to stderr. */
#ifndef EX_TRUTH_H
#define EX_TRUTH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <mpi.h>

/* What one rank did to one file at one layer. */
struct ex_io {
	uint64_t write_bytes;
	uint64_t write_ops;
	uint64_t read_bytes;
	uint64_t read_ops;
};

/* Prints "NAME: rank R: message" on stderr and aborts the whole job with a
 * non-zero exit status. For I/O errors, short transfers and failed checks. */
void ex_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ex_die() with MPI's message when rc is not MPI_SUCCESS: "WHAT PATH: ...". */
void ex_check_mpi(int rc, const char *what, const char *path);

/* Sets the program name used in messages and truth lines; call first. */
void ex_init(const char *example, int rank);

/* Parses a decimal count for option OPT; dies unless MIN <= value <= MAX. */
uint64_t ex_parse_count(const char *text, char opt, uint64_t min, uint64_t max);

/* Creates DIR and its parents if missing (every rank may call it). */
void ex_mkdir_p(const char *dir);

/* Writes DIR/NAME into OUT (PATH_MAX bytes); dies if it does not fit. */
void ex_join(char *out, const char *dir, const char *name);

/* Starts an empty truth object for this rank. */
json_t *ex_truth_new(void);

/* Appends a file entry. PATH is resolved with realpath() (the file must
 * exist) unless it starts with '<', as in "<stderr>". */
void ex_truth_add(json_t *truth, const char *path, const char *layer, const struct ex_io *io);

/* Prints the truth as one line with one fputs + fflush, then frees it. */
void ex_truth_print(json_t *truth);

/* The same for every rank of COMM, printed by its rank 0 in one write, in
 * rank order: for truth lines too long for the launcher to forward whole
 * (Open MPI's mpirun mixes long lines of different ranks). Collective. */
void ex_truth_print_gathered(json_t *truth, MPI_Comm comm);

#endif
