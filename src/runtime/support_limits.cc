// op_support_limits(): what the op schemas allow, narrowed by the context's backend.
#include "backends/backend.h"
#include "ops/infer.h"
#include "webnn/context.h"

namespace webnn {

std::vector<OpSupport> Context::op_support_limits() const {
  std::vector<OpSupport> out;
  for (int i = 0; i < kOpCount; ++i) {
    auto kind = static_cast<OpKind>(i);
    const OpSchema& schema = op_schema(kind);
    OpSupport op{kind, {}};
    for (const OperandLimit& l : schema.limits) {
      DataTypeMask types = backend_->supported_types(kind, l.field, l.types);
      op.operands.push_back({camel_case(l.field), mask_to_list(types), l.min_rank, l.max_rank});
    }
    out.push_back(std::move(op));
  }
  return out;
}

}  // namespace webnn
