// Layout strings name the axes of a rank-4 tensor by letter: "nchw"/"nhwc" for images, "oihw",
// "hwio", "ohwi", "ihwo", "iohw", "hwoi" for filters (spec/ops.md conv2d, convTranspose2d,
// pool2d). Every reader of a layout (Infer, graph statistics, the kernels) decodes it here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace webnn {

// The axis of each letter of a layout. Infer has validated the layout (letters 'a'..'z', each
// once), so every letter asked for is present.
class LayoutAxes {
 public:
  explicit LayoutAxes(std::string_view layout) {
    for (size_t i = 0; i < layout.size(); ++i) axis_[slot(layout[i])] = static_cast<uint8_t>(i);
  }
  size_t operator[](char letter) const { return axis_[slot(letter)]; }

 private:
  static size_t slot(char letter) { return static_cast<unsigned char>(letter - 'a') % 26; }
  uint8_t axis_[26] = {};
};

// Size and row-major stride of each axis of a concrete rank-4 shape, by layout letter: element
// (o, i, h, w) of a filter in any layout is at o*stride('o') + i*stride('i') + ...
class LayoutStrides {
 public:
  LayoutStrides(std::string_view layout, const std::vector<int64_t>& shape) : axes_(layout) {
    const size_t rank = shape.size() < 4 ? shape.size() : 4;
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      size_[i] = shape[i];
      stride_[i] = stride;
      stride *= shape[i];
    }
  }
  int64_t size(char letter) const { return size_[axes_[letter]]; }
  int64_t stride(char letter) const { return stride_[axes_[letter]]; }

 private:
  LayoutAxes axes_;
  int64_t size_[4] = {};
  int64_t stride_[4] = {};
};

}  // namespace webnn
