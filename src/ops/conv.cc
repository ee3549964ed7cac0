// Infer for the conv family (spec/ops.md). TODO: being implemented.
#include "ops/infer.h"

namespace webnn {

void register_conv_schemas(SchemaTable&) {}

}  // namespace webnn
