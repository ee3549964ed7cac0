// The default CPU backend. Until the fast kernels land it compiles every node to the
// reference kernel, through the same compile/plan/dispatch path as any backend.
#include "backends/backend.h"

namespace webnn {

namespace {

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  DataTypeMask supported_types(OpKind kind, const char* field, DataTypeMask schema) const override {
    return reference_backend().supported_types(kind, field, schema);
  }
  Expected<std::unique_ptr<Kernel>> compile(const Node& node) const override {
    return reference_backend().compile(node);
  }
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

const std::vector<const Backend*>& registered_backends() {
  static const std::vector<const Backend*> backends = {&cpu_backend(), &reference_backend()};
  return backends;
}

const Backend* find_backend(const std::string& name) {
  for (const Backend* b : registered_backends()) {
    if (name == b->name()) return b;
  }
  return nullptr;
}

}  // namespace webnn
