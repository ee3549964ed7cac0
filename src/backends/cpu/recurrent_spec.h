// What the cpu recurrent kernels (recurrent.cc in double, recurrent_f32.cc in float32) know of
// one lstm / lstmCell / gru / gruCell node, parsed once by make_recurrent_kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "ops/recurrent_activation.h"

namespace webnn {

struct RecurrentSpec {
  bool lstm = true;
  int64_t steps = 1, batch = 1, input = 1, hidden = 1, dirs = 1, gates = 4;
  bool backward = false;    // direction "backward" (with dirs == 2 the second runs backward)
  bool alt_layout = false;  // lstm "iofg" / gru "zrn" (the defaults of the spec)
  bool reset_after = true;  // gru
  bool return_sequence = false;
  bool cell_op = false;  // lstmCell / gruCell: no direction axis, one step
  std::vector<RecurrentActivation> acts;
  OperandRef x, w, r, b, rb, peephole, h0, c0;

  // Multiply-adds of one run's matrix products (input and recurrent terms of every step).
  double macs() const {
    return static_cast<double>(steps) * batch * dirs * gates * hidden * (input + hidden);
  }

  // Whether every weight is a constant, so that a kernel packs them once at build.
  bool weights_constant(const CompileContext& cc) const {
    return cc.is_constant(w) && cc.is_constant(r) && (!b.present() || cc.is_constant(b)) &&
           (!rb.present() || cc.is_constant(rb)) &&
           (!peephole.present() || cc.is_constant(peephole));
  }
};

// One run's tensors: lstm (h, c[, sequence]), gru (h[, sequence]), lstmCell (h, c), gruCell (h).
struct RecurrentIo {
  const float *x, *h0, *c0;
  float *out_h, *out_c, *out_seq;

  RecurrentIo(const RecurrentSpec& s, KernelContext& ctx)
      : x(ctx.in(s.x).as<float>()),
        h0(s.h0.present() ? ctx.in(s.h0).as<float>() : nullptr),
        c0(s.c0.present() ? ctx.in(s.c0).as<float>() : nullptr),
        out_h(ctx.out(0).as<float>()),
        out_c(s.lstm ? ctx.out(1).as<float>() : nullptr),
        out_seq(s.return_sequence ? ctx.out(s.lstm ? 2 : 1).as<float>() : nullptr) {}
};

// Whether the spec runs on the float32 kernel: sigmoid gates, sigmoid / tanh candidates and
// cell outputs, and at least kRecurrentF32MinMacs multiply-adds per run (see
// docs/performance.md). WEBNN_RECURRENT_KERNEL=double or =float32 in the environment (read when
// the plan is built; for tests and comparisons) picks that kernel for every spec instead.
// 2^16: measured faster than the double kernel at every size from 32k multiply-adds up (one
// thread, AVX2: a 7-step GRU of hidden 160, 806k, 199 -> 77 us; one LSTM step of hidden 128,
// 98k, 37 -> 19 us); the bound keeps the small conformance cases on the double kernel.
constexpr double kRecurrentF32MinMacs = 1 << 16;
bool recurrent_uses_f32(const RecurrentSpec& spec);

// The float32 kernel (recurrent_f32.cc): weights packed for the GEMM (at build when constant).
std::unique_ptr<Kernel> make_recurrent_f32_kernel(const SimdKernels& simd, RecurrentSpec spec,
                                                  const CompileContext& cc);

}  // namespace webnn
