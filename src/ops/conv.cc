// Infer for conv2d and convTranspose2d (spec/ops.md 3.9, §1.4 conv output sizes).
#include <initializer_list>
#include <string>

#include "core/layout.h"
#include "ops/infer.h"

namespace webnn {

namespace {

// Spatial options shared by both convolutions, with spec defaults applied.
struct Window {
  int64_t stride[2] = {1, 1};
  int64_t dilation[2] = {1, 1};
  int64_t pad[4] = {0, 0, 0, 0};  // beginH, endH, beginW, endW
};

Status read_pair(const InferContext& ctx, const OptIntList& v, const char* name, int64_t out[2],
                 bool allow_zero) {
  if (!v) return Status::ok();
  if (v->size() != 2) return ctx.error(name, " must have 2 entries (got ", v->size(), ")");
  for (size_t i = 0; i < 2; ++i) {
    if (!allow_zero && (*v)[i] < 1) {
      return ctx.error(name, "[", i, "] must be at least 1 (got ", (*v)[i], ")");
    }
    if ((*v)[i] > kMaxDimension) {
      return ctx.error(name, "[", i, "] ", (*v)[i], " exceeds ", kMaxDimension);
    }
    out[i] = (*v)[i];
  }
  return Status::ok();
}

Expected<Window> read_window(const InferContext& ctx, const OptIntList& strides,
                             const OptIntList& dilations, const OptIntList& padding) {
  Window w;
  WEBNN_RETURN_IF_ERROR(read_pair(ctx, strides, "strides", w.stride, false));
  WEBNN_RETURN_IF_ERROR(read_pair(ctx, dilations, "dilations", w.dilation, false));
  if (padding) {
    if (padding->size() != 4) {
      return ctx.error(
          "padding must have 4 entries [beginning_height, ending_height, "
          "beginning_width, ending_width] (got ",
          padding->size(), ")");
    }
    for (size_t i = 0; i < 4; ++i) {
      if ((*padding)[i] > kMaxDimension) {
        return ctx.error("padding[", i, "] ", (*padding)[i], " exceeds ", kMaxDimension);
      }
      w.pad[i] = (*padding)[i];
    }
  }
  return w;
}

// Static sizes of the axes named by `layout` ("nchw", "oihw", ...), looked up by letter.
struct Axes {
  LayoutAxes axes;
  int64_t size[4] = {0, 0, 0, 0};
  int64_t operator[](char letter) const { return size[axes[letter]]; }
};

Expected<Axes> static_axes(const InferContext& ctx, const Shape& shape, const std::string& layout,
                           const char* what, bool batch_first) {
  Axes a{LayoutAxes(layout)};
  for (size_t i = 0; i < 4; ++i) {
    // The batch axis may be dynamic: it is copied to the output, never used as a number.
    if (batch_first && i == 0) continue;
    WEBNN_ASSIGN_OR_RETURN(a.size[i], require_static(ctx, shape[i], i, what));
  }
  return a;
}

Status check_layout(const InferContext& ctx, const std::string& layout, const char* name,
                    std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* l : allowed) {
    if (layout == l) return Status::ok();
    list += std::string(list.empty() ? "" : ", ") + "\"" + l + "\"";
  }
  return ctx.error(name, " \"", layout, "\" is not one of ", list);
}

// The output shape from the batch Dim, output channels and spatial sizes.
Shape make_output(const Dim& batch, int64_t channels, int64_t h, int64_t w, bool nhwc) {
  if (nhwc) return {batch, Dim(h), Dim(w), Dim(channels)};
  return {batch, Dim(channels), Dim(h), Dim(w)};
}

Status check_bias(const InferContext& ctx, OperandRef input, OperandRef bias, int64_t channels) {
  if (!bias.present()) return Status::ok();
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, input, "input", bias, "bias"));
  const Shape& s = ctx.desc(bias).shape;
  if (!(s.size() == 1 && s[0] == Dim(channels))) {
    return ctx.error("bias shape ", shape_to_string(s), " must be [", channels,
                     "] (the output channels)");
  }
  return Status::ok();
}

