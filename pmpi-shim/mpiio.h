/* What the MPI-IO layer's two files share (mpiio.c: files, blocking and
 * split-collective transfers; mpiio_req.c: nonblocking transfers and the
 * MPI_Wait and MPI_Test families): how a wrapper finds the real PMPI
 * function, which files are watched, and how a transfer's bytes are known.
 *
 * Bytes moved come from the transfer's status when it has one: the MPI
 * library keeps there the bytes it moved (Open MPI's _ucount, MPICH's and
 * ROMIO's count), whatever the datatype, and MPI_Get_elements_x with
 * MPI_BYTE reads them back. The wrappers pass a status of their own when the
 * application passed MPI_STATUS_IGNORE, so a partial transfer is exact
 * either way. What was asked (count x MPI_Type_size) is recorded only when
 * no status can be had (docs/shim.md, "MPI-IO bytes"). */
#ifndef IOP_SHIM_MPIIO_H
#define IOP_SHIM_MPIIO_H

#include <mpi.h>

#include "shim.h"

#define REAL_PMPI(name)                                                                            \
	static __typeof__(MPI_##name) *real_##name;                                                \
	if (SHIM_UNLIKELY(!real_##name))                                                           \
	real_##name = (__typeof__(MPI_##name) *)shim_resolve("PMPI_" #name)

/* A PMPI function the wrappers use as a helper, found at run time too. */
#define PMPI_FN(name)                                                                              \
	({                                                                                         \
		static __typeof__(PMPI_##name) *fn_;                                               \
		if (SHIM_UNLIKELY(!fn_))                                                           \
			fn_ = (__typeof__(PMPI_##name) *)shim_resolve("PMPI_" #name);              \
		fn_;                                                                               \
	})

/* Defines MPI_name and exports PMPI_name as the same function. */
#define MPI_WRAP(name, params)                                                                     \
	int PMPI_##name params __attribute__((alias("MPI_" #name), visibility("default")));        \
	SHIM_EXPORT int MPI_##name params

/* The row of an open file handle; 0 when not watched or not recording. */
uint32_t shim_mpiio_file(MPI_File fh);

/* A collective call's number (docs/shim.md, "Collective calls"): the
 * process's n-th collective call on the file, from 1, and the ranks of the
 * handle's communicator. seq = 0: not numbered (a communicator of one
 * rank, a file not watched). */
struct shim_coll {
	uint32_t seq, size;
};
/* shim_mpiio_file() for a collective call on fh, which it numbers in *coll. */
uint32_t shim_mpiio_file_coll(MPI_File fh, struct shim_coll *coll);

/* count x the datatype's size: what a transfer asks to move. */
uint64_t shim_mpiio_asked(MPI_Datatype type, MPI_Count count);

/* Bytes a finished transfer moved, from its status; asked when the status
 * says nothing usable (more than asked, or undefined). */
uint64_t shim_mpiio_moved(const MPI_Status *st, uint64_t asked);

/* Byte offset in the file of the current individual file pointer, and of
 * an offset in etypes through the file's view. */
uint64_t shim_mpiio_position(MPI_File fh);
uint64_t shim_mpiio_byte_offset(MPI_File fh, MPI_Offset off);

/* Ends a transfer: bytes and offset, or EIO when the MPI call failed. The
 * _coll form for a collective one (coll from shim_mpiio_file_coll). */
void shim_mpiio_end(struct shim_call *c, int rc, uint64_t bytes, uint64_t offset, bool has_offset);
void shim_mpiio_end_coll(struct shim_call *c, int rc, uint64_t bytes, uint64_t offset,
                         bool has_offset, struct shim_coll coll);

/* How the offset of a transfer is known: explicit offset, individual file
 * pointer, shared file pointer (none). Each gives "has, value". */
#define OFF_AT(fh)       true, shim_mpiio_byte_offset(fh, offset)
#define OFF_INDIV(fh)    true, shim_mpiio_position(fh)
#define OFF_SHARED(fh)   false, 0
#define XFER_OFFSET(...) XFER_OFFSET_(__VA_ARGS__)
#define XFER_OFFSET_(has, value)                                                                   \
	bool has_off_ = (has);                                                                     \
	uint64_t off_ = (value)

#endif
