// gather on the cpu: the same elements as the reference kernel (reference/gather.cc: negative
// indices count from the end, the rest is clamped), copied with the indices normalized once
// (at compile time when they are a constant; run-time indices of a last-axis gather in the
// gather loop itself, else once per run) and a plain element loop for the common last-axis
// gather, split over the context's pool.
#include <algorithm>
#include <cstring>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

constexpr int64_t kGrain = 16384;  // elements per task

bool read_indices(const TensorView& v, int64_t axis_size, std::vector<int64_t>* out) {
  out->resize(static_cast<size_t>(v.count));
  for (uint64_t j = 0; j < v.count; ++j) {
    int64_t i;
    switch (v.data_type) {
      case DataType::kInt32:
        i = v.as<int32_t>()[j];
        break;
      case DataType::kUint32:
        i = v.as<uint32_t>()[j];
        break;
      case DataType::kInt64:
        i = v.as<int64_t>()[j];
        break;
      default:
        return false;
    }
    if (i < 0) i += axis_size;
    (*out)[j] = std::clamp<int64_t>(i, 0, axis_size - 1);
  }
  return true;
}

// Output elements [b, e) of (outer, count) with inner == 1, a row at a time: one division
// per chunk, not two per element (they cost more than the copy: 0.3 GB/s on ORT's u8s8
// saturation gathers of [32 x 59392]). `at(index)` maps an index to its position in the row.
template <class T, class I, class At>
void walk_rows(const T* in, const I* idx, T* out, int64_t count, int64_t axis_size, int64_t b,
               int64_t e, At at) {
  int64_t row = b / count, col = b % count;
  for (int64_t k = b; k < e; ++row, col = 0) {
    const T* src = in + row * axis_size;
    const I* ix = idx + col;
    const int64_t n = std::min(e - k, count - col);
    T* dst = out + k;
    for (int64_t j = 0; j < n; ++j) dst[j] = src[at(ix[j])];
    k += n;
  }
}

// Indices already normalized (read_indices).
template <class T>
void gather_rows(const T* in, const int64_t* idx, T* out, int64_t count, int64_t axis_size,
                 int64_t b, int64_t e) {
  walk_rows(in, idx, out, count, axis_size, b, e, [](int64_t i) { return i; });
}

// The indices as given (a run-time operand of type I), each normalized as read_indices does,
// in the same loop: a separate normalizing pass over an int64 copy cost more than the gather
// itself (ORT-style QLinearAdd tables of QDQ PP-OCR cls: 44 gathers of up to 38k bytes,
// 3.5 ns per element).
template <class T, class I>
void gather_rows_raw(const T* in, const I* idx, T* out, int64_t count, int64_t axis_size, int64_t b,
                     int64_t e) {
  walk_rows(in, idx, out, count, axis_size, b, e, [axis_size](I raw) {
    int64_t i = static_cast<int64_t>(raw);
    if (i < 0) i += axis_size;
    return std::clamp<int64_t>(i, 0, axis_size - 1);
  });
}

template <class T>
bool gather_rows_by_type(const T* in, const TensorView& ind, T* out, int64_t count,
                         int64_t axis_size, int64_t b, int64_t e) {
  switch (ind.data_type) {
    case DataType::kInt32:
      gather_rows_raw(in, ind.as<int32_t>(), out, count, axis_size, b, e);
      return true;
    case DataType::kUint32:
      gather_rows_raw(in, ind.as<uint32_t>(), out, count, axis_size, b, e);
      return true;
    case DataType::kInt64:
      gather_rows_raw(in, ind.as<int64_t>(), out, count, axis_size, b, e);
      return true;
    case DataType::kUint8:  // byte-indexed tables (graph/passes/byte_index_gathers.cc)
      gather_rows_raw(in, ind.as<uint8_t>(), out, count, axis_size, b, e);
      return true;
    case DataType::kInt8:
      gather_rows_raw(in, ind.as<int8_t>(), out, count, axis_size, b, e);
      return true;
    default:
      return false;
  }
}

