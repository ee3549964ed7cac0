// matmul and gemm (float32) on the packed GEMM (gemm.h). Constant B operands are packed when
// the plan is built; others are packed at the start of each run.
#include <algorithm>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/gemm.h"

namespace webnn {

namespace {

bool is_float32(const TensorView& v) { return v.data_type == DataType::kFloat32; }

// Row-major strides of `shape` broadcast to `out` (0 along broadcast axes), in matrices.
std::vector<int64_t> batch_strides(const std::vector<int64_t>& shape,
                                   const std::vector<int64_t>& out) {
  std::vector<int64_t> s(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    const size_t o = i + out.size() - shape.size();
    s[o] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return s;
}

// Row-major strides of `shape`.
std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// A tensor seen through a permutation of its axes (Node::Permuted): the shape and the strides
// (in elements of the stored tensor) of each logical axis.
struct PermutedView {
  std::vector<int64_t> shape, strides;
};

// An operand read as transpose(stored, perm).
PermutedView read_view(const std::vector<int64_t>& stored, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> st = dense_strides(stored);
  if (perm.empty()) return {stored, st};
  PermutedView v{std::vector<int64_t>(perm.size()), std::vector<int64_t>(perm.size())};
  for (size_t i = 0; i < perm.size(); ++i) {
    v.shape[i] = stored[perm[i]];
    v.strides[i] = st[perm[i]];
  }
  return v;
}

// A result stored as transpose(result, perm): logical axis perm[j] is stored axis j.
PermutedView write_view(const std::vector<int64_t>& stored, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> st = dense_strides(stored);
  if (perm.empty()) return {stored, st};
  PermutedView v{std::vector<int64_t>(perm.size()), std::vector<int64_t>(perm.size())};
  for (size_t j = 0; j < perm.size(); ++j) {
    v.shape[perm[j]] = stored[j];
    v.strides[perm[j]] = st[j];
  }
  return v;
}

// B matrices (k x n each, `count` of them) packed for the micro-kernel.
class PackedB {
 public:
  bool init(int64_t count, int64_t k, int64_t n, int nr) {
    size_t floats = 0;
    if (!packed_b_floats(k, n, nr, &floats)) return false;
    per_matrix_ = floats;
    uint64_t total = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(floats), static_cast<uint64_t>(count),
                               &total)) {
      return false;
    }
    count_ = count;
    k_ = k;
    n_ = n;
    nr_ = nr;
    data_.reserve(std::max<size_t>(1, static_cast<size_t>(total)));
    return true;
  }
  // Packs matrix i of b, whose element (r, c) is at b[r * row_stride + c * col_stride].
  void pack(int64_t i, const float* b, int64_t row_stride, int64_t col_stride) {
    pack_b(b, row_stride, col_stride, k_, n_, nr_, data_.data() + i * per_matrix_);
  }
  // Packs every matrix (matrix i at b + i * matrix_stride), in parallel.
  void pack_all(const float* b, int64_t matrix_stride, int64_t row_stride, int64_t col_stride,
                ThreadPool* pool) {
    parallel_chunks(pool, count_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) pack(i, b + i * matrix_stride, row_stride, col_stride);
    });
  }
  // The same with matrix i at b + offsets[i].
  void pack_all(const float* b, const std::vector<int64_t>& offsets, int64_t row_stride,
                int64_t col_stride, ThreadPool* pool) {
    parallel_chunks(pool, count_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) pack(i, b + offsets[i], row_stride, col_stride);
    });
  }
  // A constant B is packed once per weight data: the plans and graphs of a context built from
  // the same weights share it (ConstantCache). `pack` fills this PackedB when none has yet.
  template <class Pack>
  void prepare_constant(const CompileContext& cc, OperandRef b, const char* variant, Pack pack) {
    const auto data = cc.constant_data(b);
    const std::string key = str_cat(variant, "/", count_, "x", k_, "x", n_, "/", nr_);
    if (cc.cache() && data) {
      shared_ = std::static_pointer_cast<const AlignedFloats>(cc.cache()->get(data, key));
      if (shared_) {
        data_ = AlignedFloats();
        return;
      }
    }
    pack();
    if (cc.cache() && data) {
      auto packed = std::make_shared<AlignedFloats>(std::move(data_));
      cc.cache()->put(data, key, packed);
      shared_ = std::move(packed);
    }
  }
  const float* matrix(int64_t i) const {
    return (shared_ ? shared_->data() : data_.data()) + i * per_matrix_;
  }

 private:
  AlignedFloats data_;
  std::shared_ptr<const AlignedFloats> shared_;  // a constant B's packing, shared
  size_t per_matrix_ = 0;
  int64_t count_ = 0, k_ = 0, n_ = 0;
  int nr_ = 1;
};

