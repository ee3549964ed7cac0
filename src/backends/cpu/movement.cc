// transpose, slice, expand, tile and reverse for every data type of 1, 2, 4 or 8 bytes: each is
// a strided gather (expand's broadcast axes and tile's repetition axes have stride 0, reverse's
// reversed axes a negative stride from their last element)
// "output element (i0 .. ik) = input element at base + sum i_j * stride_j"; pad (float32)
// copies rows. Axes that stay
// adjacent are merged first; then rows whose innermost source stride is 1 are copied with
// memcpy, and a transpose (the input's innermost axis moved outwards) goes through cache-sized
// 2-D tiles. Work is split over output rows (or tile rows), by shape only. Values are copied,
// never computed, so results are bit-identical to the reference.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/transpose_batch.h"
#include "core/pad_source.h"

namespace webnn {

namespace {

class StridedCopyKernel final : public Kernel {
 public:
  // `shape` and `stride` (in elements) describe the output axes' source walk.
  StridedCopyKernel(const SimdKernels& simd, OperandRef input, size_t element_size, int64_t base,
                    std::vector<int64_t> shape, std::vector<int64_t> stride, bool may_widen = true)
      : simd_(simd), input_(input), es_(element_size), base_(base) {
    const std::vector<int64_t> given_shape = shape, given_stride = stride;
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
    // Innermost runs of a few contiguous elements ((re, im) pairs of float32, 2-byte pixels'
    // channels) move as one element of their combined size when the base and every other
    // stride are whole runs: a reversed or transposed axis of pairs then copies 8-byte
    // elements in one loop instead of a memcpy call per pair. The narrow walk stays for
    // buffers that are not aligned to the wide element.
    if (may_widen && shape_.size() >= 2 && stride_.back() == 1) {
      const int64_t run = shape_.back();
      const int64_t bytes = run * static_cast<int64_t>(es_);
      bool whole = (bytes == 2 || bytes == 4 || bytes == 8) && base_ % run == 0;
      for (size_t k = 0; k + 1 < shape_.size() && whole; ++k) whole = stride_[k] % run == 0;
      if (whole) {
        narrow_ = std::make_unique<StridedCopyKernel>(simd, input, es_, base_, given_shape,
                                                      given_stride, false);
        es_ = static_cast<size_t>(bytes);
        base_ /= run;
        shape_.pop_back();
        stride_.pop_back();
        for (int64_t& st : stride_) st /= run;
      }
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
    // (r >= 2: for one axis, tile_axis_ -1 equals r - 2 and shape_[r - 2] is out of bounds; a
    // strided 1-D slice got there, found by the builder fuzz target.)
    if (es_ == 4 && r >= 2 && tile_axis_ == static_cast<int>(r) - 2) {
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
    if (narrow_ && ((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) % es_)) {
      return narrow_->run(ctx);
    }
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
          } else if (step == -1) {
            for (int64_t i = 0; i < inner; ++i) d[i] = s[-i];  // (vectorised with a permute)
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
        transpose_batch(simd_, a, count, rows, cols, out, pool);
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
  std::unique_ptr<StridedCopyKernel> narrow_;  // the walk in the given elements, when widened
};

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * shape[k];
  return s;
}

// pad (float32, every mode): output rows along the innermost axis. A row whose outer indices
// fall into constant padding is the fill value; otherwise its source row's middle is copied
// with memcpy and the padded ends read the source positions that the mode picks (the same
// per-axis rule as the reference's pad_source).
class PadKernel final : public Kernel {
 public:
  PadKernel(OperandRef input, const std::vector<int64_t>& in_shape,
            const std::vector<int64_t>& out_shape, const IntList& begin, const std::string& mode,
            float value)
      : input_(input), value_(value) {
    const size_t r = in_shape.size();
    in_strides_ = row_major_strides(in_shape);
    out_shape_ = out_shape;
    maps_.resize(r);
    for (size_t k = 0; k < r; ++k) {
      maps_[k].resize(out_shape[k]);
      for (int64_t o = 0; o < out_shape[k]; ++o) {
        maps_[k][o] = pad_source(o - begin[k], in_shape[k], mode);
      }
    }
    begin_last_ = begin[r - 1];
    in_last_ = in_shape[r - 1];
  }

  Status run(KernelContext& ctx) override {
    const float* x = ctx.in(input_).as<float>();
    float* y = ctx.out().as<float>();
    const size_t r = out_shape_.size();
    const int64_t width = out_shape_[r - 1];
    int64_t rows = 1;
    for (size_t k = 0; k + 1 < r; ++k) rows *= out_shape_[k];
    const std::vector<int64_t>& last = maps_[r - 1];
    parallel_chunks(
        ctx.pool(), rows, std::max<int64_t>(1, 16384 / width), [&](int64_t b, int64_t e) {
          // The row's index along each outer axis, by divisions once per chunk and then as an
          // odometer: divisions per row cost more than the copy of short rows (a zero-stuffing
          // pad of [1, 64, 100, 16, 1] to [..., 2]: 3.8 ns an element).
          std::vector<int64_t> idx(r - 1, 0);
          for (int64_t k = static_cast<int64_t>(r) - 2, rest = b; k >= 0; --k) {
            idx[k] = rest % out_shape_[k];
            rest /= out_shape_[k];
          }
          for (int64_t row = b; row < e; ++row) {
            float* d = y + row * width;
            int64_t src = 0;
            bool fill = false;
            for (size_t k = 0; k + 1 < r; ++k) {
              const int64_t i = maps_[k][idx[k]];
              if (i < 0) fill = true;
              src += i * in_strides_[k];
            }
            for (size_t k = r - 1; k-- > 0;) {
              if (++idx[k] < out_shape_[k]) break;
              idx[k] = 0;
            }
            if (fill) {
              std::fill(d, d + width, value_);
              continue;
            }
            const float* s = x + src;
            for (int64_t o = 0; o < begin_last_; ++o) d[o] = last[o] < 0 ? value_ : s[last[o]];
            if (in_last_ <= 8) {
              for (int64_t o = 0; o < in_last_; ++o) d[begin_last_ + o] = s[o];
            } else {
              std::memcpy(d + begin_last_, s, static_cast<size_t>(in_last_) * sizeof(float));
            }
            for (int64_t o = begin_last_ + in_last_; o < width; ++o) {
              d[o] = last[o] < 0 ? value_ : s[last[o]];
            }
          }
        });
    return Status::ok();
  }

 private:
  OperandRef input_;
  float value_;
  std::vector<int64_t> in_strides_, out_shape_;
  std::vector<std::vector<int64_t>> maps_;
  int64_t begin_last_ = 0, in_last_ = 0;
};

// concat (every element size): per outer index, one slab per input. Slabs are cut into
// pieces of at most 64 KB (fixed at compile time from the shapes), and pieces are copied in
// parallel.
class ConcatKernel final : public Kernel {
 public:
  struct Piece {
    int32_t input;
    int64_t src, dst, bytes;
  };
  ConcatKernel(std::vector<OperandRef> inputs, std::vector<Piece> pieces)
      : inputs_(std::move(inputs)), pieces_(std::move(pieces)) {}

  Status run(KernelContext& ctx) override {
    const size_t n = inputs_.size();
    if (src_.size() < n) src_.resize(n);
    for (size_t i = 0; i < n; ++i) src_[i] = ctx.in(inputs_[i]).data;
    uint8_t* dst = ctx.out().data;
    parallel_chunks(ctx.pool(), static_cast<int64_t>(pieces_.size()), 1, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const Piece& q = pieces_[k];
        std::memcpy(dst + q.dst, src_[q.input] + q.src, static_cast<size_t>(q.bytes));
      }
    });
    return Status::ok();
  }

