// transpose and slice for every data type of 1, 2, 4 or 8 bytes: both are a strided gather
// "output element (i0 .. ik) = input element at base + sum i_j * stride_j". Axes that stay
// adjacent are merged first; then rows whose innermost source stride is 1 are copied with
// memcpy, and a transpose (the input's innermost axis moved outwards) goes through cache-sized
// 2-D tiles. Work is split over output rows (or tile rows), by shape only. Values are copied,
// never computed, so results are bit-identical to the reference.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

class StridedCopyKernel final : public Kernel {
 public:
  // `shape` and `stride` (in elements) describe the output axes' source walk.
  StridedCopyKernel(const SimdKernels& simd, OperandRef input, size_t element_size, int64_t base,
                    std::vector<int64_t> shape, std::vector<int64_t> stride)
      : simd_(simd), input_(input), es_(element_size), base_(base) {
    // Drop size-1 axes, then merge axes k and k + 1 when k + 1 walks on contiguously from k.
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] == 1) continue;
      if (!shape_.empty() && stride_.back() == stride[k] * shape[k]) {
        shape_.back() *= shape[k];
        stride_.back() = stride[k];
        continue;
      }
      shape_.push_back(shape[k]);
      stride_.push_back(stride[k]);
    }
    if (shape_.empty()) {
      shape_.push_back(1);
      stride_.push_back(1);
    }
    const size_t r = shape_.size();
    dst_stride_.assign(r, 1);
    for (size_t k = r - 1; k-- > 0;) dst_stride_[k] = dst_stride_[k + 1] * shape_[k + 1];
    // A transpose tile pairs the innermost output axis with the axis that reads contiguously.
    tile_axis_ = -1;
    if (stride_[r - 1] != 1) {
      for (size_t k = 0; k + 1 < r; ++k) {
        if (stride_[k] == 1) tile_axis_ = static_cast<int>(k);
      }
    }
    // float32 batches of whole matrices (output [batch, cols, rows] from input [batch, rows,
    // cols]): the SIMD transpose.
    if (es_ == 4 && tile_axis_ == static_cast<int>(r) - 2) {
      const int64_t rows = shape_[r - 1], cols = shape_[r - 2];
      matrices_ = stride_[r - 1] == cols;
      for (size_t k = 0; k + 2 < r && matrices_; ++k) {
        matrices_ = stride_[k] == dst_stride_[k] && dst_stride_[k] % (rows * cols) == 0;
      }
    }
  }

  Status run(KernelContext& ctx) override {
    const uint8_t* src = ctx.in(input_).data + base_ * static_cast<int64_t>(es_);
    uint8_t* dst = ctx.out().data;
    switch (es_) {
      case 1:
        return copy<uint8_t>(src, dst, ctx.pool());
      case 2:
        return copy<uint16_t>(src, dst, ctx.pool());
      case 4:
        return copy<uint32_t>(src, dst, ctx.pool());
      default:
        return copy<uint64_t>(src, dst, ctx.pool());
    }
  }

 private:
  static constexpr int64_t kTile = 32;

  template <class T>
  Status copy(const uint8_t* src_bytes, uint8_t* dst_bytes, ThreadPool* pool) const {
    const T* src = reinterpret_cast<const T*>(src_bytes);
    T* dst = reinterpret_cast<T*>(dst_bytes);
    const int r = static_cast<int>(shape_.size());
    const int64_t inner = shape_[r - 1];
    if (tile_axis_ < 0) {
      // Rows of the innermost axis: memcpy when contiguous, else a strided gather.
      const int64_t rows = product(0, r - 1);
      const int64_t step = stride_[r - 1];
      parallel_chunks(pool, rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          const T* s = src + source_offset(row, r - 1, -1);
          T* d = dst + row * inner;
          if (step == 1) {
            std::memcpy(d, s, static_cast<size_t>(inner) * sizeof(T));
          } else {
            for (int64_t i = 0; i < inner; ++i) d[i] = s[i * step];
          }
        }
      });
      return Status::ok();
    }
    // Tiles of (tile axis q) x (innermost axis): the source reads along q, the output along the
    // innermost axis. Tasks are (outer index over the other axes, block of q).
    if constexpr (sizeof(T) == 4) {
      if (matrices_) {
        const int64_t rows = inner, cols = shape_[r - 2], count = product(0, r - 2);
        const float* a = reinterpret_cast<const float*>(src);
        float* out = reinterpret_cast<float*>(dst);
        const int64_t grain = std::max<int64_t>(1, 4096 / cols);
        parallel_chunks(pool, count * rows, grain, [&](int64_t b, int64_t e) {
          while (b < e) {
            const int64_t m = b / rows, r0 = b % rows;
            const int64_t r1 = std::min(rows, r0 + (e - b));
            simd_.transpose(a + m * rows * cols, rows, cols, r0, r1, out + m * rows * cols);
            b += r1 - r0;
          }
        });
        return Status::ok();
      }
    }
    const int q = tile_axis_;
    const int64_t len_q = shape_[q], step = stride_[r - 1];
    const int64_t outer = product(0, r - 1) / len_q;
    const int64_t q_blocks = (len_q + kTile - 1) / kTile;
    parallel_chunks(pool, outer * q_blocks, std::max<int64_t>(1, 16384 / (inner * kTile)),
                    [&](int64_t b, int64_t e) {
                      for (int64_t t = b; t < e; ++t) {
                        const int64_t o = t / q_blocks, q0 = (t % q_blocks) * kTile;
                        const int64_t q1 = std::min(len_q, q0 + kTile);
                        int64_t so = 0, dof = 0;
                        outer_offsets(o, q, &so, &dof);
                        for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
                          const int64_t j1 = std::min(inner, j0 + kTile);
                          for (int64_t i = q0; i < q1; ++i) {
                            const T* s = src + so + i;
                            T* d = dst + dof + i * dst_stride_[q];
                            for (int64_t j = j0; j < j1; ++j) d[j] = s[j * step];
                          }
                        }
                      }
                    });
    return Status::ok();
  }

  int64_t product(int from, int to) const {
    int64_t p = 1;
    for (int k = from; k < to; ++k) p *= shape_[k];
    return p;
  }

  // Source offset of output row `row` over axes [0, axes), skipping axis `skip`.
  int64_t source_offset(int64_t row, int axes, int skip) const {
    int64_t off = 0;
    for (int k = axes - 1; k >= 0; --k) {
      if (k == skip) continue;
      off += (row % shape_[k]) * stride_[k];
      row /= shape_[k];
    }
    return off;
  }

  // Source and destination offsets of outer index o over all axes but q and the innermost.
  void outer_offsets(int64_t o, int q, int64_t* src, int64_t* dst) const {
    const int r = static_cast<int>(shape_.size());
    for (int k = r - 2; k >= 0; --k) {
      if (k == q) continue;
      const int64_t i = o % shape_[k];
      o /= shape_[k];
      *src += i * stride_[k];
      *dst += i * dst_stride_[k];
    }
  }

  const SimdKernels& simd_;
  OperandRef input_;
  size_t es_;
  int64_t base_;
  std::vector<int64_t> shape_, stride_, dst_stride_;
  int tile_axis_ = -1;
  bool matrices_ = false;
};

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * shape[k];
  return s;
}

}  // namespace

