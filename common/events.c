/* Names, labels and classes of layers and operations, from events.def. */
#include <string.h>

#include "events.h"

static const char *const layer_names[] = {
#define IOP_LAYER(id, name, label) [IOP_LAYER_##id] = #name,
#include "events.def"
#undef IOP_LAYER
};
static const char *const layer_labels[] = {
#define IOP_LAYER(id, name, label) [IOP_LAYER_##id] = label,
#include "events.def"
#undef IOP_LAYER
};
static const char *const class_names[] = {
#define IOP_CLASS(id, name, label) [IOP_CLASS_##id] = #name,
#include "events.def"
#undef IOP_CLASS
};
static const char *const class_labels[] = {
#define IOP_CLASS(id, name, label) [IOP_CLASS_##id] = label,
#include "events.def"
#undef IOP_CLASS
};
static const char *const op_names[] = {
#define IOP_OP(id, name, cls, label) [IOP_OP_##id] = #name,
#include "events.def"
#undef IOP_OP
};
static const char *const op_labels[] = {
#define IOP_OP(id, name, cls, label) [IOP_OP_##id] = label,
#include "events.def"
#undef IOP_OP
};

static const char *pick(const char *const *table, unsigned n, unsigned i)
{
	return i < n ? table[i] : "?";
}

const char *iop_layer_name(enum iop_layer l)
{
	return pick(layer_names, IOP_LAYER__COUNT, l);
}
const char *iop_layer_label(enum iop_layer l)
{
	return pick(layer_labels, IOP_LAYER__COUNT, l);
}
const char *iop_class_name(enum iop_class c)
{
	return pick(class_names, IOP_CLASS__COUNT, c);
}
const char *iop_class_label(enum iop_class c)
{
	return pick(class_labels, IOP_CLASS__COUNT, c);
}
const char *iop_op_name(enum iop_op op)
{
	return pick(op_names, IOP_OP__COUNT, op);
}
const char *iop_op_label(enum iop_op op)
{
	return pick(op_labels, IOP_OP__COUNT, op);
}

static bool find(const char *const *table, unsigned n, const char *name, unsigned *out)
{
	for (unsigned i = 0; i < n; i++) {
		if (strcmp(table[i], name) == 0) {
			*out = i;
			return true;
		}
	}
	return false;
}

bool iop_layer_from_name(const char *name, enum iop_layer *out)
{
	unsigned i;
	if (!find(layer_names, IOP_LAYER__COUNT, name, &i))
		return false;
	*out = (enum iop_layer)i;
	return true;
}

bool iop_op_from_name(const char *name, enum iop_op *out)
{
	unsigned i;
	if (!find(op_names, IOP_OP__COUNT, name, &i))
		return false;
	*out = (enum iop_op)i;
	return true;
}
