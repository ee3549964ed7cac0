// Infer for the normalization family (spec/ops.md). TODO: being implemented.
#include "ops/infer.h"

namespace webnn {

void register_normalization_schemas(SchemaTable&) {}

}  // namespace webnn
