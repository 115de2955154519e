/* Text and names for enum iop_err, generated from errors.def. */
#include "err.h"

static const char *const err_text[] = {
#define IOP_ERROR(name, text) [IOP_ERR_##name] = text,
#include "errors.def"
#undef IOP_ERROR
};

static const char *const err_name[] = {
#define IOP_ERROR(name, text) [IOP_ERR_##name] = #name,
#include "errors.def"
#undef IOP_ERROR
};

const char *iop_strerror(enum iop_err err)
{
	if ((unsigned)err >= IOP_ERR__COUNT)
		return "unknown error";
	return err_text[err];
}

const char *iop_errname(enum iop_err err)
{
	if ((unsigned)err >= IOP_ERR__COUNT)
		return "UNKNOWN";
	return err_name[err];
}
