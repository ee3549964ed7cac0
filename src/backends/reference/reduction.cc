// Reference kernels for the reduction family: reduce*, argMin/argMax, cumulativeSum
// (spec/ops.md 3.5).
#include <algorithm>
#include <limits>

#include "backends/reference/kernels.h"

namespace webnn {

namespace {

template <class T>
using Unsigned = std::make_unsigned_t<T>;

// The accumulator of a running sum: double for floats, the wrapping unsigned type otherwise.
template <class T, class = void>
struct SumAcc {
  using type = double;
};
template <class T>
struct SumAcc<T, std::enable_if_t<std::is_integral_v<T>>> {
  using type = Unsigned<T>;
};

// Input offsets of the elements that fold into one output element, relative to the first.
struct ReduceLayout {
  std::vector<int64_t> kept_shape;       // input shape with the reduced axes set to 1
  std::vector<int64_t> strides;          // row-major strides of the input
  std::vector<int64_t> reduced_offsets;  // one per element of the reduced sub-tensor
};

ReduceLayout make_layout(const TensorView& x, const OptIntList& axes) {
  ReduceLayout l;
  l.strides = strides_of(x.shape);
  std::vector<bool> reduced(x.rank(), !axes.has_value());
  if (axes) {
    for (int64_t a : *axes) reduced[a] = true;
  }
  std::vector<int64_t> reduced_shape(x.rank(), 1);
  l.kept_shape = x.shape;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (reduced[i]) {
      reduced_shape[i] = x.shape[i];
      l.kept_shape[i] = 1;
    }
  }
  for_each_index(reduced_shape, [&](int64_t, const std::vector<int64_t>& idx) {
    l.reduced_offsets.push_back(dot_index(idx, l.strides));
  });
  return l;
}

// Calls out[i] = fold(values of output element i) for every output element. The output is
// in the row-major order of kept_shape, which is also the order with the reduced axes dropped.
template <class T, class Acc, class Fold>
void reduce_each(const TensorView& x, const OptIntList& axes, TensorView& out, Fold&& fold) {
  ReduceLayout l = make_layout(x, axes);
  const T* in = x.as<T>();
  T* o = out.as<T>();
  std::vector<Acc> values(l.reduced_offsets.size());
  for_each_index(l.kept_shape, [&](int64_t flat, const std::vector<int64_t>& idx) {
    const T* base = in + dot_index(idx, l.strides);
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<Acc>(base[l.reduced_offsets[i]]);
    o[flat] = fold(values);
  });
}

bool any_nan(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

double sum_of_squares(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return s;
}

// A dynamic dimension bound to 0 at dispatch can leave nothing to reduce: the result is then
// the operation's identity (max of nothing = -inf, mean of nothing = NaN).
double float_reduce(OpKind k, const std::vector<double>& v) {
  if (v.empty()) {
    switch (k) {
      case OpKind::kReduceMean:
        return NAN;
      case OpKind::kReduceLogSum:
      case OpKind::kReduceLogSumExp:
      case OpKind::kReduceMax:
        return -INFINITY;
      case OpKind::kReduceMin:
        return INFINITY;
      case OpKind::kReduceProduct:
        return 1;
      default:
        return 0;
    }
  }
  switch (k) {
    case OpKind::kReduceSum:
      return sum_of(v);
    case OpKind::kReduceL1: {
      double s = 0;
      for (double x : v) s += std::fabs(x);
      return s;
    }
    case OpKind::kReduceSumSquare:
      return sum_of_squares(v);
    case OpKind::kReduceL2:
      return std::sqrt(sum_of_squares(v));
    case OpKind::kReduceMean:
      return sum_of(v) / static_cast<double>(v.size());
    case OpKind::kReduceLogSum:
      return std::log(sum_of(v));
    case OpKind::kReduceLogSumExp: {
      if (any_nan(v)) return NAN;
      // Shift by the maximum so exp() cannot overflow; an infinite maximum is the result
      // itself (and avoids inf - inf).
      double m = *std::max_element(v.begin(), v.end());
      if (std::isinf(m)) return m;
      double s = 0;
      for (double x : v) s += std::exp(x - m);
      return m + std::log(s);
    }
    case OpKind::kReduceProduct: {
      double p = 1;
      for (double x : v) p *= x;
      return p;
    }
    case OpKind::kReduceMax:
      return any_nan(v) ? NAN : *std::max_element(v.begin(), v.end());
    case OpKind::kReduceMin:
      return any_nan(v) ? NAN : *std::min_element(v.begin(), v.end());
    default:
      return 0;
  }
}

// Integer reductions are exact modulo 2^bits: accumulate in the unsigned type so overflow
// wraps instead of being undefined.
template <class T>
T int_reduce(OpKind k, const std::vector<T>& v) {
  using U = Unsigned<T>;
  U acc = k == OpKind::kReduceProduct ? U(1) : U(0);
  switch (k) {
    case OpKind::kReduceSum:
      for (T x : v) acc = static_cast<U>(acc + static_cast<U>(x));
      return static_cast<T>(acc);
    case OpKind::kReduceL1:
      for (T x : v) {
        U ux = static_cast<U>(x);
        acc = static_cast<U>(acc + (x < 0 ? static_cast<U>(U(0) - ux) : ux));
      }
      return static_cast<T>(acc);
    case OpKind::kReduceSumSquare:
      for (T x : v)
        acc = static_cast<U>(acc + static_cast<U>(static_cast<U>(x) * static_cast<U>(x)));
      return static_cast<T>(acc);
    case OpKind::kReduceProduct:
      for (T x : v) acc = static_cast<U>(acc * static_cast<U>(x));
      return static_cast<T>(acc);
    case OpKind::kReduceMax:
      return v.empty() ? std::numeric_limits<T>::lowest() : *std::max_element(v.begin(), v.end());
    case OpKind::kReduceMin:
      return v.empty() ? std::numeric_limits<T>::max() : *std::min_element(v.begin(), v.end());
    default:
      return 0;
  }
}

Status run_reduce(KernelContext& ctx) {
  const auto& p = ctx.params<ReduceParams>();
  const TensorView& x = ctx.in(p.input);
  OpKind k = ctx.node().kind;
  dispatch_type(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>) {
      reduce_each<T, double>(x, p.axes, ctx.out(), [k](const std::vector<double>& v) {
        return static_cast<T>(float_reduce(k, v));
      });
    } else {
      reduce_each<T, T>(x, p.axes, ctx.out(),
                        [k](const std::vector<T>& v) { return int_reduce<T>(k, v); });
    }
  });
  return Status::ok();
}

