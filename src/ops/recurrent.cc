// Infer for the recurrent family (spec/ops.md). TODO: being implemented.
#include "ops/infer.h"

namespace webnn {

void register_recurrent_schemas(SchemaTable&) {}

}  // namespace webnn