Status check_groups(const InferContext& ctx, int64_t groups) {
  if (groups < 1) return ctx.error("groups must be at least 1 (got ", groups, ")");
  return Status::ok();
}

constexpr const char* kSpatial[2] = {"height", "width"};

InferResult infer_conv2d(const InferContext& ctx) {
  const auto& p = ctx.params<Conv2dParams>();
  WEBNN_RETURN_IF_ERROR(check_layout(ctx, p.input_layout, "input_layout", {"nchw", "nhwc"}));
  WEBNN_RETURN_IF_ERROR(
      check_layout(ctx, p.filter_layout, "filter_layout", {"oihw", "hwio", "ohwi", "ihwo"}));
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.input, "input", p.filter, "filter"));
  WEBNN_ASSIGN_OR_RETURN(Window w, read_window(ctx, p.strides, p.dilations, p.padding));
  WEBNN_RETURN_IF_ERROR(check_groups(ctx, p.groups));
  const Shape& in_shape = ctx.desc(p.input).shape;
  WEBNN_ASSIGN_OR_RETURN(Axes in, static_axes(ctx, in_shape, p.input_layout, "input", true));
  WEBNN_ASSIGN_OR_RETURN(
      Axes f, static_axes(ctx, ctx.desc(p.filter).shape, p.filter_layout, "filter", false));
  const int64_t in_c = in['c'], out_c = f['o'];
  if (in_c % p.groups != 0) {
    return ctx.error("input channels ", in_c, " must be divisible by groups ", p.groups);
  }
  if (in_c / p.groups != f['i']) {
    return ctx.error("input channels ", in_c, " / groups ", p.groups,
                     " must equal filter input channels ", f['i'], " (filter ",
                     shape_to_string(ctx.desc(p.filter).shape), ", layout ", p.filter_layout, ")");
  }
  if (out_c % p.groups != 0) {
    return ctx.error("output channels ", out_c, " (filter ", p.filter_layout,
                     ") must be divisible by groups ", p.groups);
  }
  WEBNN_RETURN_IF_ERROR(check_bias(ctx, p.input, p.bias, out_c));
  int64_t out_size[2];
  for (int i = 0; i < 2; ++i) {
    int64_t size = in["hw"[i]], kernel = f["hw"[i]];
    // Every term is <= 2^31 - 1, so this stays far from int64 overflow.
    int64_t effective = (kernel - 1) * w.dilation[i] + 1;
    int64_t span = size + w.pad[2 * i] + w.pad[2 * i + 1] - effective;
    if (span < 0) {
      return ctx.error("output ", kSpatial[i], " would be < 1: input ", kSpatial[i], " ", size,
                       " + padding ", w.pad[2 * i], " + ", w.pad[2 * i + 1],
                       " is smaller than the dilated filter ", kSpatial[i], " ", effective);
    }
    out_size[i] = span / w.stride[i] + 1;
  }
  return std::vector<OperandDesc>{
      {ctx.desc(p.input).data_type,
       make_output(in_shape[0], out_c, out_size[0], out_size[1], p.input_layout == "nhwc")}};
}

