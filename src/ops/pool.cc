// Infer for pooling and resampling (spec/ops.md 3.9 and the RustNN global pools of §4).
#include <cmath>
#include <string>

#include "ops/infer.h"

namespace webnn {

namespace {

// ValueError when the dimension on `axis` is dynamic.
Status require_static_axis(const InferContext& ctx, const Shape& shape, size_t axis) {
  auto value = require_static(ctx, shape[axis], axis, "input");
  return value.has_value() ? Status::ok() : value.status();
}

// Axes of the two spatial dimensions and the channel dimension of a rank-4 input.
struct Layout {
  size_t h, w, c;
};

Expected<Layout> parse_layout(const InferContext& ctx, const std::string& layout) {
  if (layout == "nchw") return Layout{2, 3, 1};
  if (layout == "nhwc") return Layout{1, 2, 3};
  return ctx.error("layout must be \"nchw\" or \"nhwc\" (got \"", layout, "\")");
}

// A list option of exactly two entries, each >= 1; `fallback` when absent.
Expected<IntList> positive_pair(const InferContext& ctx, const OptIntList& list, const char* what,
                                IntList fallback) {
  if (!list) return fallback;
  if (list->size() != 2) return ctx.error(what, " must have 2 entries (got ", list->size(), ")");
  for (int64_t v : *list) {
    if (v < 1) return ctx.error(what, " entries must be at least 1 (got ", v, ")");
  }
  return *list;
}

// The floor- and ceil-rounded output sizes of one spatial axis; 0 marks a rounding that
// gives no valid size.
struct PoolSize {
  int64_t floor, ceil;
};

// The spec's "calculate conv output size", (in - effective window + begin + end) / stride + 1,
// rounded both ways in exact 128-bit arithmetic: options are unsigned 64-bit values whose
// products and sums may exceed int64 before the result is range-checked. The window may be
// a little larger than the padded input: the real quotient is then in (0, 1) and only the
// floor rounding is invalid.
Expected<PoolSize> pool_output_size(const InferContext& ctx, const char* axis, int64_t in,
                                    int64_t window, int64_t begin, int64_t end, int64_t stride,
                                    int64_t dilation) {
  using I128 = __int128;
  I128 effective_window = static_cast<I128>(window - 1) * dilation + 1;
  I128 span = static_cast<I128>(in) + begin + end - effective_window;
  I128 q = span / stride, r = span % stride;  // truncated toward zero
  I128 lo = (r < 0 ? q - 1 : q) + 1;
  I128 hi = (r > 0 ? q + 1 : q) + 1;
  if (hi > kMaxDimension) {
    return ctx.error("output ", axis, " (input ", in, " plus padding ", begin, " + ", end,
                     ") is not a valid dimension (must be at most ", kMaxDimension, ")");
  }
  return PoolSize{lo < 1 ? 0 : static_cast<int64_t>(lo), hi < 1 ? 0 : static_cast<int64_t>(hi)};
}

Status check_pool_size(const InferContext& ctx, const char* axis, int64_t size, int64_t in,
                       int64_t window, int64_t begin, int64_t end, int64_t dilation) {
  if (size >= 1) return Status::ok();
  return ctx.error("window ", axis, " ", window, " with dilation ", dilation,
                   " does not fit the input ", axis, " ", in, " plus padding ", begin, " + ", end,
                   " (the output ", axis, " would be < 1)");
}

InferResult infer_pool2d(const InferContext& ctx) {
  const auto& p = ctx.params<Pool2dParams>();
  const OperandDesc& in = ctx.desc(p.input);
  WEBNN_ASSIGN_OR_RETURN(Layout layout, parse_layout(ctx, p.layout));
  const bool ceil_rounding = p.output_shape_rounding == "ceil";
  if (!ceil_rounding && p.output_shape_rounding != "floor") {
    return ctx.error("output_shape_rounding must be \"floor\" or \"ceil\" (got \"",
                     p.output_shape_rounding, "\")");
  }
  WEBNN_ASSIGN_OR_RETURN(int64_t height,
                         require_static(ctx, in.shape[layout.h], layout.h, "input"));
  WEBNN_ASSIGN_OR_RETURN(int64_t width, require_static(ctx, in.shape[layout.w], layout.w, "input"));
  WEBNN_RETURN_IF_ERROR(require_static_axis(ctx, in.shape, layout.c));

  WEBNN_ASSIGN_OR_RETURN(IntList window, positive_pair(ctx, p.window_dimensions,
                                                       "window_dimensions", {height, width}));
  WEBNN_ASSIGN_OR_RETURN(IntList strides, positive_pair(ctx, p.strides, "strides", {1, 1}));
  WEBNN_ASSIGN_OR_RETURN(IntList dilations, positive_pair(ctx, p.dilations, "dilations", {1, 1}));
  IntList padding = p.padding.value_or(IntList{0, 0, 0, 0});
  if (padding.size() != 4) {
    return ctx.error("padding must have 4 entries [begin_h, end_h, begin_w, end_w] (got ",
                     padding.size(), ")");
  }
  WEBNN_ASSIGN_OR_RETURN(PoolSize oh, pool_output_size(ctx, "height", height, window[0], padding[0],
                                                       padding[1], strides[0], dilations[0]));
  WEBNN_ASSIGN_OR_RETURN(PoolSize ow, pool_output_size(ctx, "width", width, window[1], padding[2],
                                                       padding[3], strides[1], dilations[1]));
  int64_t out_h = ceil_rounding ? oh.ceil : oh.floor;
  int64_t out_w = ceil_rounding ? ow.ceil : ow.floor;
  if (!p.output_sizes) {
    WEBNN_RETURN_IF_ERROR(check_pool_size(ctx, "height", out_h, height, window[0], padding[0],
                                          padding[1], dilations[0]));
    WEBNN_RETURN_IF_ERROR(check_pool_size(ctx, "width", out_w, width, window[1], padding[2],
                                          padding[3], dilations[1]));
  } else {
    // output_sizes picks the rounding explicitly (it overrides output_shape_rounding); the
    // padding still applies, as the WPT conformance cases expect.
    const IntList& sizes = *p.output_sizes;
    if (sizes.size() != 2) {
      return ctx.error("output_sizes must have 2 entries (got ", sizes.size(), ")");
    }
    if (sizes[0] < 1 || sizes[1] < 1) {
      // Checked first: a rounding that gives no valid size is 0 in PoolSize, and listing it
      // below made "[0,2] must equal the floor-rounded [0,2]".
      return ctx.error("output_sizes entries must be at least 1 (got ", shape_to_string(sizes),
                       ")");
    }
    bool is_floor = sizes[0] == oh.floor && sizes[1] == ow.floor;
    bool is_ceil = sizes[0] == oh.ceil && sizes[1] == ow.ceil;
    if (!is_floor && !is_ceil) {
      auto rounded = [](int64_t h, int64_t w) {  // "none" for an axis without a valid size
        auto one = [](int64_t v) { return v < 1 ? std::string("none") : std::to_string(v); };
        return "[" + one(h) + "," + one(w) + "]";
      };
      return ctx.error("output_sizes ", shape_to_string(sizes), " must equal the floor-rounded ",
                       rounded(oh.floor, ow.floor), " or the ceil-rounded ",
                       rounded(oh.ceil, ow.ceil), " output sizes");
    }
    out_h = sizes[0];
    out_w = sizes[1];
  }
  // The kernels visit every tap of every window: a window of 2^62 dilated taps over huge
  // padding is a few option values, and ran for ever (found by review, issue 8). Refused
  // beyond 2^32 taps per channel plane (exact 128-bit product of values checked above).
  using I128 = __int128;
  const I128 taps = static_cast<I128>(window[0]) * window[1] * out_h * out_w;
  if (taps > (I128{1} << 32)) {
    return ctx.error("window_dimensions ", shape_to_string(window), " over an output of ", out_h,
                     " x ", out_w, " visit more than 2^32 window taps per channel");
  }
  Shape shape = in.shape;  // the batch axis passes through, static or dynamic
  shape[layout.h] = Dim(out_h);
  shape[layout.w] = Dim(out_w);
  return std::vector<OperandDesc>{{in.data_type, std::move(shape)}};
}

InferResult infer_global_pool(const InferContext& ctx) {
  const auto& p = ctx.params<GlobalPoolParams>();
  const OperandDesc& in = ctx.desc(p.input);
  WEBNN_ASSIGN_OR_RETURN(Layout layout, parse_layout(ctx, p.layout));
  for (size_t axis : {layout.h, layout.w, layout.c}) {
    WEBNN_RETURN_IF_ERROR(require_static_axis(ctx, in.shape, axis));
  }
  Shape shape = in.shape;
  shape[layout.h] = Dim(1);
  shape[layout.w] = Dim(1);
  return std::vector<OperandDesc>{{in.data_type, std::move(shape)}};
}

InferResult infer_resample2d(const InferContext& ctx) {
  const auto& p = ctx.params<Resample2dParams>();
  const OperandDesc& in = ctx.desc(p.input);
  if (p.mode != "nearest-neighbor" && p.mode != "linear") {
    return ctx.error("mode must be \"nearest-neighbor\" or \"linear\" (got \"", p.mode, "\")");
  }
  IntList axes = p.axes.value_or(IntList{2, 3});
  if (axes.size() != 2) return ctx.error("axes must have 2 entries (got ", axes.size(), ")");
  for (int64_t a : axes) WEBNN_RETURN_IF_ERROR(check_axis(ctx, a, in.rank(), "axes entry"));
  if (axes[0] == axes[1]) return ctx.error("axes contains duplicate axis ", axes[0]);

  // scales is validated even when sizes overrides it (WebNN resample2d method steps).
  // WebNN scales are IDL `float`: round to float32 first so that e.g. 0.7 * 10 gives 6
  // exactly as in a browser.
  const std::vector<double> scales = p.scales.value_or(std::vector<double>{1.0, 1.0});
  if (scales.size() != 2) return ctx.error("scales must have 2 entries (got ", scales.size(), ")");
  for (double s : scales) {
    const float scale = static_cast<float>(s);
    if (!std::isfinite(scale) || !(scale > 0)) {
      return ctx.error("scales entries must be finite and greater than 0 (got ", s, ")");
    }
  }
  if (p.sizes && p.sizes->size() != 2) {
    return ctx.error("sizes must have 2 entries (got ", p.sizes->size(), ")");
  }

  Shape shape = in.shape;
  for (size_t k = 0; k < 2; ++k) {
    WEBNN_ASSIGN_OR_RETURN(int64_t size, require_static(ctx, in.shape[axes[k]], axes[k], "input"));
    int64_t out = 0;
    if (p.sizes) {
      // sizes overrides scales.
      out = (*p.sizes)[k];
      WEBNN_RETURN_IF_ERROR(check_valid_dimension(ctx, out, "sizes entry"));
    } else {
      const float scale = static_cast<float>(scales[k]);
      double product = std::floor(static_cast<double>(size) * static_cast<double>(scale));
      if (product < 1 || product > static_cast<double>(kMaxDimension)) {
        return ctx.error("output size floor(", size, " * ", scale, ") on axis ", axes[k],
                         " is not a valid dimension");
      }
      out = static_cast<int64_t>(product);
    }
    shape[axes[k]] = Dim(out);
  }
  return std::vector<OperandDesc>{{in.data_type, std::move(shape)}};
}

}  // namespace

void register_pool_schemas(SchemaTable& t) {
  const std::vector<OperandLimit> float4 = {{"input", kFloatTypes, 4, 4},
                                            {"output", kFloatTypes, 4, 4}};
  set_schema(t, OpKind::kAveragePool2d, infer_pool2d, float4);
  set_schema(t, OpKind::kL2Pool2d, infer_pool2d, float4);
  set_schema(t, OpKind::kMaxPool2d, infer_pool2d,
             {{"input", kByteTypes, 4, 4}, {"output", kByteTypes, 4, 4}});
  set_schema(t, OpKind::kGlobalAveragePool, infer_global_pool, float4);
  set_schema(t, OpKind::kGlobalMaxPool, infer_global_pool, float4);
  const DataTypeMask resample_types = kFloatTypes | mask_of(DataType::kUint8, DataType::kInt8);
  set_schema(t, OpKind::kResample2d, infer_resample2d,
             {{"input", resample_types, 4, 4}, {"output", resample_types, 4, 4}});
}

}  // namespace webnn
