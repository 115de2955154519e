/* Shared by the recording library's unit tests: a small recording with
 * every frame type, payloads that can be told apart and checked, some
 * compressible (stored compressed) and some not (stored raw), and a reader
 * that reads a recording back and checks every frame it returns. */
#ifndef REC_TEST_UTIL_H
#define REC_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec.h"

#define T0  1700000000000000000ull /* time of the first frame */
#define SEC 1000000000ull

struct spec {
	unsigned type;
	uint64_t time_ns;
	size_t len;
	bool compressible;
};

/* The payload of the frame with sequence number seq, as the specs say. */
void test_payload(const struct spec *s, uint64_t seq, uint8_t *out);

/* The sample: META (seq 0) then n - 1 frames of every type. */
extern const char test_meta[];
size_t test_sample(struct spec *out, size_t cap);

/* Writes META then specs[1 .. n) to io; closes (END) when close is set,
 * else abandons the writer. Offsets of each frame (META's included) go to
 * offsets when not NULL; the file size after each frame to ends. */
void test_write(struct rec_io *io, const struct rec_writer_opts *opts, const struct spec *specs,
                size_t n, bool close, uint64_t *ends);

/* Reads a recording of len bytes at data with rec_next(): every frame it
 * returns must be specs[f.seq] exactly. Returns how many frames it read;
 * *last_seq gets the last one's seq (or -1). */
size_t test_read_all(const uint8_t *data, size_t len, const struct spec *specs, size_t n,
                     int64_t *last_seq, struct rec_info *info);

/* Opens a reader on a view of len bytes at data (asserting success), and
 * closes both. */
struct rec_reader *test_open(const uint8_t *data, size_t len, struct rec_io **io);
void test_close(struct rec_reader *r, struct rec_io *io);

/* A copy of a memory io's bytes (the caller frees it); closes io. */
uint8_t *test_mem_copy(struct rec_io *io, size_t *len);
/* The bytes of a memory recording of specs written as test_write does;
 * the caller frees *data. */
size_t test_spec_bytes(uint8_t **data, const struct rec_writer_opts *opts, const struct spec *specs,
                       size_t n, bool close, uint64_t *ends);
/* A memory recording of the sample; the caller frees *data. */
size_t test_sample_bytes(uint8_t **data, bool close, struct spec *specs, size_t *n, uint64_t *ends);

#endif
