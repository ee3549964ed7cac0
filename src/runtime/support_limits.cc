// op_support_limits() / support_limits(): what the op schemas allow, narrowed by the
// context's backend, and the global limits every graph of the context obeys.
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

SupportLimits Context::support_limits() const {
  SupportLimits out;
  // The kernels take logical NCHW operands; layout choices are the compiler's business.
  out.preferred_input_layout = "nchw";
  out.max_tensor_byte_length = kMaxTensorByteLength;
  // GraphBuilder::input/constant and build() accept every data type at ranks 0..kMaxRank.
  const std::vector<DataType> all = mask_to_list(kAllTypes);
  const int max_rank = static_cast<int>(kMaxRank);
  out.input = {"input", all, 0, max_rank};
  out.constant = {"constant", all, 0, max_rank};
  out.output = {"output", all, 0, max_rank};
  out.operations = op_support_limits();
  return out;
}

}  // namespace webnn
