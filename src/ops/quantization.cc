// Infer for the quantization family (spec/ops.md). TODO: being implemented.
#include "ops/infer.h"

namespace webnn {

void register_quantization_schemas(SchemaTable&) {}

}  // namespace webnn
