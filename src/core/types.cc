#include "webnn/types.h"

#include <sys/mman.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace webnn {

namespace {
constexpr const char* kNames[kDataTypeCount] = {"float32", "float16", "int32", "uint32", "int64",
                                                "uint64",  "int8",    "uint8", "int4",   "uint4"};
}

void check_failed(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "webnn internal check failed: %s at %s:%d\n", condition, file, line);
  std::abort();
}

const char* data_type_name(DataType t) { return kNames[static_cast<int>(t)]; }

std::optional<DataType> parse_data_type(std::string_view name) {
  for (int i = 0; i < kDataTypeCount; ++i) {
    if (name == kNames[i]) return static_cast<DataType>(i);
  }
  return std::nullopt;
}

std::vector<DataType> mask_to_list(DataTypeMask mask) {
  std::vector<DataType> out;
  for (int i = 0; i < kDataTypeCount; ++i) {
    if (mask & (1u << i)) out.push_back(static_cast<DataType>(i));
  }
  return out;
}

std::string mask_to_string(DataTypeMask mask) {
  std::string out;
  for (DataType t : mask_to_list(mask)) {
    if (!out.empty()) out += ", ";
    out += data_type_name(t);
  }
  return out;
}

int element_size(DataType t) {
  switch (t) {
    case DataType::kFloat32:
    case DataType::kInt32:
    case DataType::kUint32:
      return 4;
    case DataType::kFloat16:
      return 2;
    case DataType::kInt64:
    case DataType::kUint64:
      return 8;
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt4:
    case DataType::kUint4:
      return 1;
  }
  return 1;
}

Expected<uint64_t> storage_bytes(DataType t, uint64_t count) {
  if (is_4bit(t)) return (count + 1) / 2;
  uint64_t size = static_cast<uint64_t>(element_size(t));
  if (count > UINT64_MAX / size) {
    return make_error(ErrorKind::kValue, "tensor byte length overflows (", count, " elements of ",
                      data_type_name(t), ")");
  }
  return count * size;
}

std::string dim_to_string(const Dim& d) {
  if (d.is_static()) return std::to_string(d.value);
  return str_cat(d.name, "<=", d.value);
}

std::string shape_to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += dim_to_string(s[i]);
  }
  return out + "]";
}

std::string shape_to_string(const std::vector<int64_t>& s) { return shape_to_string(to_shape(s)); }

bool is_static_shape(const Shape& s) {
  for (const Dim& d : s) {
    if (d.is_dynamic()) return false;
  }
  return true;
}

std::vector<int64_t> static_sizes(const Shape& s) {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (const Dim& d : s) out.push_back(d.value);
  return out;
}

Shape to_shape(const std::vector<int64_t>& sizes) { return Shape(sizes.begin(), sizes.end()); }

Expected<uint64_t> element_count(const std::vector<int64_t>& s) {
  uint64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) return make_error(ErrorKind::kValue, "negative dimension ", d);
    if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d)) {
      return make_error(ErrorKind::kValue, "element count of shape ", shape_to_string(s),
                        " overflows");
    }
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

Expected<uint64_t> element_count(const Shape& s) { return element_count(static_sizes(s)); }

std::string desc_to_string(const OperandDesc& d) {
  return str_cat(data_type_name(d.data_type), " ", shape_to_string(d.shape));
}

Status allocate_zeroed(AlignedBytes& buffer, uint64_t bytes, const char* what) {
  if (bytes > kMaxTensorByteLength) {
    return make_error(ErrorKind::kValue, what, ": ", bytes,
                      " bytes exceed the maximum tensor byte length ", kMaxTensorByteLength);
  }
  const size_t old_size = buffer.size();
  const size_t old_capacity = buffer.capacity();
  try {
    buffer.resize(bytes);  // no writes (CacheAlignedAllocator::construct)
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::kRuntime, what, ": out of memory allocating ", bytes, " bytes");
  } catch (const std::length_error&) {
    return make_error(ErrorKind::kRuntime, what, ": out of memory allocating ", bytes, " bytes");
  }
  // A new mapping holds the old bytes and zero pages after them; other storage is zeroed here.
  const bool fresh_mapping =
      buffer.capacity() != old_capacity && buffer.capacity() >= kMappedAllocationBytes;
  if (bytes > old_size && !fresh_mapping)
    std::memset(buffer.data() + old_size, 0, bytes - old_size);
  return Status::ok();
}

void* allocate_cache_aligned(size_t bytes) {
  if (bytes < kMappedAllocationBytes) return ::operator new (bytes, std::align_val_t{64});
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

void deallocate_cache_aligned(void* p, size_t bytes) {
  if (bytes < kMappedAllocationBytes) {
    ::operator delete (p, std::align_val_t{64});
  } else {
    munmap(p, bytes);
  }
}

std::string camel_case(std::string_view snake) {
  std::string out;
  bool upper = false;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

void pack_4bit(const uint8_t* unpacked, uint64_t count, uint8_t* packed) {
  for (uint64_t i = 0; i < (count + 1) / 2; ++i) packed[i] = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t nibble = unpacked[i] & 0x0F;
    packed[i / 2] |= (i % 2 == 0) ? nibble : static_cast<uint8_t>(nibble << 4);
  }
}

void unpack_4bit(const uint8_t* packed, uint64_t count, bool is_signed, uint8_t* unpacked) {
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t nibble = (i % 2 == 0) ? (packed[i / 2] & 0x0F) : (packed[i / 2] >> 4);
    if (is_signed && nibble >= 8) nibble = static_cast<uint8_t>(nibble | 0xF0);
    unpacked[i] = nibble;
  }
}

}  // namespace webnn
