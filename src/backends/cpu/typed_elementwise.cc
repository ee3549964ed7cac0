// The element-wise ops the float32 SIMD kernels leave to the reference: comparisons and
// logical ops (uint8 results) of every type, integer (and float16) arithmetic, logicalNot,
// isNaN / isInfinite, and cast. Each element is computed by the reference's own scalar
// function (ops/scalar_ops.h), so results are bit-identical to it; what changes is the
// walk: broadcast rows (broadcast_rows.h) instead of an index vector per element, split over
// the pool, with the op fixed at compile time instead of switched per element. Casts between
// float32 and the 8/32/64-bit integer types and among those, and float32 comparisons, run on
// the SIMD kernels instead (cast.inc, predicate.inc), which give the same bits.
#include <cstdint>

#include "backends/cpu/broadcast_rows.h"
#include "backends/cpu/cpu_kernels.h"
#include "ops/scalar_ops.h"

namespace webnn {

namespace {

constexpr int64_t kGrain = 16384;  // elements per task

template <class T, class Out, class F>
class TypedBinaryKernel final : public Kernel {
 public:
  explicit TypedBinaryKernel(const BroadcastRows<2>& rows) : rows_(rows) {}

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<BinaryParams>();
    const T* a = ctx.in(p.a).as<T>();
    const T* b = ctx.in(p.b).as<T>();
    Out* out = ctx.out().as<Out>();
    const int64_t sa = rows_.step(0), sb = rows_.step(1);
    const F f;
    parallel_chunks(ctx.pool(), rows_.total(), kGrain, [&](int64_t begin, int64_t end) {
      rows_.for_each(begin, end, [&](const BroadcastRows<2>::Offsets& at, int64_t pos, int64_t n) {
        const T* x = a + at[0];
        const T* y = b + at[1];
        Out* o = out + pos;
        // The common strides as constants, so the compiler vectorizes the loop (a one-hot
        // `equal` of a column against a row ran at 1.3 ns per element with runtime strides).
        if (sa == 1 && sb == 1) {
          for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
        } else if (sa == 0 && sb == 1) {
          const T xv = x[0];
          for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
        } else if (sa == 1 && sb == 0) {
          const T yv = y[0];
          for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
        } else {
          for (int64_t i = 0; i < n; ++i) o[i] = f(x[i * sa], y[i * sb]);
        }
      });
    });
    return Status::ok();
  }

 private:
  BroadcastRows<2> rows_;
};

// A float32 comparison on SimdKernels::compare, one call per broadcast row.
class CompareF32Kernel final : public Kernel {
 public:
  CompareF32Kernel(const BroadcastRows<2>& rows, CompareOpF op) : rows_(rows), op_(op) {}

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<BinaryParams>();
    const float* a = ctx.in(p.a).as<float>();
    const float* b = ctx.in(p.b).as<float>();
    uint8_t* out = ctx.out().as<uint8_t>();
    const int64_t sa = rows_.step(0), sb = rows_.step(1);
    const SimdKernels& simd = simd_kernels();
    parallel_chunks(ctx.pool(), rows_.total(), kGrain, [&](int64_t begin, int64_t end) {
      rows_.for_each(begin, end, [&](const BroadcastRows<2>::Offsets& at, int64_t pos, int64_t n) {
        simd.compare(op_, a + at[0], sa, b + at[1], sb, out + pos, n);
      });
    });
    return Status::ok();
  }

 private:
  BroadcastRows<2> rows_;
  CompareOpF op_;
};

bool compare_op_f(OpKind kind, CompareOpF* op) {
  switch (kind) {
    case OpKind::kEqual:
      *op = CompareOpF::kEqual;
      return true;
    case OpKind::kNotEqual:
      *op = CompareOpF::kNotEqual;
      return true;
    case OpKind::kGreater:
      *op = CompareOpF::kGreater;
      return true;
    case OpKind::kGreaterOrEqual:
      *op = CompareOpF::kGreaterOrEqual;
      return true;
    case OpKind::kLesser:
      *op = CompareOpF::kLesser;
      return true;
    case OpKind::kLesserOrEqual:
      *op = CompareOpF::kLesserOrEqual;
      return true;
    default:
      return false;
  }
}

template <class T, OpKind K>
struct Arithmetic {
  T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      return static_cast<T>(float_binary(K, to_double(a), to_double(b)));
    } else {
      return int_binary<T>(K, a, b);
    }
  }
};

