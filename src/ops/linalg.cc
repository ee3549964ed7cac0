// Infer for the linalg family (spec/ops.md). TODO: being implemented.
#include "ops/infer.h"

namespace webnn {

void register_linalg_schemas(SchemaTable&) {}

}  // namespace webnn
