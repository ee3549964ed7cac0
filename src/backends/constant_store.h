// A context's store of constant bytes and of prepared (packed) forms of constants, shared by
// every graph compiled on that context. Graphs built from the same weights — an ONNX session's
// graphs for other input shapes, a model loaded twice — then hold one copy of each weight and
// pack it once.
//
// The store owns nothing: it holds weak references, so a constant or a packed weight lives
// exactly as long as a compiled graph that uses it, and the store's memory stays bounded by
// the live graphs (expired entries are swept as the store grows). Thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "webnn/graph.h"

namespace webnn {

class ConstantStore {
 public:
  // The stored constant with the same bytes as `data`, or `data` itself, now stored. Views
  // into mapped files are returned as they are (hashing would read a whole file that may
  // never be paged in otherwise). `reused` tells whether an equal constant was found.
  std::shared_ptr<const ConstantData> intern(std::shared_ptr<const ConstantData> data,
                                             bool* reused) {
    *reused = false;
    if (!data || data->is_view()) return data;
    const DataKey key{data->size(), hash_bytes(data->data(), data->size())};
    std::lock_guard<std::mutex> lock(mu_);
    auto range = data_.equal_range(key);
    for (auto it = range.first; it != range.second; ++it) {
      std::shared_ptr<const ConstantData> stored = it->second.lock();
      if (stored == data) return data;
      if (stored && std::memcmp(stored->data(), data->data(), data->size()) == 0) {
        *reused = true;
        return stored;
      }
    }
    data_.emplace(key, data);
    sweep_locked();
    return data;
  }

  // A prepared form of `data` under `key` (what the preparation depends on: op, layout, ISA),
  // or null.
  std::shared_ptr<const void> find_prepared(const std::shared_ptr<const ConstantData>& data,
                                            const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prepared_.find({data.get(), key});
    if (it == prepared_.end()) return nullptr;
    // The address alone could belong to a freed constant's successor: the source must be the
    // very same object, still alive.
    if (it->second.source.lock() != data) return nullptr;
    return it->second.value.lock();
  }

  void add_prepared(const std::shared_ptr<const ConstantData>& data, const std::string& key,
                    const std::shared_ptr<const void>& value) {
    std::lock_guard<std::mutex> lock(mu_);
    prepared_[{data.get(), key}] = Prepared{data, value};
    sweep_locked();
  }

  // Live entries (for tests and statistics).
  size_t live_constants() const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [key, weak] : data_) n += weak.expired() ? 0 : 1;
    return n;
  }
  uint64_t live_constant_bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t bytes = 0;
    for (const auto& [key, weak] : data_) bytes += weak.expired() ? 0 : key.first;
    return bytes;
  }

 private:
  using DataKey = std::pair<size_t, uint64_t>;  // byte size, hash
  struct Prepared {
    std::weak_ptr<const ConstantData> source;
    std::weak_ptr<const void> value;
  };

  // 64-bit hash over 8-byte words (a multiply-xorshift mix); equality is checked with memcmp,
  // so collisions cost a comparison, never a wrong constant.
  static uint64_t hash_bytes(const uint8_t* p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    uint64_t tail = 0;
    if (i < n) std::memcpy(&tail, p + i, n - i);
    h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
  }

  // Drops expired entries whenever the maps have doubled since the last sweep (amortised O(1)).
  void sweep_locked() {
    if (data_.size() + prepared_.size() < sweep_at_) return;
    for (auto it = data_.begin(); it != data_.end();) {
      it = it->second.expired() ? data_.erase(it) : std::next(it);
    }
    for (auto it = prepared_.begin(); it != prepared_.end();) {
      const bool dead = it->second.source.expired() || it->second.value.expired();
      it = dead ? prepared_.erase(it) : std::next(it);
    }
    sweep_at_ = std::max<size_t>(64, 2 * (data_.size() + prepared_.size()));
  }

  mutable std::mutex mu_;
  std::multimap<DataKey, std::weak_ptr<const ConstantData>> data_;
  std::map<std::pair<const ConstantData*, std::string>, Prepared> prepared_;
  size_t sweep_at_ = 64;
};

}  // namespace webnn
