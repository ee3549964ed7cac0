// reduceSum / Mean / SumSquare / L1 / L2 / Max / Min (float32) over one contiguous block of
// axes, the tensor viewed as [outer, len, inner]: inner == 1 reduces rows (vector sums in
// double, normalization.inc), otherwise rows of `inner` values are accumulated element-wise
// (max / min: vectors of columns held in registers down the rows, elementwise.inc).
// Sums run in double and round once, like the reference (only the order of the double
// additions differs); max and min are exact. Other axis sets run on the reference kernel.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

constexpr int kLanesX = 16;

// The extreme of x[0, n) over kLanesX independent lanes, four vectors of four (GCC / Clang
// vector extensions: the scalar form of these lanes was not vectorized, 1.3 ns per element,
// a quarter of that now). It is the ordered loop's answer unless some value is NaN or
// infinite (v - v is then NaN in a check lane) or the extreme is a zero (the first of -0 / +0
// in order is wanted): *ok false then, and the caller takes the ordered loop.
typedef float LaneF4 __attribute__((vector_size(16)));

template <bool kMax>
float extreme_lanes(const float* x, int64_t n, bool* ok) {
  constexpr int kVecs = kLanesX / 4;
  LaneF4 lane[kVecs], check[kVecs];
  for (int j = 0; j < kVecs; ++j) {
    std::memcpy(&lane[j], x + 4 * j, sizeof(LaneF4));
    check[j] = lane[j] - lane[j];
  }
  int64_t i = kLanesX;
  for (; i + kLanesX <= n; i += kLanesX) {
    for (int j = 0; j < kVecs; ++j) {
      LaneF4 v;
      std::memcpy(&v, x + i + 4 * j, sizeof(LaneF4));
      check[j] += v - v;
      lane[j] = kMax ? (v > lane[j] ? v : lane[j]) : (v < lane[j] ? v : lane[j]);
    }
  }
  float m = lane[0][0], c = 0.0f;
  for (int j = 0; j < kLanesX; ++j) {
    const float l = lane[j / 4][j % 4];
    c += check[j / 4][j % 4];
    m = kMax ? (l > m ? l : m) : (l < m ? l : m);
  }
  for (; i < n; ++i) {
    c += x[i] - x[i];
    m = kMax ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
  }
  *ok = c == 0.0f && m != 0.0f;
  return m;
}

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(const SimdKernels& simd, OpKind kind, int64_t outer, int64_t len, int64_t inner)
      : simd_(simd), kind_(kind), outer_(outer), len_(len), inner_(inner) {
    zeros_.assign(static_cast<size_t>(std::min<int64_t>(inner, kBlock)), 0.0);
  }

  Status run(KernelContext& ctx) override {
    const float* x = ctx.in(ctx.params<ReduceParams>().input).as<float>();
    float* y = ctx.out().as<float>();
    if (inner_ == 1 && len_ == 2 && !is_extremum() && kind_ != OpKind::kReduceL1) {
      // Pairs (complex values' re, im): one loop over the outputs that the compiler vectorizes.
      const bool squares = kind_ == OpKind::kReduceSumSquare || kind_ == OpKind::kReduceL2;
      parallel_chunks(ctx.pool(), outer_, 8192, [&](int64_t b, int64_t e) {
        if (squares) {
          for (int64_t o = b; o < e; ++o) {
            const double re = x[2 * o], im = x[2 * o + 1];
            y[o] = finish(re * re + im * im);
          }
        } else {
          for (int64_t o = b; o < e; ++o) {
            // From +0 as the reference's loop: -0 + -0 sums to +0 there.
            y[o] =
                finish((0.0 + static_cast<double>(x[2 * o])) + static_cast<double>(x[2 * o + 1]));
          }
        }
      });
      return Status::ok();
    }
    if (inner_ == 1) {
      parallel_chunks(ctx.pool(), outer_, std::max<int64_t>(1, 16384 / len_),
                      [&](int64_t b, int64_t e) {
                        for (int64_t o = b; o < e; ++o) y[o] = reduce_row(x + o * len_);
                      });
      return Status::ok();
    }
    const int64_t blocks = (inner_ + kBlock - 1) / kBlock;
    parallel_chunks(ctx.pool(), outer_ * blocks,
                    std::max<int64_t>(1, 16384 / (len_ * std::min(inner_, kBlock))),
                    [&](int64_t b, int64_t e) {
                      for (int64_t t = b; t < e; ++t) {
                        const int64_t o = t / blocks, c0 = (t % blocks) * kBlock;
                        reduce_columns(x + o * len_ * inner_ + c0, std::min(kBlock, inner_ - c0),
                                       y + o * inner_ + c0);
                      }
                    });
    return Status::ok();
  }

 private:
  static constexpr int64_t kBlock = 256;
  static constexpr int64_t kShortRow = 8;

  bool is_extremum() const { return kind_ == OpKind::kReduceMax || kind_ == OpKind::kReduceMin; }

  float finish(double s) const {
    switch (kind_) {
      case OpKind::kReduceMean:
        return static_cast<float>(s / static_cast<double>(len_));
      case OpKind::kReduceL2:
        return static_cast<float>(std::sqrt(s));
      default:
        return static_cast<float>(s);
    }
  }

  float reduce_row(const float* x) const {
    // Short rows (a power spectrum's re^2 + im^2 over an axis of 2, a spectrogram's 3 colour
    // planes) are summed inline: the vector row functions' call and set-up cost more than the
    // row itself. The same double additions in order.
    const bool short_row = len_ <= kShortRow;
    switch (kind_) {
      case OpKind::kReduceSum:
      case OpKind::kReduceMean:
        if (short_row) {
          double s = 0;
          for (int64_t i = 0; i < len_; ++i) s += static_cast<double>(x[i]);
          return finish(s);
        }
        return finish(simd_.sum_row_d(x, len_));
      case OpKind::kReduceSumSquare:
      case OpKind::kReduceL2:
        if (short_row) {
          double s = 0;
          for (int64_t i = 0; i < len_; ++i) {
            const double v = x[i];
            s += v * v;
          }
          return finish(s);
        }
        return finish(simd_.sum_sq_dev_d(x, len_, 0.0));
      case OpKind::kReduceL1: {
        double s = 0;
        for (int64_t i = 0; i < len_; ++i) s += std::fabs(static_cast<double>(x[i]));
        return static_cast<float>(s);
      }
      default: {  // max / min: NaN if any is NaN, else the first extreme value (as
                  // std::max_element / min_element in the reference: -0 vs +0 matters)
        const bool max = kind_ == OpKind::kReduceMax;
        if (len_ >= 4 * kLanesX) {
          bool ok = false;
          const float m =
              max ? extreme_lanes<true>(x, len_, &ok) : extreme_lanes<false>(x, len_, &ok);
          if (ok) return m;
        }
        float m = x[0];
        for (int64_t i = 1; i < len_ && !std::isnan(m); ++i) {
          const float v = x[i];
          if (std::isnan(v) || (max ? v > m : v < m)) m = v;
        }
        return m;
      }
    }
  }

  // y[c] for the `width` columns at x (rows of inner_ floats, len_ of them).
  void reduce_columns(const float* x, int64_t width, float* y) const {
    if (is_extremum()) {
      // Vectors of columns, each lane the ordered loop's compare and select (exact).
      simd_.extreme_cols(x, len_, inner_, width, kind_ == OpKind::kReduceMax, y);
      return;
    }
    double acc[kBlock] = {};
    const bool squares = kind_ == OpKind::kReduceSumSquare || kind_ == OpKind::kReduceL2;
    for (int64_t r = 0; r < len_; ++r) {
      const float* row = x + r * inner_;
      if (kind_ == OpKind::kReduceL1) {
        for (int64_t c = 0; c < width; ++c) acc[c] += std::fabs(static_cast<double>(row[c]));
      } else {
        simd_.acc_row_d(row, width, squares ? zeros_.data() : nullptr, acc);
      }
    }
    for (int64_t c = 0; c < width; ++c) y[c] = finish(acc[c]);
  }

  const SimdKernels& simd_;
  OpKind kind_;
  int64_t outer_, len_, inner_;
  std::vector<double> zeros_;
};

}  // namespace