 private:
  std::vector<OperandRef> inputs_;
  std::vector<Piece> pieces_;
  std::vector<const uint8_t*> src_;
};

// concat of many short slabs (e.g. NHWC channel concat: one slab per pixel and input): tasks
// are ranges of outer indices, each copying its slabs input after input.
class ConcatRowsKernel final : public Kernel {
 public:
  ConcatRowsKernel(std::vector<OperandRef> inputs, std::vector<int64_t> row_bytes, int64_t outer)
      : inputs_(std::move(inputs)), row_(std::move(row_bytes)), outer_(outer) {
    for (int64_t r : row_) out_row_ += r;
  }

  Status run(KernelContext& ctx) override {
    const size_t n = inputs_.size();
    if (src_.size() < n) src_.resize(n);
    for (size_t i = 0; i < n; ++i) src_[i] = ctx.in(inputs_[i]).data;
    uint8_t* dst = ctx.out().data;
    // At least ~64 KB of output per task.
    const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(out_row_, 1));
    parallel_chunks(ctx.pool(), outer_, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        uint8_t* d = dst + o * out_row_;
        for (size_t i = 0; i < n; ++i) {
          std::memcpy(d, src_[i] + o * row_[i], static_cast<size_t>(row_[i]));
          d += row_[i];
        }
      }
    });
    return Status::ok();
  }

 private:
  std::vector<OperandRef> inputs_;
  std::vector<int64_t> row_;
  int64_t outer_, out_row_ = 0;
  std::vector<const uint8_t*> src_;
};

}  // namespace