// out[b..., m, n] = a[b..., m, k] * b[b..., k, n] with broadcast batch dimensions. When B has
// a single matrix and A is not broadcast, all of A's rows form one product (one job).
class MatmulKernel final : public Kernel {
 public:
  explicit MatmulKernel(const SimdKernels& simd) : simd_(simd) {}

  bool take_column_bias(OperandRef bias) override {
    if (permuted_out_) return false;
    bias_ = bias;
    return true;
  }

  // A fused epilogue runs on each finished chunk of C inside the GEMM (in cache, no second
  // parallel pass) when the GEMM's column block is likely to span whole rows, so that a chunk
  // is one contiguous run: products of at most ~128k B elements per K pass (gemm.cc sizes a
  // column block to kc x nb floats of B in 512 KiB), e.g. attention scores (n = sequence,
  // k = head size), whose scale + mask pass otherwise re-reads heads x seq^2 floats. Rows
  // split into column blocks (checked per block) still work, one sink call per row.
  bool set_output_sink(const OutputSink* sink) override {
    if (permuted_out_ || n_ * std::min<int64_t>(k_, 768) > 128 * 1024) return false;
    sink_ = sink;
    return true;
  }

  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<BinaryParams>();
    const TensorView& a = cc.view(p.a);
    const TensorView& b = cc.view(p.b);
    const TensorView& out = cc.view(OperandRef{node.outputs[0]});
    if (!is_float32(a) || !is_float32(b) || a.rank() < 2 || b.rank() < 2) return false;
    // Operands and output through the permutations of folded transposes, if any.
    static const Node::Permuted kNone;
    const Node::Permuted& perm = node.permuted ? *node.permuted : kNone;
    const PermutedView av = read_view(a.shape, perm.a), bv = read_view(b.shape, perm.b);
    const PermutedView ov = write_view(out.shape, perm.out);
    const size_t ra = av.shape.size(), rb = bv.shape.size(), ro = ov.shape.size();
    if (av.strides[ra - 1] != 1 || ov.strides[ro - 1] != 1) return false;  // rows contiguous
    permuted_out_ = !perm.out.empty();
    m_ = av.shape[ra - 2];
    k_ = av.shape[ra - 1];
    n_ = bv.shape[rb - 1];
    lda_ = av.strides[ra - 2];
    ldc_ = ov.strides[ro - 2];
    b_row_stride_ = bv.strides[rb - 2];
    b_col_stride_ = bv.strides[rb - 1];
    const std::vector<int64_t> batch(ov.shape.begin(), ov.shape.end() - 2);
    const std::vector<int64_t> a_batch(av.shape.begin(), av.shape.end() - 2);
    const std::vector<int64_t> b_batch(bv.shape.begin(), bv.shape.end() - 2);
    int64_t batches = 1, a_count = 1, b_count = 1;
    for (int64_t d : batch) batches *= d;
    for (int64_t d : a_batch) a_count *= d;
    for (int64_t d : b_batch) b_count *= d;
    if (node.permuted) {
      // Matrix offsets from the views' strides (a broadcast axis adds nothing).
      std::vector<int64_t> idx(batch.size(), 0);
      for (int64_t flat = 0; flat < batches; ++flat) {
        int64_t oa = 0, ob = 0, oc = 0, ib = 0;
        for (size_t d = 0; d < batch.size(); ++d) {
          oc += idx[d] * ov.strides[d];
          const size_t shift_a = batch.size() - a_batch.size();
          if (d >= shift_a && a_batch[d - shift_a] != 1) oa += idx[d] * av.strides[d - shift_a];
          const size_t shift_b = batch.size() - b_batch.size();
          if (d >= shift_b && b_batch[d - shift_b] != 1) ob += idx[d] * bv.strides[d - shift_b];
        }
        // B's own matrix index (row-major over its batch axes), where it is packed.
        for (size_t d = batch.size() - b_batch.size(); d < batch.size(); ++d) {
          const int64_t size = b_batch[d - (batch.size() - b_batch.size())];
          ib = ib * size + (size == 1 ? 0 : idx[d]);
        }
        a_offsets_.push_back(oa);
        c_offsets_.push_back(oc);
        b_index_.push_back(ib);
        if (b_offsets_.size() <= static_cast<size_t>(ib)) b_offsets_.resize(ib + 1, 0);
        b_offsets_[ib] = ob;
        for (size_t d = batch.size(); d-- > 0;) {
          if (++idx[d] < batch[d]) break;
          idx[d] = 0;
        }
      }
      b_offsets_.resize(static_cast<size_t>(b_count), 0);
      rows_ = m_;
      // One B matrix: all of A's rows form one product, as below, when A's and C's rows (batch
      // by batch) are evenly spaced (a [1, s, d] -> [s, 1, d] transpose of A: rows of one
      // element each, which would otherwise run as s one-row products).
      if (b_count == 1 && a_count == batches && batches * m_ > 1) {
        const int64_t la = m_ > 1 ? lda_ : a_offsets_[1] - a_offsets_[0];
        const int64_t lc = m_ > 1 ? ldc_ : c_offsets_[1] - c_offsets_[0];
        bool even = la >= 0 && lc >= n_;
        for (int64_t flat = 0; flat < batches && even; ++flat) {
          even = a_offsets_[flat] == a_offsets_[0] + flat * m_ * la &&
                 c_offsets_[flat] == c_offsets_[0] + flat * m_ * lc;
        }
        if (even) {
          rows_ = batches * m_;
          lda_ = la;
          ldc_ = lc;
          a_offsets_.resize(1);
          c_offsets_.resize(1);
          b_index_ = {0};
        }
      }
    } else if (b_count == 1 && a_count == batches) {
      rows_ = batches * m_;
      a_offsets_ = {0};
      b_index_ = {0};
      c_offsets_ = {0};
    } else {
      rows_ = m_;
      const std::vector<int64_t> sa = batch_strides(a_batch, batch);
      const std::vector<int64_t> sb = batch_strides(b_batch, batch);
      std::vector<int64_t> idx(batch.size(), 0);
      for (int64_t flat = 0; flat < batches; ++flat) {
        int64_t ia = 0, ib = 0;
        for (size_t d = 0; d < batch.size(); ++d) {
          ia += idx[d] * sa[d];
          ib += idx[d] * sb[d];
        }
        a_offsets_.push_back(ia * m_ * k_);
        b_index_.push_back(ib);
        c_offsets_.push_back(flat * m_ * n_);
        for (size_t d = batch.size(); d-- > 0;) {
          if (++idx[d] < batch[d]) break;
          idx[d] = 0;
        }
      }
    }
    if (!packed_.init(b_count, k_, n_, simd_.gemm_nr)) return false;
    b_constant_ = cc.is_constant(p.b);
    if (b_offsets_.empty()) {
      for (int64_t i = 0; i < b_count; ++i) b_offsets_.push_back(i * k_ * n_);
    }
    if (b_constant_) {
      std::string variant = "matmul";
      if (!perm.b.empty()) {
        variant += "/p";
        for (int64_t d : perm.b) variant += str_cat(d, ",");
      }
      packed_.prepare_constant(cc, p.b, variant.c_str(), [&] {
        packed_.pack_all(b.as<float>(), b_offsets_, b_row_stride_, b_col_stride_, nullptr);
      });
    }
    jobs_.resize(a_offsets_.size());
    rows_a_.a.resize(a_offsets_.size());
    rows_a_.lda.assign(a_offsets_.size(), lda_);
    rows_a_.rows = rows_;
    rows_a_.mr = simd_.gemm_mr;
    return true;
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<BinaryParams>();
    const float* a = ctx.in(p.a).as<float>();
    float* c = ctx.out().as<float>();
    if (!b_constant_) {
      packed_.pack_all(ctx.in(p.b).as<float>(), b_offsets_, b_row_stride_, b_col_stride_,
                       ctx.pool());
    }
    for (size_t j = 0; j < jobs_.size(); ++j) {
      GemmJob& job = jobs_[j];
      job.m = rows_;
      job.n = n_;
      job.k_per_tap = k_;
      job.b_packed = packed_.matrix(b_index_[j]);
      job.c = c + c_offsets_[j];
      job.ldc = ldc_;
      job.col_bias = bias_.present() ? ctx.in(bias_).as<float>() : nullptr;
      rows_a_.a[j] = a + a_offsets_[j];
    }
    GemmEpilogue ep;
    struct SinkCtx {
      const OutputSink* sink;
      float* y;
    } sc{sink_, c};
    if (sink_) {
      ep.post = [](const void* ctx, float* block, int64_t ldc, int64_t rows, int64_t cols) {
        const auto& k = *static_cast<const SinkCtx*>(ctx);
        if (cols == ldc) return k.sink->apply(k.y, block - k.y, rows * cols);
        for (int64_t r = 0; r < rows; ++r) k.sink->apply(k.y, (block - k.y) + r * ldc, cols);
      };
      ep.post_ctx = &sc;
    }
    run_gemm(simd_, jobs_, ep, rows_a_.fn(), GemmBFn{}, scratch_, ctx.pool());
    return Status::ok();
  }

 private:
  const SimdKernels& simd_;
  const OutputSink* sink_ = nullptr;  // a fused epilogue applied per finished block
  int64_t m_ = 0, k_ = 0, n_ = 0, rows_ = 0;
  // Row strides of A and C, B's element strides (other than k and n for folded transposes).
  int64_t lda_ = 0, ldc_ = 0, b_row_stride_ = 0, b_col_stride_ = 1;
  std::vector<int64_t> a_offsets_, b_index_, c_offsets_;
  std::vector<int64_t> b_offsets_;  // where each of B's matrices starts
  bool permuted_out_ = false;       // C is stored transposed (Node::Permuted::out)
  OperandRef bias_;                 // a fused add's column bias (take_column_bias)
  bool b_constant_ = false;
  PackedB packed_;
  std::vector<GemmJob> jobs_;
  RowMajorA rows_a_;
  GemmScratch scratch_;
};

