// Parameters of every WebNN operation: operands, method arguments and options-dictionary
// members, in Python positional order with spec defaults (spec/ops.md).
//
// Each struct's visit() names its fields; the Python binding, the .pyi stub, the text format
// and op_support_limits() are all derived from it, so a field is declared exactly once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "webnn/types.h"

namespace webnn {

using OperandId = int32_t;

// A reference to an operand of the graph being built; id < 0 means "absent".
struct OperandRef {
  OperandId id = -1;
  bool present() const { return id >= 0; }
  bool operator==(const OperandRef&) const = default;
};
using OperandList = std::vector<OperandRef>;

// A numeric option kept exactly as the user wrote it: integers stay 64-bit exact so that
// clamp/pad bounds on int64/uint64 tensors are not rounded through double.
struct Scalar {
  enum class Kind { kFloat, kInt, kUint } kind = Kind::kFloat;
  double f = 0;
  int64_t i = 0;
  uint64_t u = 0;

  static Scalar from_double(double v) { return Scalar{Kind::kFloat, v, 0, 0}; }
  static Scalar from_int(int64_t v) { return Scalar{Kind::kInt, 0, v, 0}; }
  static Scalar from_uint(uint64_t v) { return Scalar{Kind::kUint, 0, 0, v}; }
  double as_double() const {
    return kind == Kind::kFloat ? f
           : kind == Kind::kInt ? static_cast<double>(i)
                                : static_cast<double>(u);
  }
  bool operator==(const Scalar&) const = default;
};

// split's `splits`: either a number of equal parts or explicit sizes.
struct Splits {
  bool is_count = true;
  int64_t count = 0;
  std::vector<int64_t> sizes;
  bool operator==(const Splits&) const = default;
};

// Field flags given to visitors.
enum FieldFlags : unsigned {
  kOptionalField = 0,
  kRequired = 1,     // no default: must be passed
  kUnsigned = 2,     // integer(s) must be >= 0 (OverflowError otherwise)
  kKeywordOnly = 4,  // compat extras that may not be passed positionally
};

// An option's position (from 1) in the spec's options dictionary (MLConv2dOptions, ...), which
// is the order options are written in .webnn files (format.md §5.3). Or-ed into the flags of
// every option of a struct whose visit order (the Python positional order) differs from it;
// without it, files use the visit order.
inline constexpr unsigned kDictOrderShift = 16;
constexpr unsigned dict_order(unsigned position) { return position << kDictOrderShift; }
constexpr unsigned dict_order_of(unsigned flags) { return flags >> kDictOrderShift; }

using IntList = std::vector<int64_t>;
using OptIntList = std::optional<IntList>;
using OptDoubleList = std::optional<std::vector<double>>;
using OptStringList = std::optional<std::vector<std::string>>;
using OptScalar = std::optional<Scalar>;

#define WEBNN_PARAMS_EQ(Name) bool operator==(const Name&) const = default

struct BinaryParams {
  OperandRef a, b;
  template <class V>
  void visit(V& v) {
    v("a", a, kRequired);
    v("b", b, kRequired);
  }
  WEBNN_PARAMS_EQ(BinaryParams);
};

struct UnaryParams {
  OperandRef input;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
  }
  WEBNN_PARAMS_EQ(UnaryParams);
};

// logicalNot names its operand `a` in WebNN.
struct LogicalNotParams {
  OperandRef a;
  template <class V>
  void visit(V& v) {
    v("a", a, kRequired, "input");
  }
  WEBNN_PARAMS_EQ(LogicalNotParams);
};

// pywebnn compat: alpha/beta generalise hardSwish to x * hardSigmoid(x, alpha, beta).
struct HardSwishParams {
  OperandRef input;
  double alpha = 1.0 / 6.0, beta = 0.5;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("alpha", alpha, kKeywordOnly);
    v("beta", beta, kKeywordOnly);
  }
  WEBNN_PARAMS_EQ(HardSwishParams);
};

struct EluParams {
  OperandRef input;
  double alpha = 1.0;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("alpha", alpha);
  }
  WEBNN_PARAMS_EQ(EluParams);
};

struct LeakyReluParams {
  OperandRef input;
  double alpha = 0.01;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("alpha", alpha);
  }
  WEBNN_PARAMS_EQ(LeakyReluParams);
};

