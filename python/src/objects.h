// The Python-visible objects: thin handles on core objects (no graph logic here).
#pragma once

#include <memory>

#include "webnn/builder.h"
#include "webnn/context.h"

namespace webnn::py {

struct MLHandle {};

struct ContextHandle {
  std::shared_ptr<Context> context;
};

struct BuilderHandle {
  std::shared_ptr<Context> context;
  std::shared_ptr<GraphBuilder> builder;
};

struct OperandHandle {
  std::shared_ptr<GraphBuilder> builder;
  OperandId id;
};

struct GraphHandle {
  std::shared_ptr<Context> context;
  std::shared_ptr<CompiledGraph> graph;
};

struct TensorHandle {
  std::shared_ptr<Context> context;
  std::shared_ptr<Tensor> tensor;
};

}  // namespace webnn::py