template <class T, OpKind K>
struct Predicate {
  uint8_t operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      return compare<double>(K, to_double(a), to_double(b)) ? 1 : 0;
    } else {
      return compare<T>(K, a, b) ? 1 : 0;
    }
  }
};

template <OpKind K>
std::unique_ptr<Kernel> binary_for(DataType type, bool predicate, const BroadcastRows<2>& rows) {
  return dispatch_type(type, [&](auto tag) -> std::unique_ptr<Kernel> {
    using T = decltype(tag);
    if (predicate) return std::make_unique<TypedBinaryKernel<T, uint8_t, Predicate<T, K>>>(rows);
    if constexpr (K == OpKind::kAdd || K == OpKind::kSub || K == OpKind::kMul ||
                  K == OpKind::kDiv || K == OpKind::kMax || K == OpKind::kMin ||
                  K == OpKind::kPow) {
      return std::make_unique<TypedBinaryKernel<T, T, Arithmetic<T, K>>>(rows);
    }
    return nullptr;
  });
}

std::unique_ptr<Kernel> make_binary(const Node& node, const CompileContext& cc) {
  const auto& p = node.as<BinaryParams>();
  const TensorView& a = cc.view(p.a);
  const TensorView& b = cc.view(p.b);
  const TensorView& out = cc.view(OperandRef{node.outputs[0]});
  if (a.data_type != b.data_type || is_4bit(a.data_type)) return nullptr;
  BroadcastRows<2> rows;
  if (!rows.init({&a.shape, &b.shape}, out.shape)) return nullptr;
  const OpFamily family = op_family(node.kind);
  const bool pred = family == OpFamily::kComparison || family == OpFamily::kLogical;
  if (pred && out.data_type != DataType::kUint8) return nullptr;
  if (!pred && out.data_type != a.data_type) return nullptr;
  CompareOpF cmp;
  // (BroadcastRows steps are 0 or 1, what SimdKernels::compare takes.)
  if (a.data_type == DataType::kFloat32 && compare_op_f(node.kind, &cmp)) {
    return std::make_unique<CompareF32Kernel>(rows, cmp);
  }
  switch (node.kind) {
#define WEBNN_TYPED_BINARY(kind) \
  case OpKind::kind:             \
    return binary_for<OpKind::kind>(a.data_type, pred, rows);
    WEBNN_TYPED_BINARY(kAdd)
    WEBNN_TYPED_BINARY(kSub)
    WEBNN_TYPED_BINARY(kMul)
    WEBNN_TYPED_BINARY(kDiv)
    WEBNN_TYPED_BINARY(kMax)
    WEBNN_TYPED_BINARY(kMin)
    WEBNN_TYPED_BINARY(kPow)
    WEBNN_TYPED_BINARY(kEqual)
    WEBNN_TYPED_BINARY(kNotEqual)
    WEBNN_TYPED_BINARY(kGreater)
    WEBNN_TYPED_BINARY(kGreaterOrEqual)
    WEBNN_TYPED_BINARY(kLesser)
    WEBNN_TYPED_BINARY(kLesserOrEqual)
    WEBNN_TYPED_BINARY(kLogicalAnd)
    WEBNN_TYPED_BINARY(kLogicalOr)
    WEBNN_TYPED_BINARY(kLogicalXor)
#undef WEBNN_TYPED_BINARY
    default:
      return nullptr;
  }
}

// out[i] = f(in[i]) over flat elements: logicalNot, isNaN, isInfinite, cast.
template <class In, class Out, class F>
class FlatUnaryKernel final : public Kernel {
 public:
  FlatUnaryKernel(OperandRef input, F f) : input_(input), f_(f) {}

  Status run(KernelContext& ctx) override {
    const TensorView& in = ctx.in(input_);
    const In* x = in.as<In>();
    Out* out = ctx.out().as<Out>();
    // Local restrict pointers: a (u)int8 output may alias anything, so through the closure's
    // references the compiler reloaded x and out per element and kept the loop scalar (a
    // float32 -> int8 cast ran at 17 ns per element).
    parallel_chunks(ctx.pool(), static_cast<int64_t>(in.count), kGrain,
                    [x, out, f = f_](int64_t begin, int64_t end) {
                      const In* __restrict src = x;
                      Out* __restrict dst = out;
                      for (int64_t i = begin; i < end; ++i) dst[i] = f(src[i]);
                    });
    return Status::ok();
  }

