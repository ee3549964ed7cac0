// Infer for the gather family (spec/ops.md). TODO: being implemented.
#include "ops/infer.h"

namespace webnn {

void register_gather_schemas(SchemaTable&) {}

}  // namespace webnn