class GatherKernel final : public Kernel {
 public:
  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<GatherParams>();
    const TensorView& x = cc.view(p.input);
    const TensorView& ind = cc.view(p.indices);
    axis_ = p.axis;
    if (axis_ < 0 || axis_ >= static_cast<int64_t>(x.rank())) return false;
    axis_size_ = x.shape[axis_];
    if (axis_size_ <= 0) return false;  // the reference reports indexing an empty axis
    // (u)int8 indices: only graph/passes/byte_index_gathers.cc makes them (run-time bytes).
    const bool bytes = ind.data_type == DataType::kUint8 || ind.data_type == DataType::kInt8;
    if (ind.data_type != DataType::kInt32 && ind.data_type != DataType::kUint32 &&
        ind.data_type != DataType::kInt64 && !bytes) {
      return false;
    }
    if (bytes && cc.is_constant(p.indices)) return false;
    outer_ = inner_ = 1;
    for (int64_t a = 0; a < axis_; ++a) outer_ *= x.shape[a];
    for (size_t a = axis_ + 1; a < x.rank(); ++a) inner_ *= x.shape[a];
    count_ = static_cast<int64_t>(ind.count);
    element_ = element_size(x.data_type);
    if (bytes && (inner_ != 1 || element_ == 8)) return false;  // only the element loop reads them
    constant_ = cc.is_constant(p.indices);
    if (constant_ && !read_indices(ind, axis_size_, &idx_)) return false;
    if (constant_) find_runs();
    return true;
  }

  // Constant indices that mostly continue each other (a block swap i ^ j of a sorting
  // network's steps, slices written as gathers) are copied run by run: a 16k-element row in
  // runs of 64 took 5.5 us element by element.
  void find_runs() {
    std::vector<Run> runs;
    for (int64_t j = 0; j < count_; ++j) {
      if (!runs.empty() && idx_[j] == idx_[j - 1] + 1) {
        ++runs.back().length;
      } else {
        runs.push_back({j, idx_[j], 1});
      }
      if (static_cast<int64_t>(runs.size()) * kMinRun > count_) return;  // short runs
    }
    runs_ = std::move(runs);
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<GatherParams>();
    const uint8_t* in = ctx.in(p.input).data;
    uint8_t* out = ctx.out().data;
    const int64_t total = outer_ * count_;  // rows of inner elements
    if (total == 0 || inner_ == 0) return Status::ok();
    if (!constant_ && inner_ == 1 && (element_ == 4 || element_ == 2 || element_ == 1)) {
      const TensorView& ind = ctx.in(p.indices);
      parallel_chunks(ctx.pool(), total, kGrain, [&](int64_t b, int64_t e) {
        switch (element_) {
          case 4:
            gather_rows_by_type(reinterpret_cast<const uint32_t*>(in), ind,
                                reinterpret_cast<uint32_t*>(out), count_, axis_size_, b, e);
            return;
          case 2:
            gather_rows_by_type(reinterpret_cast<const uint16_t*>(in), ind,
                                reinterpret_cast<uint16_t*>(out), count_, axis_size_, b, e);
            return;
          default:
            gather_rows_by_type(in, ind, out, count_, axis_size_, b, e);
        }
      });
      return Status::ok();
    }
    if (!runs_.empty()) return copy_runs(ctx, in, out);
    if (!constant_) read_indices(ctx.in(p.indices), axis_size_, &idx_);
    const int64_t* idx = idx_.data();
    if (inner_ == 1 && (element_ == 4 || element_ == 2 || element_ == 1 || element_ == 8)) {
      parallel_chunks(ctx.pool(), total, kGrain, [&](int64_t b, int64_t e) {
        switch (element_) {
          case 4:
            return gather_rows(reinterpret_cast<const uint32_t*>(in), idx,
                               reinterpret_cast<uint32_t*>(out), count_, axis_size_, b, e);
          case 2:
            return gather_rows(reinterpret_cast<const uint16_t*>(in), idx,
                               reinterpret_cast<uint16_t*>(out), count_, axis_size_, b, e);
          case 8:
            return gather_rows(reinterpret_cast<const uint64_t*>(in), idx,
                               reinterpret_cast<uint64_t*>(out), count_, axis_size_, b, e);
          default:
            return gather_rows(in, idx, out, count_, axis_size_, b, e);
        }
      });
      return Status::ok();
    }
    const size_t row = static_cast<size_t>(inner_) * element_;
    const int64_t grain = std::max<int64_t>(1, kGrain / inner_);
    parallel_chunks(ctx.pool(), total, grain, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const int64_t src = k / count_ * axis_size_ + idx[k % count_];
        std::memcpy(out + k * row, in + src * row, row);
      }
    });
    return Status::ok();
  }

 private:
  static constexpr int64_t kMinRun = 8;  // mean run length worth a copy per run
  struct Run {
    int64_t at, from, length;  // output position, first index, elements
  };

  Status copy_runs(KernelContext& ctx, const uint8_t* in, uint8_t* out) const {
    const size_t width = static_cast<size_t>(inner_) * element_;
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, count_ * inner_));
    parallel_chunks(ctx.pool(), outer_, grain, [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        const uint8_t* src = in + static_cast<size_t>(row * axis_size_) * width;
        uint8_t* dst = out + static_cast<size_t>(row * count_) * width;
        for (const Run& r : runs_) {
          std::memcpy(dst + r.at * width, src + r.from * width, r.length * width);
        }
      }
    });
    return Status::ok();
  }

  int64_t axis_ = 0, axis_size_ = 0, outer_ = 1, inner_ = 1, count_ = 0;
  size_t element_ = 4;
  bool constant_ = false;
  std::vector<int64_t> idx_;  // normalized indices (per run when not constant)
  std::vector<Run> runs_;     // constant indices as runs of consecutive positions, or empty
};

}  // namespace

std::unique_ptr<Kernel> make_gather_kernel(const Node& node, const CompileContext& cc) {
  if (node.kind != OpKind::kGather) return nullptr;
  auto k = std::make_unique<GatherKernel>();
  if (!k->init(node, cc)) return nullptr;
  return k;
}

}  // namespace webnn