std::unique_ptr<Kernel> make_movement_kernel(const Node& node, const CompileContext& cc,
                                             const SimdKernels& simd) {
  const OperandRef input = node.kind == OpKind::kTranspose ? node.as<TransposeParams>().input
                                                           : node.as<SliceParams>().input;
  const TensorView& x = cc.view(input);
  const TensorView& y = cc.view(OperandRef{node.outputs[0]});
  if (is_4bit(x.data_type) || y.count == 0) return nullptr;
  const size_t es = static_cast<size_t>(element_size(x.data_type));
  if (es != 1 && es != 2 && es != 4 && es != 8) return nullptr;
  // Small tensors: the reference's per-element walk costs less than nothing to speak of.
  if (y.count < 256) return nullptr;
  const std::vector<int64_t> in_strides = row_major_strides(x.shape);
  const size_t rank = x.rank();
  std::vector<int64_t> stride(rank);
  int64_t base = 0;
  if (node.kind == OpKind::kTranspose) {
    const auto& p = node.as<TransposeParams>();
    for (size_t k = 0; k < rank; ++k) {
      const int64_t axis = p.permutation ? (*p.permutation)[k] : static_cast<int64_t>(rank - 1 - k);
      stride[k] = in_strides[axis];
    }
  } else {
    const auto& p = node.as<SliceParams>();
    for (size_t k = 0; k < rank; ++k) {
      const int64_t step = p.strides ? (*p.strides)[k] : 1;
      if (step < 1) return nullptr;
      stride[k] = in_strides[k] * step;
      base += p.starts[k] * in_strides[k];
    }
  }
  return std::make_unique<StridedCopyKernel>(simd, input, es, base, y.shape, stride);
}

}  // namespace webnn
