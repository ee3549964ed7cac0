// where on the cpu: out = condition != 0 ? true_value : false_value over broadcast shapes, any
// element type, as rows (broadcast_rows.h) split over the pool. The reference walks every
// output index through a coordinate vector; this kernel gives the same elements (4-byte
// elements on the SIMD select, predicate.inc).
#include <cstring>

#include "backends/cpu/broadcast_rows.h"
#include "backends/cpu/cpu_kernels.h"

namespace webnn {

namespace {

constexpr int64_t kGrain = 16384;  // elements per task

template <class T>
void select_row(const SimdKernels& simd, const uint8_t* c, int64_t cs, const T* t, int64_t ts,
                const T* f, int64_t fs, T* out, int64_t n) {
  if (cs == 0) {  // one condition for the run: a copy or a fill
    const T* src = c[0] != 0 ? t : f;
    const int64_t step = c[0] != 0 ? ts : fs;
    if (step == 0) {
      std::fill(out, out + n, src[0]);
    } else if (src != out) {  // the output may reuse a dying input's buffer
      std::memmove(out, src, static_cast<size_t>(n) * sizeof(T));
    }
    return;
  }
  if constexpr (sizeof(T) == 4) {
    // (BroadcastRows steps are 0 or 1, what select32 takes.)
    simd.select32(c, t, ts, f, fs, out, n);
  } else {
    // Bit selects, no branch: a random condition mispredicted ?: at ~7 ns per element.
    for (int64_t i = 0; i < n; ++i) {
      const T m = static_cast<T>(T{0} - static_cast<T>(c[i] != 0));
      out[i] = static_cast<T>((t[i * ts] & m) | (f[i * fs] & static_cast<T>(~m)));
    }
  }
}

class WhereKernel final : public Kernel {
 public:
  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<WhereParams>();
    const TensorView& c = cc.view(p.condition);
    const TensorView& t = cc.view(p.true_value);
    const TensorView& f = cc.view(p.false_value);
    const TensorView& out = cc.view(OperandRef{node.outputs[0]});
    if (c.data_type != DataType::kUint8 || t.data_type != f.data_type ||
        out.data_type != t.data_type || is_4bit(t.data_type)) {
      return false;
    }
    element_ = element_size(t.data_type);
    if (element_ != 1 && element_ != 2 && element_ != 4 && element_ != 8) return false;
    return rows_.init({&c.shape, &t.shape, &f.shape}, out.shape);
  }

  Status run(KernelContext& ctx) override {
    switch (element_) {
      case 1:
        return run_typed<uint8_t>(ctx);
      case 2:
        return run_typed<uint16_t>(ctx);
      case 8:
        return run_typed<uint64_t>(ctx);
      default:
        return run_typed<uint32_t>(ctx);
    }
  }

 private:
  template <class T>
  Status run_typed(KernelContext& ctx) {
    const auto& p = ctx.params<WhereParams>();
    const uint8_t* c = ctx.in(p.condition).as<uint8_t>();
    const T* t = reinterpret_cast<const T*>(ctx.in(p.true_value).data);
    const T* f = reinterpret_cast<const T*>(ctx.in(p.false_value).data);
    T* out = reinterpret_cast<T*>(ctx.out().data);
    const int64_t cs = rows_.step(0), ts = rows_.step(1), fs = rows_.step(2);
    const SimdKernels& simd = simd_kernels();
    parallel_chunks(ctx.pool(), rows_.total(), kGrain, [&](int64_t begin, int64_t end) {
      rows_.for_each(begin, end, [&](const BroadcastRows<3>::Offsets& at, int64_t pos, int64_t n) {
        select_row(simd, c + at[0], cs, t + at[1], ts, f + at[2], fs, out + pos, n);
      });
    });
    return Status::ok();
  }

  BroadcastRows<3> rows_;
  size_t element_ = 4;
};

}  // namespace

std::unique_ptr<Kernel> make_where_kernel(const Node& node, const CompileContext& cc) {
  if (node.kind != OpKind::kWhere) return nullptr;
  auto k = std::make_unique<WhereKernel>();
  if (!k->init(node, cc)) return nullptr;
  return k;
}

}  // namespace webnn
