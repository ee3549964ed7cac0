// What the cpu conv2d and convTranspose2d kernels share: filter element addressing in any
// filter layout, and the operand checks both make before taking a node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "core/layout.h"

namespace webnn {

// Element (o, i, h, w) of a filter in any of its layouts ("oihw", "hwio", "iohw", ...), by
// per-letter strides.
class FilterLayout {
 public:
  FilterLayout(const std::string& letters, const std::vector<int64_t>& shape)
      : axes_(letters, shape) {}
  int64_t size(char c) const { return axes_.size(c); }
  int64_t at(int64_t o, int64_t i, int64_t h, int64_t w) const {
    return o * axes_.stride('o') + i * axes_.stride('i') + h * axes_.stride('h') +
           w * axes_.stride('w');
  }

 private:
  LayoutStrides axes_;
};

// True when a conv2d / convTranspose2d node (Params: Conv2dParams or ConvTranspose2dParams)
// reads and writes float32 rank-4 tensors in nchw or nhwc layout, the only ones the cpu
// kernels take (the others fall back to the reference kernels).
template <class Params>
bool float32_conv_operands(const Node& node, const CompileContext& cc) {
  const auto& p = node.as<Params>();
  const TensorView& x = cc.view(p.input);
  const TensorView& w = cc.view(p.filter);
  const TensorView& y = cc.view(OperandRef{node.outputs[0]});
  if (x.data_type != DataType::kFloat32 || w.data_type != DataType::kFloat32) return false;
  if (p.bias.present() && cc.view(p.bias).data_type != DataType::kFloat32) return false;
  if (x.rank() != 4 || w.rank() != 4 || y.rank() != 4) return false;
  return p.input_layout == "nchw" || p.input_layout == "nhwc";
}

}  // namespace webnn
