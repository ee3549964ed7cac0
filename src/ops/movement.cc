// Infer for the movement family (spec/ops.md). TODO: being implemented.
#include "ops/infer.h"

namespace webnn {

void register_movement_schemas(SchemaTable&) {}

}  // namespace webnn