struct HardSigmoidParams {
  OperandRef input;
  double alpha = 0.2, beta = 0.5;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("alpha", alpha);
    v("beta", beta);
  }
  WEBNN_PARAMS_EQ(HardSigmoidParams);
};

struct LinearParams {
  OperandRef input;
  double alpha = 1.0, beta = 0.0;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("alpha", alpha);
    v("beta", beta);
  }
  WEBNN_PARAMS_EQ(LinearParams);
};

struct PreluParams {
  OperandRef input, slope;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("slope", slope, kRequired);
  }
  WEBNN_PARAMS_EQ(PreluParams);
};

struct ClampParams {
  OperandRef input;
  OptScalar min_value, max_value;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("min_value", min_value);
    v("max_value", max_value);
  }
  WEBNN_PARAMS_EQ(ClampParams);
};

struct SoftmaxParams {
  OperandRef input;
  int64_t axis = 0;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("axis", axis, kRequired | kUnsigned);
  }
  WEBNN_PARAMS_EQ(SoftmaxParams);
};

struct ReduceParams {
  OperandRef input;
  OptIntList axes;
  bool keep_dimensions = false;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("axes", axes, kUnsigned);
    v("keep_dimensions", keep_dimensions);
  }
  WEBNN_PARAMS_EQ(ReduceParams);
};

struct ArgMinMaxParams {
  OperandRef input;
  int64_t axis = 0;
  bool keep_dimensions = false;
  DataType output_data_type = DataType::kInt32;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("axis", axis, kRequired | kUnsigned);
    v("keep_dimensions", keep_dimensions);
    v("output_data_type", output_data_type);
  }
  WEBNN_PARAMS_EQ(ArgMinMaxParams);
};

struct CumulativeSumParams {
  OperandRef input;
  int64_t axis = 0;
  bool exclusive = false, reversed = false;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("axis", axis, kRequired | kUnsigned);
    v("exclusive", exclusive);
    v("reversed", reversed);
  }
  WEBNN_PARAMS_EQ(CumulativeSumParams);
};

struct CastParams {
  OperandRef input;
  DataType data_type = DataType::kFloat32;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("data_type", data_type, kRequired);
  }
  WEBNN_PARAMS_EQ(CastParams);
};

struct ConcatParams {
  OperandList inputs;
  int64_t axis = 0;
  template <class V>
  void visit(V& v) {
    v("inputs", inputs, kRequired);
    v("axis", axis, kRequired | kUnsigned);
  }
  WEBNN_PARAMS_EQ(ConcatParams);
};

// expand and reshape: new_shape entries may be dynamic dimensions.
struct NewShapeParams {
  OperandRef input;
  Shape new_shape;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("new_shape", new_shape, kRequired);
  }
  WEBNN_PARAMS_EQ(NewShapeParams);
};

struct SliceParams {
  OperandRef input;
  IntList starts;
  Shape sizes;
  OptIntList strides;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("starts", starts, kRequired | kUnsigned);
    v("sizes", sizes, kRequired);
    v("strides", strides, kUnsigned);
  }
  WEBNN_PARAMS_EQ(SliceParams);
};

struct SplitParams {
  OperandRef input;
  Splits splits;
  int64_t axis = 0;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("splits", splits, kRequired);
    v("axis", axis, kUnsigned);
  }
  WEBNN_PARAMS_EQ(SplitParams);
};

struct TileParams {
  OperandRef input;
  IntList repetitions;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("repetitions", repetitions, kRequired | kUnsigned);
  }
  WEBNN_PARAMS_EQ(TileParams);
};

struct TransposeParams {
  OperandRef input;
  OptIntList permutation;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("permutation", permutation, kUnsigned);
  }
  WEBNN_PARAMS_EQ(TransposeParams);
};

struct PadParams {
  OperandRef input;
  IntList beginning_padding;
  OptIntList ending_padding;
  std::string mode = "constant";
  Scalar value = Scalar::from_int(0);
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("beginning_padding", beginning_padding, kRequired | kUnsigned, "padding");  // pywebnn
    v("ending_padding", ending_padding, kUnsigned);
    v("mode", mode);
    v("value", value);
  }
  WEBNN_PARAMS_EQ(PadParams);
};

// reverse and squeeze: optional list of axes (None = all applicable axes).
struct AxesParams {
  OperandRef input;
  OptIntList axes;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("axes", axes, kUnsigned);
  }
  WEBNN_PARAMS_EQ(AxesParams);
};

