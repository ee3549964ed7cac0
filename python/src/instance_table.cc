// nanobind registers every new Python object of a bound class (an MLOperand per operation
// call) in a hash table, from noexcept code (nb_type_put -> inst_register). When the table
// must grow and its new bucket array cannot be allocated, the std::bad_alloc ends the process
// (std::terminate) instead of raising: an ONNX model that made the importer create millions of
// operands under an address-space limit did that (onnx_importer fuzzing, docs/reliability.md).
// The table is grown here first, where a failure is a MemoryError naming the operation. It
// reads nanobind's private header (the extension compiles nanobind's sources, so the layout is
// the one linked in); without it (WEBNN_NB_INTERNALS unset) the reservation does nothing.
#include "instance_table.h"

#include <new>
#include <string>

#include "errors.h"
#include "objects.h"

#if defined(WEBNN_NB_INTERNALS) && NB_VERSION_MAJOR >= 3 && !defined(NB_FREE_THREADED)
#include <nb_internals.h>
#define WEBNN_RESERVE_INSTANCES 1
#endif

namespace webnn::py {

namespace nb = nanobind;

#if defined(WEBNN_RESERVE_INSTANCES)

namespace {

// Objects that may be made between two reservations without one (ML(), objects made by
// nanobind itself): the table keeps room for them too.
constexpr size_t kSlack = 64;

nb::detail::nb_ptr_map& instance_table() {
  // One domain for the whole extension: every bound class shares the internals of MLOperand's.
  static nb::detail::nb_ptr_map* table = [] {
    auto* type = reinterpret_cast<PyTypeObject*>(nb::type<OperandHandle>().ptr());
    return &nb::detail::nb_type_data(type)->internals->shard(nullptr).inst_c2p;
  }();
  return *table;
}

}  // namespace

void reserve_python_objects(const char* what, size_t count) {
  // Called with the GIL held, like every access of nanobind to the table.
  nb::detail::nb_ptr_map& table = instance_table();
  const size_t need = table.size() + count + kSlack;
  // tsl::robin_map grows on the insertion that finds size() at bucket_count() * load factor.
  if (static_cast<double>(need) < table.bucket_count() * table.max_load_factor()) return;
  try {
    table.reserve(2 * need);  // doubling, as its own growth would
  } catch (const std::bad_alloc&) {
    throw_error(PyExc_MemoryError, std::string(what) + ": out of memory allocating room for " +
                                       std::to_string(need) +
                                       " live Python objects (nanobind's instance table)");
  }
}

#else

void reserve_python_objects(const char*, size_t) {}

#endif

}  // namespace webnn::py