InferResult infer_conv_transpose2d(const InferContext& ctx) {
  const auto& p = ctx.params<ConvTranspose2dParams>();
  WEBNN_RETURN_IF_ERROR(check_layout(ctx, p.input_layout, "input_layout", {"nchw", "nhwc"}));
  // "oihw" is a pywebnn extension kept for compatibility.
  WEBNN_RETURN_IF_ERROR(
      check_layout(ctx, p.filter_layout, "filter_layout", {"iohw", "hwoi", "ohwi", "oihw"}));
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, p.input, "input", p.filter, "filter"));
  WEBNN_ASSIGN_OR_RETURN(Window w, read_window(ctx, p.strides, p.dilations, p.padding));
  int64_t out_pad[2] = {0, 0};
  WEBNN_RETURN_IF_ERROR(read_pair(ctx, p.output_padding, "output_padding", out_pad, true));
  int64_t sizes[2] = {0, 0};
  WEBNN_RETURN_IF_ERROR(read_pair(ctx, p.output_sizes, "output_sizes", sizes, false));
  if (!p.output_sizes) {
    for (int i = 0; i < 2; ++i) {
      if (out_pad[i] >= w.stride[i]) {
        return ctx.error("output_padding[", i, "] ", out_pad[i], " must be smaller than strides[",
                         i, "] ", w.stride[i]);
      }
    }
  }
  WEBNN_RETURN_IF_ERROR(check_groups(ctx, p.groups));
  const Shape& in_shape = ctx.desc(p.input).shape;
  WEBNN_ASSIGN_OR_RETURN(Axes in, static_axes(ctx, in_shape, p.input_layout, "input", true));
  WEBNN_ASSIGN_OR_RETURN(
      Axes f, static_axes(ctx, ctx.desc(p.filter).shape, p.filter_layout, "filter", false));
  const int64_t in_c = in['c'];
  if (in_c != f['i']) {
    return ctx.error("input channels ", in_c, " must equal filter input channels ", f['i'],
                     " (filter ", shape_to_string(ctx.desc(p.filter).shape), ", layout ",
                     p.filter_layout, ")");
  }
  if (in_c % p.groups != 0) {
    return ctx.error("input channels ", in_c, " must be divisible by groups ", p.groups);
  }
  const int64_t out_c = f['o'] * p.groups;
  WEBNN_RETURN_IF_ERROR(check_valid_dimension(ctx, out_c, "output channels"));
  WEBNN_RETURN_IF_ERROR(check_bias(ctx, p.input, p.bias, out_c));
  int64_t out_size[2];
  for (int i = 0; i < 2; ++i) {
    int64_t size = in["hw"[i]], kernel = f["hw"[i]];
    // Terms are <= 2^31 - 1; (size - 1) * stride < 2^62 cannot overflow.
    int64_t calc = (size - 1) * w.stride[i] + (kernel - 1) * w.dilation[i] + 1 - w.pad[2 * i] -
                   w.pad[2 * i + 1];
    if (p.output_sizes) {
      if (sizes[i] < calc || sizes[i] >= calc + w.stride[i]) {
        return ctx.error("output_sizes[", i, "] ", sizes[i], " must be in [", calc, ", ",
                         calc + w.stride[i], ") for input ", kSpatial[i], " ", size, ", filter ",
                         kSpatial[i], " ", kernel, " and strides[", i, "] ", w.stride[i]);
      }
      out_size[i] = sizes[i];
    } else {
      out_size[i] = calc + out_pad[i];
      if (out_size[i] < 1 || out_size[i] > kMaxDimension) {
        return ctx.error("output ", kSpatial[i], " ", out_size[i],
                         " is not a valid dimension (input ", kSpatial[i], " ", size, ", filter ",
                         kernel, ", padding ", w.pad[2 * i], " + ", w.pad[2 * i + 1], ")");
      }
    }
  }
  return std::vector<OperandDesc>{
      {ctx.desc(p.input).data_type,
       make_output(in_shape[0], out_c, out_size[0], out_size[1], p.input_layout == "nhwc")}};
}

}  // namespace

void register_conv_schemas(SchemaTable& t) {
  t[static_cast<int>(OpKind::kConv2d)] = OpSchema{infer_conv2d,
                                                  {{"input", kFloatTypes, 4, 4},
                                                   {"filter", kFloatTypes, 4, 4},
                                                   {"bias", kFloatTypes, 1, 1},
                                                   {"output", kFloatTypes, 4, 4}}};
  t[static_cast<int>(OpKind::kConvTranspose2d)] = OpSchema{infer_conv_transpose2d,
                                                           {{"input", kFloatTypes, 4, 4},
                                                            {"filter", kFloatTypes, 4, 4},
                                                            {"bias", kFloatTypes, 1, 1},
                                                            {"output", kFloatTypes, 4, 4}}};
}

}  // namespace webnn