struct UnsqueezeParams {
  OperandRef input;
  IntList axes;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("axes", axes, kRequired | kUnsigned);
  }
  WEBNN_PARAMS_EQ(UnsqueezeParams);
};

struct TriangularParams {
  OperandRef input;
  bool upper = true;
  int64_t diagonal = 0;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("upper", upper);
    v("diagonal", diagonal);
  }
  WEBNN_PARAMS_EQ(TriangularParams);
};

// gather and gatherElements.
struct GatherParams {
  OperandRef input, indices;
  int64_t axis = 0;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("indices", indices, kRequired);
    v("axis", axis, kUnsigned);
  }
  WEBNN_PARAMS_EQ(GatherParams);
};

struct GatherNdParams {
  OperandRef input, indices;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("indices", indices, kRequired);
  }
  WEBNN_PARAMS_EQ(GatherNdParams);
};

struct ScatterElementsParams {
  OperandRef input, indices, updates;
  int64_t axis = 0;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("indices", indices, kRequired);
    v("updates", updates, kRequired);
    v("axis", axis, kUnsigned);
  }
  WEBNN_PARAMS_EQ(ScatterElementsParams);
};

struct ScatterNdParams {
  OperandRef input, indices, updates;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("indices", indices, kRequired);
    v("updates", updates, kRequired);
  }
  WEBNN_PARAMS_EQ(ScatterNdParams);
};

struct WhereParams {
  OperandRef condition, true_value, false_value;
  template <class V>
  void visit(V& v) {
    v("condition", condition, kRequired);
    v("true_value", true_value, kRequired);
    v("false_value", false_value, kRequired);
  }
  WEBNN_PARAMS_EQ(WhereParams);
};

struct GemmParams {
  OperandRef a, b, c;
  double alpha = 1.0, beta = 1.0;
  bool a_transpose = false, b_transpose = false;
  template <class V>
  void visit(V& v) {
    v("a", a, kRequired);
    v("b", b, kRequired);
    v("c", c);
    v("alpha", alpha);
    v("beta", beta);
    v("a_transpose", a_transpose);
    v("b_transpose", b_transpose);
  }
  WEBNN_PARAMS_EQ(GemmParams);
};

struct Conv2dParams {
  OperandRef input, filter;
  OptIntList strides, dilations, padding;
  int64_t groups = 1;
  std::string input_layout = "nchw", filter_layout = "oihw";
  OperandRef bias;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("filter", filter, kRequired);
    v("strides", strides, kUnsigned | dict_order(2));
    v("dilations", dilations, kUnsigned | dict_order(3));
    v("padding", padding, kUnsigned | dict_order(1), "pads");
    v("groups", groups, kUnsigned | dict_order(4));
    v("input_layout", input_layout, dict_order(5));
    v("filter_layout", filter_layout, dict_order(6));
    v("bias", bias, dict_order(7));
  }
  WEBNN_PARAMS_EQ(Conv2dParams);
};

struct ConvTranspose2dParams {
  OperandRef input, filter;
  OptIntList strides, dilations, padding, output_padding, output_sizes;
  int64_t groups = 1;
  std::string input_layout = "nchw", filter_layout = "iohw";
  OperandRef bias;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("filter", filter, kRequired);
    v("strides", strides, kUnsigned | dict_order(2));
    v("dilations", dilations, kUnsigned | dict_order(3));
    v("padding", padding, kUnsigned | dict_order(1), "pads");
    v("output_padding", output_padding, kUnsigned | dict_order(4));
    v("output_sizes", output_sizes, kUnsigned | dict_order(5));
    v("groups", groups, kUnsigned | dict_order(6));
    v("input_layout", input_layout, dict_order(7));
    v("filter_layout", filter_layout, dict_order(8));
    v("bias", bias, dict_order(9));
  }
  WEBNN_PARAMS_EQ(ConvTranspose2dParams);
};

struct Pool2dParams {
  OperandRef input;
  OptIntList window_dimensions, strides, dilations, padding;
  std::string layout = "nchw", output_shape_rounding = "floor";
  OptIntList output_sizes;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("window_dimensions", window_dimensions, kUnsigned | dict_order(1));
    v("strides", strides, kUnsigned | dict_order(3));
    v("dilations", dilations, kUnsigned | dict_order(4));
    v("padding", padding, kUnsigned | dict_order(2), "pads");
    v("layout", layout, dict_order(5));
    v("output_shape_rounding", output_shape_rounding, dict_order(6));
    v("output_sizes", output_sizes, kUnsigned | dict_order(7));
  }
  WEBNN_PARAMS_EQ(Pool2dParams);
};

