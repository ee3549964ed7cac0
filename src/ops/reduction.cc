// Infer for the reduction family (spec/ops.md). TODO: being implemented.
#include "ops/infer.h"

namespace webnn {

void register_reduction_schemas(SchemaTable&) {}

}  // namespace webnn
