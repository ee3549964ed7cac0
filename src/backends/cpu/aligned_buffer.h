// Cache-line aligned float storage for packed operands and per-thread scratch.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>

namespace webnn {

class AlignedFloats {
 public:
  static constexpr size_t kAlignment = 64;

  AlignedFloats() = default;
  explicit AlignedFloats(size_t n) { reserve(n); }

  // Grows to at least n floats; contents are not kept (scratch use).
  void reserve(size_t n) {
    if (n <= size_) return;
    data_.reset(
        static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t(kAlignment))));
    size_ = n;
  }
  void zero() {
    if (size_) std::memset(data_.get(), 0, size_ * sizeof(float));
  }
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t(kAlignment)); }
  };
  std::unique_ptr<float[], Free> data_;
  size_t size_ = 0;
};

}  // namespace webnn
