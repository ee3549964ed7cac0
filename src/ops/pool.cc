// Infer for the pool family (spec/ops.md). TODO: being implemented.
#include "ops/infer.h"

namespace webnn {

void register_pool_schemas(SchemaTable&) {}

}  // namespace webnn
