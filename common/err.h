/* Error codes shared by every part of iopulse. A call that can fail returns
 * an enum iop_err (IOP_OK == 0) and hands results back through out-parameters;
 * iop_strerror() gives the text. The list lives in errors.def. */
#ifndef IOP_ERR_H
#define IOP_ERR_H

enum iop_err {
#define IOP_ERROR(name, text) IOP_ERR_##name,
#include "errors.def"
#undef IOP_ERROR
	IOP_ERR__COUNT
};

#define IOP_OK IOP_ERR_OK

/* Text for an error code; never NULL, also for values out of range. */
const char *iop_strerror(enum iop_err err);

/* The symbolic name ("BAD_MAC"), for logs and counters; never NULL. */
const char *iop_errname(enum iop_err err);

#endif