struct GlobalPoolParams {
  OperandRef input;
  std::string layout = "nchw";
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("layout", layout);
  }
  WEBNN_PARAMS_EQ(GlobalPoolParams);
};

struct Resample2dParams {
  OperandRef input;
  OptIntList sizes;
  OptDoubleList scales;
  std::string mode = "nearest-neighbor";
  OptIntList axes;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("sizes", sizes, kUnsigned | dict_order(3));
    v("scales", scales, dict_order(2));
    v("mode", mode, dict_order(1));
    v("axes", axes, kUnsigned | dict_order(4));
  }
  WEBNN_PARAMS_EQ(Resample2dParams);
};

struct BatchNormalizationParams {
  OperandRef input, mean, variance, scale, bias;
  double epsilon = 1e-5;
  int64_t axis = 1;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("mean", mean, kRequired);
    v("variance", variance, kRequired);
    v("scale", scale, dict_order(1));
    v("bias", bias, dict_order(2));
    v("epsilon", epsilon, dict_order(4));
    v("axis", axis, kUnsigned | dict_order(3));
  }
  WEBNN_PARAMS_EQ(BatchNormalizationParams);
};

struct InstanceNormalizationParams {
  OperandRef input, scale, bias;
  double epsilon = 1e-5;
  std::string layout = "nchw";
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("scale", scale);
    v("bias", bias);
    v("epsilon", epsilon);
    v("layout", layout);
  }
  WEBNN_PARAMS_EQ(InstanceNormalizationParams);
};

struct LayerNormalizationParams {
  OperandRef input, scale, bias;
  double epsilon = 1e-5;
  OptIntList axes;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("scale", scale, dict_order(1));
    v("bias", bias, dict_order(2));
    v("epsilon", epsilon, dict_order(4));
    v("axes", axes, kUnsigned | dict_order(3));
  }
  WEBNN_PARAMS_EQ(LayerNormalizationParams);
};

// quantizeLinear and dequantizeLinear.
struct QuantizeParams {
  OperandRef input, scale, zero_point;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("scale", scale, kRequired);
    v("zero_point", zero_point);
  }
  WEBNN_PARAMS_EQ(QuantizeParams);
};

struct GruParams {
  OperandRef input, weight, recurrent_weight;
  int64_t steps = 0, hidden_size = 0;
  OperandRef bias, recurrent_bias, initial_hidden_state;
  bool reset_after = true, return_sequence = false;
  std::string direction = "forward", layout = "zrn";
  OptStringList activations;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("weight", weight, kRequired);
    v("recurrent_weight", recurrent_weight, kRequired);
    v("steps", steps, kRequired | kUnsigned);
    v("hidden_size", hidden_size, kRequired | kUnsigned);
    v("bias", bias);
    v("recurrent_bias", recurrent_bias);
    v("initial_hidden_state", initial_hidden_state);
    v("reset_after", reset_after);
    v("return_sequence", return_sequence);
    v("direction", direction);
    v("layout", layout);
    v("activations", activations);
  }
  WEBNN_PARAMS_EQ(GruParams);
};

struct GruCellParams {
  OperandRef input, weight, recurrent_weight, hidden_state;
  int64_t hidden_size = 0;
  OperandRef bias, recurrent_bias;
  bool reset_after = true;
  std::string layout = "zrn";
  OptStringList activations;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("weight", weight, kRequired);
    v("recurrent_weight", recurrent_weight, kRequired);
    v("hidden_state", hidden_state, kRequired);
    v("hidden_size", hidden_size, kRequired | kUnsigned);
    v("bias", bias);
    v("recurrent_bias", recurrent_bias);
    v("reset_after", reset_after);
    v("layout", layout);
    v("activations", activations);
  }
  WEBNN_PARAMS_EQ(GruCellParams);
};