// The sizes before, along and after `axis`.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisSplit split_at(const std::vector<int64_t>& shape, int64_t axis) {
  AxisSplit s;
  for (int64_t i = 0; i < axis; ++i) s.outer *= shape[i];
  s.len = shape[axis];
  for (size_t i = axis + 1; i < shape.size(); ++i) s.inner *= shape[i];
  return s;
}

// True when `candidate` should replace `best`. Ties keep the first index; NaN wins over any
// number and the first NaN is kept (NumPy's argmin/argmax convention).
template <class T>
bool better(T candidate, T best, bool is_max) {
  if constexpr (kIsFloat<T>) {
    double c = to_double(candidate), b = to_double(best);
    if (std::isnan(b)) return false;
    if (std::isnan(c)) return true;
    return is_max ? c > b : c < b;
  } else {
    return is_max ? candidate > best : candidate < best;
  }
}

Status run_arg_min_max(KernelContext& ctx) {
  const auto& p = ctx.params<ArgMinMaxParams>();
  const TensorView& x = ctx.in(p.input);
  TensorView& out = ctx.out();
  const bool is_max = ctx.node().kind == OpKind::kArgMax;
  const AxisSplit s = split_at(x.shape, p.axis);
  if (s.len == 0 && out.count > 0) {
    return ctx.error("axis ", p.axis, " has size 0: there is no index to return");
  }
  dispatch_type(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<T>();
    for (int64_t a = 0; a < s.outer; ++a) {
      for (int64_t c = 0; c < s.inner; ++c) {
        const T* base = in + a * s.len * s.inner + c;
        int64_t best = 0;
        for (int64_t i = 1; i < s.len; ++i) {
          if (better(base[i * s.inner], base[best * s.inner], is_max)) best = i;
        }
        int64_t o = a * s.inner + c;
        if (out.data_type == DataType::kInt64) {
          out.as<int64_t>()[o] = best;
        } else {
          out.as<int32_t>()[o] = static_cast<int32_t>(best);
        }
      }
    }
  });
  return Status::ok();
}

Status run_cumulative_sum(KernelContext& ctx) {
  const auto& p = ctx.params<CumulativeSumParams>();
  const TensorView& x = ctx.in(p.input);
  const AxisSplit s = split_at(x.shape, p.axis);
  dispatch_type(x.data_type, [&](auto tag) {
    using T = decltype(tag);
    // Floats accumulate in double and round each output once; integers wrap.
    using Acc = typename SumAcc<T>::type;
    const T* in = x.as<T>();
    T* o = ctx.out().as<T>();
    for (int64_t a = 0; a < s.outer; ++a) {
      for (int64_t c = 0; c < s.inner; ++c) {
        int64_t base = a * s.len * s.inner + c;
        Acc acc = 0;
        for (int64_t step = 0; step < s.len; ++step) {
          int64_t i = p.reversed ? s.len - 1 - step : step;
          int64_t off = base + i * s.inner;
          Acc v = static_cast<Acc>(in[off]);
          if (!p.exclusive) acc = static_cast<Acc>(acc + v);
          o[off] = static_cast<T>(acc);
          if (p.exclusive) acc = static_cast<Acc>(acc + v);
        }
      }
    }
  });
  return Status::ok();
}

}  // namespace

void register_reference_reduction(KernelTable& t) {
  auto set = [&](OpKind k, KernelFn fn) { t[static_cast<int>(k)] = fn; };
  for (OpKind k : ops_in_family(OpFamily::kReduction)) set(k, run_reduce);
  for (OpKind k : ops_in_family(OpFamily::kArgMinMax)) set(k, run_arg_min_max);
  set(OpKind::kCumulativeSum, run_cumulative_sum);
}

}  // namespace webnn
