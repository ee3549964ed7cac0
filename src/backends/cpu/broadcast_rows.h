// The elements of a broadcasting element-wise op as rows: output dimensions that are
// contiguous in every input are merged, so the innermost run is one loop (or SIMD call) with
// each input either contiguous (step 1) or one repeated element (step 0). Shared by the
// binary kernels and `where`.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "webnn/types.h"

namespace webnn {

template <size_t N>
class BroadcastRows {
 public:
  using Offsets = std::array<int64_t, N>;

  // False when the merged outer dimensions exceed kMaxRank.
  bool init(const std::array<const std::vector<int64_t>*, N>& inputs,
            const std::vector<int64_t>& out_shape) {
    const size_t rank = out_shape.size();
    std::array<std::vector<int64_t>, N> full;  // each input's strides in the output's index space
    for (size_t k = 0; k < N; ++k) {
      const std::vector<int64_t>& shape = *inputs[k];
      full[k].assign(rank, 0);
      int64_t stride = 1;
      for (size_t i = shape.size(); i-- > 0;) {
        full[k][i + rank - shape.size()] = shape[i] == 1 ? 0 : stride;
        stride *= shape[i];
      }
    }
    std::vector<int64_t> dims;
    std::array<std::vector<int64_t>, N> steps;
    for (size_t i = 0; i < rank; ++i) {
      if (out_shape[i] == 1) continue;
      bool merge = !dims.empty();
      for (size_t k = 0; k < N && merge; ++k) {
        merge = steps[k].back() == full[k][i] * out_shape[i];
      }
      if (merge) {  // every input continues the previous axis contiguously
        dims.back() *= out_shape[i];
        for (size_t k = 0; k < N; ++k) steps[k].back() = full[k][i];
        continue;
      }
      dims.push_back(out_shape[i]);
      for (size_t k = 0; k < N; ++k) steps[k].push_back(full[k][i]);
    }
    if (dims.empty()) {
      dims = {1};
      for (size_t k = 0; k < N; ++k) steps[k] = {0};
    }
    inner_ = dims.back();
    dims.pop_back();
    for (size_t k = 0; k < N; ++k) {
      inner_step_[k] = steps[k].back();
      steps[k].pop_back();
      outer_step_[k] = steps[k];
    }
    outer_dims_ = dims;
    rows_ = 1;
    for (int64_t d : dims) rows_ *= d;
    return outer_dims_.size() <= kMaxRank;
  }

  int64_t total() const { return rows_ * inner_; }
  int64_t inner() const { return inner_; }
  // 0 or 1: inputs are contiguous, so the innermost kept axis has stride 1 unless broadcast.
  int64_t step(size_t k) const { return inner_step_[k]; }

  // fn(offsets, position, n) for each run of output elements [position, position + n) inside
  // [begin, end); offsets[k] is input k's element at `position`.
  template <class F>
  void for_each(int64_t begin, int64_t end, F&& fn) const {
    int64_t col = begin % inner_;
    std::array<int64_t, kMaxRank> idx{};
    Offsets base{};  // row starts, by an odometer over the outer dimensions
    for (size_t d = outer_dims_.size(), r = static_cast<size_t>(begin / inner_); d-- > 0;) {
      idx[d] = static_cast<int64_t>(r) % outer_dims_[d];
      r /= outer_dims_[d];
      for (size_t k = 0; k < N; ++k) base[k] += idx[d] * outer_step_[k][d];
    }
    for (int64_t pos = begin; pos < end;) {
      const int64_t n = std::min(inner_ - col, end - pos);
      Offsets at;
      for (size_t k = 0; k < N; ++k) at[k] = base[k] + col * inner_step_[k];
      fn(at, pos, n);
      pos += n;
      col = 0;
      for (size_t d = outer_dims_.size(); d-- > 0;) {
        for (size_t k = 0; k < N; ++k) base[k] += outer_step_[k][d];
        if (++idx[d] < outer_dims_[d]) break;
        for (size_t k = 0; k < N; ++k) base[k] -= outer_step_[k][d] * outer_dims_[d];
        idx[d] = 0;
      }
    }
  }

 private:
  int64_t inner_ = 1, rows_ = 1;
  Offsets inner_step_{};
  std::array<std::vector<int64_t>, N> outer_step_;
  std::vector<int64_t> outer_dims_;
};

}  // namespace webnn