std::unique_ptr<Kernel> make_reduce_kernel(const Node& node, const CompileContext& cc,
                                           const SimdKernels& simd) {
  switch (node.kind) {
    case OpKind::kReduceSum:
    case OpKind::kReduceMean:
    case OpKind::kReduceSumSquare:
    case OpKind::kReduceL1:
    case OpKind::kReduceL2:
    case OpKind::kReduceMax:
    case OpKind::kReduceMin:
      break;
    default:
      return nullptr;
  }
  const auto& p = node.as<ReduceParams>();
  const TensorView& x = cc.view(p.input);
  if (x.data_type != DataType::kFloat32 || x.count == 0 || x.rank() == 0) return nullptr;
  std::vector<bool> reduced(x.rank(), !p.axes.has_value());
  if (p.axes) {
    if (p.axes->empty()) return nullptr;
    for (int64_t a : *p.axes) reduced[a] = true;
  }
  // The reduced axes must be one run [first, last] (size-1 axes may sit anywhere).
  int first = -1, last = -1;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!reduced[i] || x.shape[i] == 1) continue;
    if (first < 0) first = static_cast<int>(i);
    last = static_cast<int>(i);
  }
  if (first < 0) return nullptr;  // only size-1 axes reduced: a copy, left to the reference
  for (int i = first; i <= last; ++i) {
    if (!reduced[i] && x.shape[i] != 1) return nullptr;
  }
  int64_t outer = 1, len = 1, inner = 1;
  for (int i = 0; i < first; ++i) outer *= x.shape[i];
  for (int i = first; i <= last; ++i) len *= x.shape[i];
  for (size_t i = last + 1; i < x.rank(); ++i) inner *= x.shape[i];
  return std::make_unique<ReduceKernel>(simd, node.kind, outer, len, inner);
}

}  // namespace webnn
