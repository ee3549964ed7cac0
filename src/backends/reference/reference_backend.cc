#include "backends/reference/reference_backend.h"

#include "backends/reference/kernels.h"

namespace webnn {

namespace {

KernelTable build_reference_kernels() {
  KernelTable t{};
  register_reference_elementwise(t);
  register_reference_reduction(t);
  register_reference_movement(t);
  register_reference_gather(t);
  register_reference_linalg(t);
  register_reference_conv(t);
  register_reference_pool(t);
  register_reference_normalization(t);
  register_reference_quantization(t);
  register_reference_recurrent(t);
  return t;
}

class ReferenceBackend final : public Backend {
 public:
  const char* name() const override { return "reference"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  DataTypeMask supported_types(OpKind, const char*, DataTypeMask schema) const override {
    return schema;
  }
  Expected<std::unique_ptr<Kernel>> compile(const Node& node,
                                            const CompileContext&) const override {
    // The oracle runs graphs as built: the compiler fuses nothing for it.
    if (!node.epilogue.empty()) {
      return make_error(ErrorKind::kInternal, op_spec_name(node.kind),
                        ": the reference backend does not run fused epilogues");
    }
    KernelFn fn = reference_kernels()[static_cast<int>(node.kind)];
    if (!fn) {
      return make_error(ErrorKind::kNotSupported, op_spec_name(node.kind), ": no reference kernel");
    }
    return std::unique_ptr<Kernel>(std::make_unique<FunctionKernel>(fn));
  }
};

}  // namespace

const KernelTable& reference_kernels() {
  static const KernelTable table = build_reference_kernels();
  return table;
}

const Backend& reference_backend() {
  static const ReferenceBackend backend;
  return backend;
}

}  // namespace webnn
