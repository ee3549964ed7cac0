// Conversions between Python/NumPy values and core types (spec/api.md §3, §4).
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <string>
#include <vector>

#include "webnn/types.h"

namespace webnn::py {

namespace nb = nanobind;

DataType parse_data_type(nb::handle value, const std::string& what);
bool is_python_int(nb::handle value);  // int or NumPy integer, not bool
int64_t to_int64(nb::handle value, const std::string& what, bool non_negative);
double to_double(nb::handle value, const std::string& what);
bool to_bool(nb::handle value, const std::string& what);
std::string to_string(nb::handle value, const std::string& what);
std::vector<nb::handle> to_sequence(nb::handle value, const std::string& what);

// Graph shapes: ints and, where allowed, dynamic-dimension dicts. Sizes and rank are checked
// by the builder (GraphBuilder::check_shape and the ops' Infer), not here.
Shape parse_shape(nb::handle value, const std::string& what, bool allow_dynamic);
// Tensor shapes: static ints >= 0.
std::vector<int64_t> parse_tensor_shape(nb::handle value, const std::string& what);
nb::object dim_to_python(const Dim& d);
nb::list shape_to_python(const Shape& shape);

// A NumPy-compatible value adapted to a WebNN data type (packed bytes, C order).
struct HostArray {
  DataType data_type;
  std::vector<int64_t> shape;
  uint64_t count = 0;
  std::vector<uint8_t> bytes;
};
// target == nullopt: the data type is inferred from the array (constant() rules).
HostArray adapt_array(nb::handle value, std::optional<DataType> target, const std::string& what);
// The buffer of `value` when it is already laid out as `target`'s packed bytes: a NumPy array
// of exactly the carrier dtype, native order, C-contiguous (never for int4/uint4, whose
// bytes are packed). Lets writes copy the caller's array once instead of converting it.
struct CarrierView {
  const uint8_t* data = nullptr;
  uint64_t nbytes = 0;
  uint64_t count = 0;
};
std::optional<CarrierView> carrier_view(nb::handle value, DataType target);
// A new, uninitialised NumPy array of the carrier dtype; `*data` points at its bytes.
nb::object empty_numpy(DataType data_type, const std::vector<int64_t>& shape, uint8_t** data);
// `arr` (an array of the carrier dtype) as the dtype a caller asked for (see below).
nb::object as_requested_dtype(nb::object arr, DataType data_type, nb::handle dtype,
                              const std::string& what);
// Packed bytes -> a new owning NumPy array of the carrier dtype.
nb::object to_numpy(DataType data_type, const std::vector<int64_t>& shape,
                    const std::vector<uint8_t>& packed);
// Same, as NumPy dtype `dtype` (None: the carrier): the carrier itself or, for int4/uint4,
// ml_dtypes.int4/uint4. Any other dtype raises ValueError naming `what`.
nb::object to_numpy(DataType data_type, const std::vector<int64_t>& shape,
                    const std::vector<uint8_t>& packed, nb::handle dtype, const std::string& what);

}  // namespace webnn::py
