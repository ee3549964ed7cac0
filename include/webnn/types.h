// Data types, dimensions and operand descriptors (spec/api.md §3, §4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webnn/status.h"

namespace webnn {

enum class DataType : uint8_t {
  kFloat32,
  kFloat16,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kInt8,
  kUint8,
  kInt4,
  kUint4,
};
inline constexpr int kDataTypeCount = 10;

// A set of data types, one bit per DataType.
using DataTypeMask = uint32_t;
constexpr DataTypeMask mask_of(DataType t) { return 1u << static_cast<int>(t); }
template <class... Ts>
constexpr DataTypeMask mask_of(DataType t, Ts... rest) {
  return mask_of(t) | mask_of(rest...);
}
inline constexpr DataTypeMask kFloatTypes = mask_of(DataType::kFloat32, DataType::kFloat16);
inline constexpr DataTypeMask kByteTypes =
    mask_of(DataType::kFloat32, DataType::kFloat16, DataType::kInt32, DataType::kUint32,
            DataType::kInt64, DataType::kUint64, DataType::kInt8, DataType::kUint8);
inline constexpr DataTypeMask kAllTypes = kByteTypes | mask_of(DataType::kInt4, DataType::kUint4);
inline constexpr DataTypeMask kIndexTypes =
    mask_of(DataType::kInt32, DataType::kUint32, DataType::kInt64);
constexpr bool mask_has(DataTypeMask m, DataType t) { return (m & mask_of(t)) != 0; }

const char* data_type_name(DataType t);
std::optional<DataType> parse_data_type(std::string_view name);
std::string mask_to_string(DataTypeMask mask);  // "float32, float16"
std::vector<DataType> mask_to_list(DataTypeMask mask);

constexpr bool is_float(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat16; }
constexpr bool is_4bit(DataType t) { return t == DataType::kInt4 || t == DataType::kUint4; }
constexpr bool is_signed(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kInt32 ||
         t == DataType::kInt64 || t == DataType::kInt8 || t == DataType::kInt4;
}
// The byte-sized type 4-bit values are unpacked into for computation.
constexpr DataType unpacked_type(DataType t) {
  return t == DataType::kInt4 ? DataType::kInt8 : t == DataType::kUint4 ? DataType::kUint8 : t;
}
// Bytes per element of the in-memory (unpacked) representation.
int element_size(DataType t);
// Storage bytes for `count` elements of `t` in the packed (tensor/file) layout.
Expected<uint64_t> storage_bytes(DataType t, uint64_t count);

// Largest byte length of one tensor or operand (reported as maxTensorByteLength).
inline constexpr uint64_t kMaxTensorByteLength = uint64_t{1} << 40;

// Blocks of at least this many bytes are mapped from the operating system: their pages read
// as zero and become resident only when written, so a graph whose arena is gigabytes builds at
// once (zeroing a 16 GiB arena at build took 43 s) and a tensor costs only what is written.
// Smaller blocks come from the heap, which reuses freed ones: a fresh mapping faults in every
// page on first write, so compute() of a [1, 21, 512, 512] relu (two 22 MB tensors a call)
// took 110 ms with mappings from 1 MiB, against 10 ms on reused tensors.
inline constexpr size_t kMappedAllocationBytes = size_t{64} << 20;
// 64-byte aligned (page aligned from kMappedAllocationBytes on); std::bad_alloc on failure.
void* allocate_cache_aligned(size_t bytes);
void deallocate_cache_aligned(void* p, size_t bytes);

// Allocates on 64-byte (cache line) boundaries: kernels read and write tensors in place with
// full-width vector loads, which cost twice when they straddle two lines.
template <class T>
struct CacheAlignedAllocator {
  using value_type = T;
  CacheAlignedAllocator() = default;
  template <class U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_cache_aligned(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { deallocate_cache_aligned(p, n * sizeof(T)); }
  // resize(n) default-initialises (writes nothing): allocate_zeroed zeroes only the bytes that
  // are not zero already, and a fresh mapping is.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(static_cast<Args&&>(args)...);
  }
  template <class U>
  bool operator==(const CacheAlignedAllocator<U>&) const {
    return true;
  }
};
using AlignedBytes = std::vector<uint8_t, CacheAlignedAllocator<uint8_t>>;

// Resizes `buffer` to `bytes` zero bytes; a clear error instead of std::bad_alloc.
Status allocate_zeroed(AlignedBytes& buffer, uint64_t bytes, const char* what);

// Largest valid dimension (WebNN "valid dimension").
inline constexpr int64_t kMaxDimension = 2147483647;
inline constexpr size_t kMaxRank = 8;

// A static size, or a named dynamic dimension bounded by max_size (spec/api.md §4.2, §11).
struct Dim {
  int64_t value = 0;  // the static size, or maxSize when dynamic
  std::string name;   // empty for a static dimension

  Dim() = default;
  Dim(int64_t size) : value(size) {}  // NOLINT(google-explicit-constructor)
  Dim(std::string n, int64_t max_size) : value(max_size), name(std::move(n)) {}

  bool is_dynamic() const { return !name.empty(); }
  bool is_static() const { return name.empty(); }
  bool operator==(const Dim& o) const { return value == o.value && name == o.name; }
  bool operator!=(const Dim& o) const { return !(*this == o); }
};
using Shape = std::vector<Dim>;

std::string dim_to_string(const Dim& d);
std::string shape_to_string(const Shape& s);
std::string shape_to_string(const std::vector<int64_t>& s);
bool is_static_shape(const Shape& s);
std::vector<int64_t> static_sizes(const Shape& s);  // dynamic dims give their max_size
Shape to_shape(const std::vector<int64_t>& sizes);
// Element count with overflow checking (dynamic dims count at max_size).
Expected<uint64_t> element_count(const Shape& s);
Expected<uint64_t> element_count(const std::vector<int64_t>& s);

struct OperandDesc {
  DataType data_type = DataType::kFloat32;
  Shape shape;
  size_t rank() const { return shape.size(); }
  bool operator==(const OperandDesc& o) const {
    return data_type == o.data_type && shape == o.shape;
  }
};
std::string desc_to_string(const OperandDesc& d);  // "float32 [2,3]"

using float16 = _Float16;

// "recurrent_weight" -> "recurrentWeight": WebNN names from our snake_case field names.
std::string camel_case(std::string_view snake);

// Pack/unpack 4-bit values: element 2i in the low nibble of byte i (spec/api.md §3.2).
void pack_4bit(const uint8_t* unpacked, uint64_t count, uint8_t* packed);
void unpack_4bit(const uint8_t* packed, uint64_t count, bool is_signed, uint8_t* unpacked);

}  // namespace webnn