// gemm: alpha * a' * b' + beta * c, a' and b' optionally transposed. A transposed A is copied
// to row-major first; c is written into the output (scaled by beta) and accumulated onto,
// except for a bias row (beta == 1, c of shape [n] or [1, n]), which the micro-kernel adds.
class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const SimdKernels& simd) : simd_(simd) {}

  // Not when c is already the column bias; otherwise the bias follows alpha * A * B + beta * c
  // in the micro-kernel's store, as the add node would.
  bool take_column_bias(OperandRef bias) override {
    if (bias_row_) return false;
    bias_ = bias;
    return true;
  }

  bool init(const Node& node, const CompileContext& cc) {
    const auto& p = node.as<GemmParams>();
    const TensorView& a = cc.view(p.a);
    const TensorView& b = cc.view(p.b);
    const TensorView& out = cc.view(OperandRef{node.outputs[0]});
    if (!is_float32(a) || !is_float32(b) || !is_float32(out)) return false;
    m_ = out.shape[0];
    n_ = out.shape[1];
    k_ = p.a_transpose ? a.shape[0] : a.shape[1];
    if (p.c.present()) {
      const TensorView& c = cc.view(p.c);
      if (!is_float32(c)) return false;
      c_strides_ = batch_strides(c.shape, {m_, n_});
      bias_row_ = p.beta == 1.0 && c_strides_[0] == 0 && c_strides_[1] == 1;
    }
    if (!packed_.init(1, k_, n_, simd_.gemm_nr)) return false;
    b_constant_ = cc.is_constant(p.b);
    if (b_constant_) {
      packed_.prepare_constant(cc, p.b, p.b_transpose ? "gemm/t" : "gemm/n",
                               [&] { pack(b.as<float>(), p.b_transpose, nullptr); });
    }
    if (p.a_transpose) {
      uint64_t floats = 0;
      if (__builtin_mul_overflow(static_cast<uint64_t>(m_), static_cast<uint64_t>(k_), &floats)) {
        return false;
      }
      a_rows_.reserve(std::max<uint64_t>(1, floats));
    }
    jobs_.resize(1);
    rows_a_.a.resize(1);
    rows_a_.lda = {k_};
    rows_a_.rows = m_;
    rows_a_.mr = simd_.gemm_mr;
    return true;
  }

  Status run(KernelContext& ctx) override {
    const auto& p = ctx.params<GemmParams>();
    float* out = ctx.out().as<float>();
    if (!b_constant_) pack(ctx.in(p.b).as<float>(), p.b_transpose, ctx.pool());
    const float* a = ctx.in(p.a).as<float>();
    if (p.a_transpose) {
      transpose(a, k_, m_, a_rows_.data());
      a = a_rows_.data();
    }
    GemmEpilogue ep;
    ep.alpha = static_cast<float>(p.alpha);
    GemmJob& job = jobs_[0];
    job.m = m_;
    job.n = n_;
    job.k_per_tap = k_;
    job.b_packed = packed_.matrix(0);
    job.c = out;
    job.ldc = n_;
    job.col_bias = bias_.present() ? ctx.in(bias_).as<float>() : nullptr;
    // beta == 0 still adds 0 * c, as the reference does: NaN and inf in c give NaN, and a -0
    // product turns +0.
    if (p.c.present()) {
      const float* c = ctx.in(p.c).as<float>();
      if (bias_row_) {
        job.col_bias = c;
      } else {
        fill_beta_c(c, static_cast<float>(p.beta), out, ctx.pool());
        ep.accumulate = true;
      }
    }
    rows_a_.a[0] = a;
    run_gemm(simd_, jobs_, ep, rows_a_.fn(), GemmBFn{}, scratch_, ctx.pool());
    return Status::ok();
  }

 private:
  void pack(const float* b, bool transposed, ThreadPool* pool) {
    // Stored b is k x n, or n x k when transposed.
    if (transposed) {
      packed_.pack_all(b, 0, 1, k_, pool);
    } else {
      packed_.pack_all(b, 0, n_, 1, pool);
    }
  }

  void fill_beta_c(const float* c, float beta, float* out, ThreadPool* pool) {
    const int64_t s0 = c_strides_[0], s1 = c_strides_[1];
    parallel_chunks(pool, m_, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n_)),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t i = begin; i < end; ++i) {
                        for (int64_t j = 0; j < n_; ++j) {
                          out[i * n_ + j] = beta * c[i * s0 + j * s1];
                        }
                      }
                    });
  }

  const SimdKernels& simd_;
  int64_t m_ = 0, k_ = 0, n_ = 0;
  std::vector<int64_t> c_strides_;
  bool bias_row_ = false;
  OperandRef bias_;  // a fused add's column bias (take_column_bias)
  bool b_constant_ = false;
  PackedB packed_;
  AlignedFloats a_rows_;
  std::vector<GemmJob> jobs_;
  RowMajorA rows_a_;
  GemmScratch scratch_;
};

}  // namespace

std::unique_ptr<Kernel> make_matmul_kernel(const Node& node, const CompileContext& cc,
                                           const SimdKernels& simd) {
  auto k = std::make_unique<MatmulKernel>(simd);
  if (!k->init(node, cc)) return nullptr;
  return k;
}

std::unique_ptr<Kernel> make_gemm_kernel(const Node& node, const CompileContext& cc,
                                         const SimdKernels& simd) {
  auto k = std::make_unique<GemmKernel>(simd);
  if (!k->init(node, cc)) return nullptr;
  return k;
}

}  // namespace webnn