// Defined in src/ops/movement.cc: the one place pad's compat list forms are resolved.
bool normalize_pad_lists(const PadParams& p, size_t rank, IntList& begin, IntList& end);

std::unique_ptr<Kernel> make_movement_kernel(const Node& node, const CompileContext& cc,
                                             const SimdKernels& simd) {
  if (node.kind == OpKind::kPad) {
    const auto& p = node.as<PadParams>();
    const TensorView& x = cc.view(p.input);
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    if (x.data_type != DataType::kFloat32 || x.rank() == 0 || x.count == 0 || y.count < 256) {
      return nullptr;
    }
    if (p.mode != "constant" && p.mode != "edge" && p.mode != "reflection" &&
        p.mode != "symmetric") {
      return nullptr;
    }
    IntList begin, end;
    if (!normalize_pad_lists(p, x.rank(), begin, end)) return nullptr;
    float value;
    if (p.value.kind == Scalar::Kind::kInt) {
      value = static_cast<float>(p.value.i);
    } else if (p.value.kind == Scalar::Kind::kUint) {
      value = static_cast<float>(p.value.u);
    } else {
      value = static_cast<float>(p.value.f);
    }
    return std::make_unique<PadKernel>(p.input, x.shape, y.shape, begin, p.mode, value);
  }
  if (node.kind == OpKind::kConcat) {
    const auto& p = node.as<ConcatParams>();
    const TensorView& y = cc.view(OperandRef{node.outputs[0]});
    if (is_4bit(y.data_type) || y.rank() == 0 || y.count * element_size(y.data_type) < 65536) {
      return nullptr;
    }
    const int64_t es = element_size(y.data_type);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < p.axis; ++i) outer *= y.shape[i];
    for (size_t i = p.axis + 1; i < y.rank(); ++i) inner *= y.shape[i];
    std::vector<OperandRef> inputs(p.inputs.begin(), p.inputs.end());
    // Past ~4K slabs a per-piece table would cost more than it saves: copy by outer index.
    if (outer * static_cast<int64_t>(p.inputs.size()) > 4096) {
      std::vector<int64_t> rows;
      for (const OperandRef& in : p.inputs) rows.push_back(cc.view(in).shape[p.axis] * inner * es);
      return std::make_unique<ConcatRowsKernel>(std::move(inputs), std::move(rows), outer);
    }
    constexpr int64_t kPiece = 64 * 1024;
    std::vector<ConcatKernel::Piece> pieces;
    const int64_t out_row = y.shape[p.axis] * inner * es;
    for (int64_t o = 0; o < outer; ++o) {
      int64_t offset = 0;
      for (size_t i = 0; i < p.inputs.size(); ++i) {
        const int64_t row = cc.view(p.inputs[i]).shape[p.axis] * inner * es;
        for (int64_t b = 0; b < row; b += kPiece) {
          pieces.push_back({static_cast<int32_t>(i), o * row + b, o * out_row + offset + b,
                            std::min(kPiece, row - b)});
        }
        offset += row;
      }
    }
    return std::make_unique<ConcatKernel>(std::move(inputs), std::move(pieces));
  }
  OperandRef input;
  if (node.kind == OpKind::kTranspose) {
    input = node.as<TransposeParams>().input;
  } else if (node.kind == OpKind::kSlice) {
    input = node.as<SliceParams>().input;
  } else if (node.kind == OpKind::kTile) {
    input = node.as<TileParams>().input;
  } else if (node.kind == OpKind::kReverse) {
    input = node.as<AxesParams>().input;
  } else {
    input = node.as<NewShapeParams>().input;  // expand
  }
  const TensorView& x = cc.view(input);
  const TensorView& y = cc.view(OperandRef{node.outputs[0]});
  if (is_4bit(x.data_type) || y.count == 0) return nullptr;
  const size_t es = static_cast<size_t>(element_size(x.data_type));
  if (es != 1 && es != 2 && es != 4 && es != 8) return nullptr;
  // Small tensors stay on the reference kernel: there is nothing to gain.
  if (y.count < 256) return nullptr;
  const std::vector<int64_t> in_strides = row_major_strides(x.shape);
  const size_t rank = y.rank();  // expand may add leading axes
  std::vector<int64_t> stride(rank);
  int64_t base = 0;
  if (node.kind == OpKind::kTile) {
    // Output axis k of size reps * d is the pair (repetition, index) of a 2r-axis walk whose
    // repetition axes have stride 0.
    const auto& p = node.as<TileParams>();
    if (p.repetitions.size() != x.rank()) return nullptr;
    std::vector<int64_t> shape2, stride2;
    for (size_t k = 0; k < x.rank(); ++k) {
      shape2.push_back(p.repetitions[k]);
      stride2.push_back(0);
      shape2.push_back(x.shape[k]);
      stride2.push_back(in_strides[k]);
    }
    return std::make_unique<StridedCopyKernel>(simd, input, es, 0, shape2, stride2);
  }
  if (node.kind == OpKind::kExpand) {
    // Right-aligned broadcast: missing and size-1 input axes read with stride 0.
    const size_t offset = rank - x.rank();
    for (size_t k = 0; k < rank; ++k) {
      stride[k] = k < offset || x.shape[k - offset] == 1 ? 0 : in_strides[k - offset];
    }
  } else if (node.kind == OpKind::kTranspose) {
    const auto& p = node.as<TransposeParams>();
    for (size_t k = 0; k < rank; ++k) {
      const int64_t axis = p.permutation ? (*p.permutation)[k] : static_cast<int64_t>(rank - 1 - k);
      stride[k] = in_strides[axis];
    }
  } else if (node.kind == OpKind::kReverse) {
    // No axes: every axis; a reversed axis reads from its last element backwards.
    const auto& p = node.as<AxesParams>();
    std::vector<bool> flip(rank, !p.axes.has_value());
    if (p.axes) {
      for (int64_t a : *p.axes) {
        if (a < 0 || a >= static_cast<int64_t>(rank)) return nullptr;
        flip[a] = true;
      }
    }
    for (size_t k = 0; k < rank; ++k) {
      stride[k] = flip[k] ? -in_strides[k] : in_strides[k];
      if (flip[k]) base += (x.shape[k] - 1) * in_strides[k];
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
