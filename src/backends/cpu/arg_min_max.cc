// argMin / argMax (float32) along one axis, the tensor viewed as [outer, len, inner], with the
// reference's answer (reference/reduction.cc): the first NaN if there is one, else the first
// position of the extreme (-0 and +0 equal, so the first zero of either sign).
//  - inner == 1 (the last axis: a detector's scores, a CTC decoder's classes): the extreme in
//    vector lanes, then the first position holding it; a NaN found by the lanes sends the row
//    to the ordered loop.
//  - inner > 1 (a segmentation head's classes on axis 1): blocks of columns updated row by row
//    with a branch-free select of value and position, which the compiler vectorizes.
// The reference converted every element to double and compared one at a time (2.4 ns per
// element; ORT's loop over the channels of [1, 21, 512, 512] takes 60 ms).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

typedef float LaneF4 __attribute__((vector_size(16)));
typedef int32_t LaneI4 __attribute__((vector_size(16)));

// The extreme of x[0, n) (n >= 16) in 16 lanes; *nan set when some element is NaN.
template <bool kMax>
float extreme_no_nan(const float* x, int64_t n, bool* nan) {
  LaneF4 lane[4];
  LaneI4 odd[4] = {};
  for (int j = 0; j < 4; ++j) std::memcpy(&lane[j], x + 4 * j, sizeof(LaneF4));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < 4; ++j) {
      LaneF4 v;
      std::memcpy(&v, x + i + 4 * j, sizeof(LaneF4));
      odd[j] |= v != v;
      lane[j] = kMax ? (v > lane[j] ? v : lane[j]) : (v < lane[j] ? v : lane[j]);
    }
  }
  float m = lane[0][0];
  bool any = false;
  for (int j = 0; j < 16; ++j) {
    const float l = lane[j / 4][j % 4];
    any = any || odd[j / 4][j % 4] != 0;
    m = kMax ? (l > m ? l : m) : (l < m ? l : m);
  }
  for (; i < n; ++i) {
    any = any || std::isnan(x[i]);
    m = kMax ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
  }
  *nan = any;
  return m;
}

template <bool kMax>
int64_t ordered_position(const float* x, int64_t n, int64_t stride) {
  int64_t best = 0;
  float b = x[0];
  for (int64_t i = 1; i < n && !std::isnan(b); ++i) {
    const float v = x[i * stride];
    if (std::isnan(v) || (kMax ? v > b : v < b)) best = i, b = v;
  }
  return best;
}

template <bool kMax>
int64_t row_position(const float* x, int64_t n) {
  if (n < 64) return ordered_position<kMax>(x, n, 1);
  bool nan = false;
  const float m = extreme_no_nan<kMax>(x, n, &nan);
  if (nan) return ordered_position<kMax>(x, n, 1);
  int64_t i = 0;
  while (x[i] != m) ++i;  // m is one of the values: found
  return i;
}

constexpr int64_t kBlock = 256;

// Positions of the extremes of `width` columns (rows of `stride` floats, `len` of them), four
// columns a vector: random data makes a branch per element mispredict half the time.
template <bool kMax>
void column_positions(const float* x, int64_t len, int64_t stride, int64_t width, int32_t* pos) {
  LaneF4 best[kBlock / 4];
  LaneI4 at[kBlock / 4];
  const int64_t vecs = width / 4;
  for (int64_t j = 0; j < vecs; ++j) {
    std::memcpy(&best[j], x + 4 * j, sizeof(LaneF4));
    at[j] = LaneI4{};
  }
  for (int64_t r = 1; r < len; ++r) {
    const float* row = x + r * stride;
    const LaneI4 ri = LaneI4{} + static_cast<int32_t>(r);
    for (int64_t j = 0; j < vecs; ++j) {
      LaneF4 v;
      std::memcpy(&v, row + 4 * j, sizeof(LaneF4));
      const LaneF4 b = best[j];
      // b NaN: kept; v NaN (b not): taken; else strictly better
      const LaneI4 take = (kMax ? v > b : v < b) | ((v != v) & (b == b));
      best[j] = take ? v : b;
      at[j] = take ? ri : at[j];
    }
  }
  for (int64_t j = 0; j < vecs; ++j) std::memcpy(pos + 4 * j, &at[j], sizeof(LaneI4));
  for (int64_t c = 4 * vecs; c < width; ++c) pos[c] = ordered_position<kMax>(x + c, len, stride);
}

class ArgMinMaxKernel final : public Kernel {
 public:
  ArgMinMaxKernel(bool is_max, int64_t outer, int64_t len, int64_t inner)
      : is_max_(is_max), outer_(outer), len_(len), inner_(inner) {}

  Status run(KernelContext& ctx) override {
    const float* x = ctx.in(ctx.params<ArgMinMaxParams>().input).as<float>();
    TensorView& out = ctx.out();
    const bool wide = out.data_type == DataType::kInt64;
    int64_t* y64 = wide ? out.as<int64_t>() : nullptr;
    int32_t* y32 = wide ? nullptr : out.as<int32_t>();
    if (inner_ == 1) {
      parallel_chunks(
          ctx.pool(), outer_, std::max<int64_t>(1, 16384 / len_), [&](int64_t b, int64_t e) {
            for (int64_t o = b; o < e; ++o) {
              const float* row = x + o * len_;
              const int64_t p =
                  is_max_ ? row_position<true>(row, len_) : row_position<false>(row, len_);
              if (wide) {
                y64[o] = p;
              } else {
                y32[o] = static_cast<int32_t>(p);
              }
            }
          });
      return Status::ok();
    }
    const int64_t blocks = (inner_ + kBlock - 1) / kBlock;
    parallel_chunks(ctx.pool(), outer_ * blocks,
                    std::max<int64_t>(1, 16384 / (len_ * std::min(inner_, kBlock))),
                    [&](int64_t b, int64_t e) {
                      int32_t pos[kBlock];
                      for (int64_t t = b; t < e; ++t) {
                        const int64_t o = t / blocks, c0 = (t % blocks) * kBlock;
                        const int64_t width = std::min(kBlock, inner_ - c0);
                        const float* col = x + o * len_ * inner_ + c0;
                        if (is_max_) {
                          column_positions<true>(col, len_, inner_, width, pos);
                        } else {
                          column_positions<false>(col, len_, inner_, width, pos);
                        }
                        const int64_t at = o * inner_ + c0;
                        for (int64_t c = 0; c < width; ++c) {
                          if (wide) {
                            y64[at + c] = pos[c];
                          } else {
                            y32[at + c] = pos[c];
                          }
                        }
                      }
                    });
    return Status::ok();
  }

 private:
  bool is_max_;
  int64_t outer_, len_, inner_;
};

}  // namespace

std::unique_ptr<Kernel> make_arg_min_max_kernel(const Node& node, const CompileContext& cc) {
  const auto& p = node.as<ArgMinMaxParams>();
  const TensorView& x = cc.view(p.input);
  if (x.data_type != DataType::kFloat32 || x.count == 0 || x.rank() == 0) return nullptr;
  if (p.axis < 0 || p.axis >= static_cast<int64_t>(x.rank())) return nullptr;
  const int64_t len = x.shape[p.axis];
  // positions are held in int32 while a column block is searched
  if (len <= 0 || len > INT32_MAX) return nullptr;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < p.axis; ++i) outer *= x.shape[i];
  for (size_t i = p.axis + 1; i < x.rank(); ++i) inner *= x.shape[i];
  return std::make_unique<ArgMinMaxKernel>(node.kind == OpKind::kArgMax, outer, len, inner);
}

}  // namespace webnn
