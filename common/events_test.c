/* events.def tables: every layer and op has a distinct name, a label and a
 * class; lookups by name round trip; out-of-range values are safe. */
#include <string.h>

#include "err.h"
#include "events.h"
#include "test_util.h"

static void names_are_distinct_and_round_trip(void **state)
{
	for (unsigned i = 0; i < IOP_OP__COUNT; i++) {
		enum iop_op op;
		assert_true(iop_op_from_name(iop_op_name(i), &op));
		assert_int_equal(op, i);
		assert_true(strlen(iop_op_label(i)) > 0);
		for (unsigned j = i + 1; j < IOP_OP__COUNT; j++)
			assert_string_not_equal(iop_op_name(i), iop_op_name(j));
	}
	for (unsigned i = 0; i < IOP_LAYER__COUNT; i++) {
		enum iop_layer l;
		assert_true(iop_layer_from_name(iop_layer_name(i), &l));
		assert_int_equal(l, i);
	}
	enum iop_op op;
	assert_false(iop_op_from_name("no-such-op", &op));
}

static void classes_match_the_operation(void **state)
{
	assert_int_equal(iop_op_class(IOP_OP_READ), IOP_CLASS_READ);
	assert_int_equal(iop_op_class(IOP_OP_READ_COLL), IOP_CLASS_READ);
	assert_int_equal(iop_op_class(IOP_OP_WRITE), IOP_CLASS_WRITE);
	assert_int_equal(iop_op_class(IOP_OP_WRITE_COLL), IOP_CLASS_WRITE);
	assert_int_equal(iop_op_class(IOP_OP_OPEN), IOP_CLASS_META);
	assert_int_equal(iop_op_class(IOP_OP_SYNC), IOP_CLASS_META);
	assert_string_equal(iop_layer_label(IOP_LAYER_MPIIO), "MPI-IO");
	assert_string_equal(iop_layer_name(IOP_LAYER_HDF5), "hdf5");
	assert_string_equal(iop_class_name(IOP_CLASS_WRITE), "write");
}

static void out_of_range_values_are_safe(void **state)
{
	assert_string_equal(iop_op_name((enum iop_op)200), "?");
	assert_string_equal(iop_layer_label((enum iop_layer)9), "?");
	assert_string_equal(iop_class_label((enum iop_class)9), "?");
	assert_int_equal(iop_op_class((enum iop_op)200), IOP_CLASS_META);
	assert_string_equal(iop_strerror(IOP_OK), "success");
	assert_string_equal(iop_errname(IOP_ERR_BAD_MAC), "BAD_MAC");
	assert_string_equal(iop_strerror((enum iop_err)999), "unknown error");
	/* every error has a distinct text */
	for (unsigned i = 0; i < IOP_ERR__COUNT; i++)
		for (unsigned j = i + 1; j < IOP_ERR__COUNT; j++)
			assert_string_not_equal(iop_strerror(i), iop_strerror(j));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(names_are_distinct_and_round_trip),
	    cmocka_unit_test(classes_match_the_operation),
	    cmocka_unit_test(out_of_range_values_are_safe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
