// SHA-256 (FIPS 180-4), for the digest that pairs a saved graph with its weights sidecar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace webnn::format {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // Lower-case hex of the digest; the object must not be updated afterwards.
  std::string hex_digest();

 private:
  void block(const uint8_t* p);
  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

}  // namespace webnn::format