struct LstmParams {
  OperandRef input, weight, recurrent_weight;
  int64_t steps = 0, hidden_size = 0;
  OperandRef bias, recurrent_bias, peephole_weight, initial_hidden_state, initial_cell_state;
  bool return_sequence = false;
  std::string direction = "forward", layout = "iofg";
  OptStringList activations;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("weight", weight, kRequired);
    v("recurrent_weight", recurrent_weight, kRequired);
    v("steps", steps, kRequired | kUnsigned);
    v("hidden_size", hidden_size, kRequired | kUnsigned);
    v("bias", bias);
    v("recurrent_bias", recurrent_bias);
    v("peephole_weight", peephole_weight);
    v("initial_hidden_state", initial_hidden_state);
    v("initial_cell_state", initial_cell_state);
    v("return_sequence", return_sequence);
    v("direction", direction);
    v("layout", layout);
    v("activations", activations);
  }
  WEBNN_PARAMS_EQ(LstmParams);
};

struct LstmCellParams {
  OperandRef input, weight, recurrent_weight, hidden_state, cell_state;
  int64_t hidden_size = 0;
  OperandRef bias, recurrent_bias, peephole_weight;
  std::string layout = "iofg";
  OptStringList activations;
  template <class V>
  void visit(V& v) {
    v("input", input, kRequired, "x");
    v("weight", weight, kRequired);
    v("recurrent_weight", recurrent_weight, kRequired);
    v("hidden_state", hidden_state, kRequired);
    v("cell_state", cell_state, kRequired);
    v("hidden_size", hidden_size, kRequired | kUnsigned);
    v("bias", bias);
    v("recurrent_bias", recurrent_bias);
    v("peephole_weight", peephole_weight);
    v("layout", layout);
    v("activations", activations);
  }
  WEBNN_PARAMS_EQ(LstmCellParams);
};

#undef WEBNN_PARAMS_EQ

// Every params struct, in one list (expanded into OpParams and the bindings).
// clang-format off
#define WEBNN_PARAMS_TYPES(X)                                                                 \
  X(BinaryParams) X(UnaryParams) X(LogicalNotParams) X(HardSwishParams) X(EluParams)          \
  X(LeakyReluParams) X(HardSigmoidParams) X(LinearParams) X(PreluParams) X(ClampParams)       \
  X(SoftmaxParams) X(ReduceParams) X(ArgMinMaxParams) X(CumulativeSumParams) X(CastParams)    \
  X(ConcatParams) X(NewShapeParams) X(SliceParams) X(SplitParams) X(TileParams)               \
  X(TransposeParams) X(PadParams) X(AxesParams) X(UnsqueezeParams) X(TriangularParams)        \
  X(GatherParams) X(GatherNdParams) X(ScatterElementsParams) X(ScatterNdParams)              \
  X(WhereParams) X(GemmParams) X(Conv2dParams) X(ConvTranspose2dParams) X(Pool2dParams)       \
  X(GlobalPoolParams) X(Resample2dParams) X(BatchNormalizationParams)                        \
  X(InstanceNormalizationParams) X(LayerNormalizationParams) X(QuantizeParams)               \
  X(GruParams) X(GruCellParams) X(LstmParams) X(LstmCellParams)
// clang-format on

#define WEBNN_PARAMS_VARIANT_ENTRY(T) T,
using OpParams = std::variant<WEBNN_PARAMS_TYPES(WEBNN_PARAMS_VARIANT_ENTRY) std::monostate>;
#undef WEBNN_PARAMS_VARIANT_ENTRY

namespace detail {
template <class F>
struct OperandVisitor {
  F& f;
  void operator()(const char*, OperandRef& r, unsigned = 0, const char* = nullptr) {
    if (r.present()) f(r);
  }
  void operator()(const char*, OperandList& l, unsigned = 0, const char* = nullptr) {
    for (OperandRef& r : l) f(r);
  }
  template <class T>
  void operator()(const char*, T&, unsigned = 0, const char* = nullptr) {}
};
}  // namespace detail

// Calls visitor(name, field, flags, alias) for every field of the params held by `params`.
template <class V>
void visit_params(const OpParams& params, V& visitor) {
  std::visit(
      [&](auto& p) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) {
          const_cast<std::decay_t<decltype(p)>&>(p).visit(visitor);
        }
      },
      params);
}

// Calls f(ref) for every operand referenced by params, in field order.
template <class F>
void for_each_operand(const OpParams& params, F&& f) {
  detail::OperandVisitor<F> v{f};
  visit_params(params, v);
}

}  // namespace webnn
