// float32 <-> raw bytes for tests that build constants and read tensors back.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace webnn {

inline std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

inline std::vector<float> floats_of(const std::vector<uint8_t>& b) {
  std::vector<float> out(b.size() / 4);
  std::memcpy(out.data(), b.data(), b.size());
  return out;
}

}  // namespace webnn
