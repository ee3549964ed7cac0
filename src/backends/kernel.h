// What a kernel sees at execution time: concrete shapes and raw buffers.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "webnn/graph.h"
#include "webnn/status.h"

namespace webnn {

class ThreadPool;

// A buffer with a concrete shape. 4-bit data is unpacked (one byte per element) for kernels;
// data_type stays the logical type so kernels can tell int4 from int8.
struct TensorView {
  DataType data_type = DataType::kFloat32;
  std::vector<int64_t> shape;
  uint8_t* data = nullptr;
  uint64_t count = 0;  // element count

  template <class T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
  size_t rank() const { return shape.size(); }
};

class KernelContext {
 public:
  KernelContext(const Node& node, std::vector<TensorView>& views, ThreadPool* pool = nullptr)
      : node_(node), views_(views), pool_(pool) {}

  const Node& node() const { return node_; }
  // The context's worker threads, or null: kernels then run on the calling thread only.
  ThreadPool* pool() const { return pool_; }
  template <class P>
  const P& params() const {
    return node_.as<P>();
  }
  const TensorView& in(OperandRef r) const { return views_[r.id]; }
  TensorView& out(size_t i = 0) { return views_[node_.outputs[i]]; }
  size_t output_count() const { return node_.outputs.size(); }

  template <class... Args>
  Status error(const Args&... args) const {
    std::string p = op_spec_name(node_.kind);
    if (!node_.label.empty()) p += " '" + node_.label + "'";
    return Status(ErrorKind::kRuntime, p + ": " + str_cat(args...));
  }

 private:
  const Node& node_;
  std::vector<TensorView>& views_;
  ThreadPool* pool_;
};

// Post-processing of a kernel's float32 output, applied to elements [begin, begin + n) of
// it (flat index) once they hold their final value; called concurrently on disjoint ranges.
// Fused epilogues (cpu/epilogue.cc) are sinks.
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  virtual void apply(float* y, int64_t begin, int64_t n) const = 0;
};

// A compiled operation; may hold prepared state (packed weights) in later backends.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status run(KernelContext& ctx) = 0;
  // A kernel that will pass every part of its output through `sink` as it finishes it (while
  // the part is in cache) returns true; otherwise the caller applies it afterwards.
  virtual bool set_output_sink(const OutputSink* sink) {
    (void)sink;
    return false;
  }
  // A kernel that adds `bias` (float32, one value per column of its float32 output's last
  // axis) to its result as it stores it, with the same float32 addition a following `add`
  // node would make, returns true: a fused `add` step is then folded into it.
  virtual bool take_column_bias(OperandRef bias) {
    (void)bias;
    return false;
  }
  // A kernel that applies `activation` (an element-wise op of the graph: relu, or hardSwish
  // with the WebNN coefficients) to each value of its float32 output as it stores it, with the
  // function the stand-alone kernel uses, returns true: a fused first step that rewrites the
  // head's value in place is then folded into it.
  enum class Activation : uint8_t { kRelu, kHardSwish };
  virtual bool take_activation(Activation activation) {
    (void)activation;
    return false;
  }
};

using KernelFn = Status (*)(KernelContext&);
using KernelTable = std::array<KernelFn, kOpCount>;

class FunctionKernel final : public Kernel {
 public:
  explicit FunctionKernel(KernelFn fn) : fn_(fn) {}
  Status run(KernelContext& ctx) override { return fn_(ctx); }

 private:
  KernelFn fn_;
};

}  // namespace webnn
