/* Template for a new layer (see docs/shim.md, "Adding a layer").
 *
 * This file is compiled (so it cannot rot) but wraps nothing real: the one
 * wrapper below is for a made-up library function, iopulse_template_write(),
 * that only exists here. To add a layer, copy this file, replace the made-up
 * function by the real ones, and add the file to CMakeLists.txt. */
#include <sys/types.h>

#include "shim.h"

/* The real library would declare this; a real wrapper needs its exact type. */
ssize_t iopulse_template_write(int handle, const void *buf, size_t n);

/* 1. The wrapper has the real function's name and type, and is exported. */
SHIM_EXPORT ssize_t iopulse_template_write(int handle, const void *buf, size_t n)
{
	/* 2. The real function, found once, with dlsym(RTLD_NEXT) (a layer whose
	 *    library may be loaded privately resolves through shim_resolve_opt,
	 *    which also looks in every loaded object, and copes with NULL). */
	static ssize_t (*real)(int, const void *, size_t);
	if (!real)
		real = (ssize_t(*)(int, const void *, size_t))shim_resolve_opt("iopulse_template_write");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}

	/* 3. Which file this is: 0 means "not watched": call straight through.
	 *    Handles map to ids through a table the layer keeps (see mpiio.c and
	 *    hdf5.c); paths through shim_name_path(); fds through shim_fd_file(). */
	uint32_t file = shim_fd_file(handle);

	/* 4. shim_begin() decides whether to record (shim on, thread not inside
	 *    the shim, nesting not too deep), notes the call site (this
	 *    wrapper's return address: it is a macro) and stamps the start. */
	struct shim_call c;
	if (!file || !shim_begin(&c, IOP_LAYER_POSIX, IOP_OP_WRITE, file))
		return real(handle, buf, n);

	/* 5. The real call, untouched. */
	ssize_t r = real(handle, buf, n);

	/* 6. shim_end_io() stamps the end, records bytes or errno, links the call
	 *    to its parent and children, and leaves errno as the real call set it. */
	shim_end_io(&c, r, 0, false);
	return r;
}