 private:
  OperandRef input_;
  F f_;
};

template <class In, class Out, class F>
std::unique_ptr<Kernel> flat(OperandRef input, F f) {
  return std::make_unique<FlatUnaryKernel<In, Out, F>>(input, f);
}

// A cast on SimdKernels::cast, over flat elements split over the pool.
class SimdCastKernel final : public Kernel {
 public:
  SimdCastKernel(OperandRef input, CastType from, CastType to, size_t from_size, size_t to_size)
      : input_(input), from_(from), to_(to), from_size_(from_size), to_size_(to_size) {}

  Status run(KernelContext& ctx) override {
    const TensorView& in = ctx.in(input_);
    const uint8_t* x = in.data;
    uint8_t* y = ctx.out().data;
    const SimdKernels& simd = simd_kernels();
    parallel_chunks(
        ctx.pool(), static_cast<int64_t>(in.count), kGrain, [&](int64_t begin, int64_t end) {
          simd.cast(from_, to_, x + begin * from_size_, y + begin * to_size_, end - begin);
        });
    return Status::ok();
  }

 private:
  OperandRef input_;
  CastType from_, to_;
  int64_t from_size_, to_size_;
};

// The SIMD casts' name for `t`, or false (float16, 4-bit types).
bool cast_type(DataType t, CastType* out) {
  switch (t) {
    case DataType::kFloat32:
      *out = CastType::kFloat32;
      return true;
    case DataType::kInt8:
      *out = CastType::kInt8;
      return true;
    case DataType::kUint8:
      *out = CastType::kUint8;
      return true;
    case DataType::kInt32:
      *out = CastType::kInt32;
      return true;
    case DataType::kUint32:
      *out = CastType::kUint32;
      return true;
    case DataType::kInt64:
      *out = CastType::kInt64;
      return true;
    case DataType::kUint64:
      *out = CastType::kUint64;
      return true;
    default:
      return false;
  }
}

std::unique_ptr<Kernel> make_unary(const Node& node, const CompileContext& cc) {
  if (node.kind == OpKind::kLogicalNot) {
    const OperandRef a = node.as<LogicalNotParams>().a;
    if (cc.view(a).data_type != DataType::kUint8) return nullptr;
    return flat<uint8_t, uint8_t>(a, [](uint8_t v) -> uint8_t { return v == 0 ? 1 : 0; });
  }
  if (node.kind == OpKind::kIsNaN || node.kind == OpKind::kIsInfinite) {
    const OperandRef x = node.as<UnaryParams>().input;
    const DataType type = cc.view(x).data_type;
    if (type != DataType::kFloat32 && type != DataType::kFloat16) return nullptr;
    const bool nan = node.kind == OpKind::kIsNaN;
    return dispatch_float(type, [&](auto tag) {
      using T = decltype(tag);
      return flat<T, uint8_t>(x, [nan](T v) -> uint8_t {
        const double d = to_double(v);
        return (nan ? std::isnan(d) : std::isinf(d)) ? 1 : 0;
      });
    });
  }
  if (node.kind == OpKind::kCast) {
    const OperandRef x = node.as<CastParams>().input;
    const DataType from = cc.view(x).data_type;
    const DataType to = cc.view(OperandRef{node.outputs[0]}).data_type;
    if (is_4bit(from) || is_4bit(to)) return nullptr;  // saturating nibble rules stay there
    CastType simd_from, simd_to;
    if (cast_type(from, &simd_from) && cast_type(to, &simd_to)) {
      return std::make_unique<SimdCastKernel>(x, simd_from, simd_to, element_size(from),
                                              element_size(to));
    }
    return dispatch_type(from, [&](auto from_tag) {
      using From = decltype(from_tag);
      return dispatch_type(to, [&](auto to_tag) {
        using To = decltype(to_tag);
        return flat<From, To>(x, [to](From v) { return cast_value<To, From>(v, to); });
      });
    });
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<Kernel> make_typed_elementwise_kernel(const Node& node, const CompileContext& cc) {
  switch (op_family(node.kind)) {
    case OpFamily::kBinary:
    case OpFamily::kComparison:
    case OpFamily::kLogical:
      if (node.kind == OpKind::kLogicalNot) return make_unary(node, cc);
      return make_binary(node, cc);
    default:
      return make_unary(node, cc);
  }
}

}  // namespace webnn
