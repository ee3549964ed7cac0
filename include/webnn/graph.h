// The graph IR: operands (inputs, constants, intermediates) and operation nodes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "webnn/options.h"
#include "webnn/types.h"

namespace webnn {

enum class OpKind : uint8_t {
#define WEBNN_OP(kind, spec, py, params, multi) k##kind,
#include "webnn/op_table.def"
#undef WEBNN_OP
};

inline constexpr int kOpCount = 0
#define WEBNN_OP(kind, spec, py, params, multi) +1
#include "webnn/op_table.def"
#undef WEBNN_OP
    ;
static_assert(kOpCount == 100, "95 WebNN operations + 5 RustNN extensions");

// The families of the op table: operations sharing one Infer and one kernel shape (binary
// arithmetic, reductions, pool2d, ...), each listed once in op_table.def.
enum class OpFamily : uint8_t {
#define WEBNN_FAMILY(name) k##name,
#define WEBNN_OP(kind, spec, py, params, multi)
#include "webnn/op_table.def"
#undef WEBNN_OP
};

const char* op_spec_name(OpKind kind);    // "convTranspose2d"
const char* op_python_name(OpKind kind);  // "conv_transpose2d"
bool op_multi_output(OpKind kind);
std::optional<OpKind> op_from_spec_name(std::string_view name);
OpParams default_params(OpKind kind);  // the kind's params struct with spec defaults
OpFamily op_family(OpKind kind);
// The kinds of `family`, in op-table order.
const std::vector<OpKind>& ops_in_family(OpFamily family);
// True when `kind`'s params struct is P (e.g. UnaryParams: an element-wise op with no options).
template <class P>
bool op_params_are(OpKind kind) {
  return std::holds_alternative<P>(default_params(kind));
}
// The option-less (UnaryParams) ops of the Unary and Activation families: element-wise unary
// functions that one Infer and one kernel with an op switch serve.
const std::vector<OpKind>& elementwise_unary_ops();

// Narrows the data types an operand field accepts (a backend's support): (op, field name,
// schema types) -> accepted types. Empty: the op schemas alone decide.
using TypeFilter = std::function<DataTypeMask(OpKind, const char*, DataTypeMask)>;

// Immutable byte storage of a constant: either owned bytes, or a view into storage that
// `owner` keeps alive (a memory-mapped weights file), so large weights are never copied.
class ConstantData {
 public:
  explicit ConstantData(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  ConstantData(std::shared_ptr<const void> owner, const uint8_t* data, size_t size)
      : owner_(std::move(owner)), view_(data), view_size_(size) {}
  const uint8_t* data() const { return owner_ ? view_ : bytes_.data(); }
  size_t size() const { return owner_ ? view_size_ : bytes_.size(); }
  bool is_view() const { return owner_ != nullptr; }

 private:
  std::vector<uint8_t> bytes_;
  std::shared_ptr<const void> owner_;
  const uint8_t* view_ = nullptr;
  size_t view_size_ = 0;
};

enum class OperandKind : uint8_t { kInput, kConstant, kOutput /* produced by a node */ };

struct Operand {
  OperandDesc desc;
  OperandKind kind = OperandKind::kOutput;
  std::string name;                              // inputs and named constants
  std::shared_ptr<const ConstantData> constant;  // packed bytes (4-bit packed) for constants
  int32_t producer = -1;                         // node index for kOutput
};

struct Node {
  OpKind kind;
  std::string label;
  OpParams params;
  std::vector<OperandId> outputs;
  // Element-wise steps the compiler fused into this node (src/graph/passes/epilogue_fusion.cc),
  // applied in order to its value; outputs[0] is then the last step's result. Built graphs
  // never have any.
  struct Step;
  std::vector<Step> epilogue;
  // Set by the cpu backend's QDQ pass (src/graph/passes/qdq_fusion.cc): this conv2d/matmul reads
  // the quantized input itself and writes the quantized output, computing in integers. Built graphs
  // never have one.
  struct Quantized;
  std::shared_ptr<const Quantized> quantized = nullptr;
  // Set by the cpu backend's graph/passes/matmul_transposes.cc (float32 matmul only): the
  // matmul reads its operands, and writes its output, through axis permutations instead of the
  // transpose nodes the graph had around it. Built graphs never have one.
  struct Permuted;
  std::shared_ptr<const Permuted> permuted = nullptr;
  // Set by the cpu backend's graph/passes/depthwise_pointwise.cc (float32 NHWC 1x1 conv2d only):
  // the depthwise conv2d node, with its fused element-wise steps, whose value is this node's
  // input. The kernel computes that value band by band into a cache-resident buffer and feeds
  // it to the 1x1 product right away; it is never stored in memory (the operand is no node's
  // output). Built graphs never have one.
  std::shared_ptr<const Node> depthwise_input = nullptr;
  // Set by the same pass on such a depthwise stage only (the node held by depthwise_input): the
  // 1x1 expansion conv2d, with its fused element-wise steps, whose value is the depthwise's
  // input. The kernel computes its rows band by band too, so a whole inverted-residual block
  // (expansion, depthwise, projection) is one pass over memory. Built graphs never have one.
  std::shared_ptr<const Node> expansion_input = nullptr;

  std::vector<OperandId> inputs() const {
    std::vector<OperandId> ids;
    for_each_operand(params, [&](OperandRef r) { ids.push_back(r.id); });
    return ids;
  }
  template <class P>
  const P& as() const {
    return std::get<P>(params);
  }
};

// One fused element-wise step: the original node, and which of its operands carries the value
// of the previous step (the head's own result for the first step).
struct Node::Step {
  Node op;
  OperandId chain = -1;
};

// The integer form of a conv2d (or matmul) between quantize steps: with x the (u)int8 input and
// w, b the node's filter and bias (matmul: its constant b, no bias; float32 constants holding
// integers),
//   y = saturate(round_half_even(float(sum (x - input_zero_point) * w + b) * multiplier[c])
//                + output_zero_point)
// in the output's (u)int8 type; multiplier has one value per output channel (matmul: column)
// or one in all.
// A dynamically quantized LSTM direction (graph/passes/dynamic_quant_lstm.cc, on an lstm node
// with Node::Quantized::dynamic_lstm): `steps` steps of the unrolled form the ONNX importer
// gives com.microsoft DynamicQuantizeLSTM (python/webnn/onnx/ops/quantized_recurrent.py). Per
// step t: h quantized to uint8 over the whole state (ONNX Runtime's DynamicQuantizeLinear
// rule), the exact integer product (q - zp) * r plus ORT's u8s8 pair-saturation correction,
// scaled by h_scale * r_scale, added to row block t of the node's input (x W, scaled) and to
// the bias, then the LSTM cell in float32.
struct DynamicLstmForm {
  int64_t batch = 1, hidden = 1, steps = 1;
  int64_t first_t = 0;                 // the input's row block (t) of the first step run
  bool backward = false;               // t runs first_t, first_t - 1, ... (else upwards)
  int64_t gate_col[4] = {0, 0, 0, 0};  // columns of the i, o, f gates and the candidate g
  std::vector<int16_t> r;              // [hidden, 4 * hidden]: weights minus their zero point
  std::vector<float> r_scale;          // one value, or one per column
  std::vector<float> bias;             // empty, or one per column (added after the product)
  // The saturation correction (python/webnn/onnx/ops/ort_u8s8.py): per slot s < slots and
  // column n, p = q[idx0] * w0 + q[idx1] * w1 and clamp(p, -32768, 32767) - p is added.
  int64_t slots = 0;
  std::vector<int32_t> idx0, idx1, w0, w1;  // [slots, 4 * hidden]
  // The other direction of a bidirectional layer, run by the same node (independent of this
  // one): its x W, h and c are the node's weight, recurrent_bias and peephole_weight operands,
  // its outputs the node's outputs 3-5.
  std::shared_ptr<const DynamicLstmForm> paired;
};

struct Node::Quantized {
  int32_t input_zero_point = 0;
  std::vector<float> multiplier;
  int32_t output_zero_point = 0;
  bool requant_signed = false;  // the requantized value is int8 (else uint8)
  // Set by graph/passes/qdq_tables.cc: the output byte is table[c * 256 + requantized byte] for
  // output channel c (or table[byte] when it holds 256 entries): the element-wise region that
  // followed, tabulated. Empty: the requantized value is the output.
  std::vector<uint8_t> table;
  // Set by graph/passes/integer_matmul.cc (matmul only): the output is float32, y =
  // float(sum (x - input_zero_point) * w), no requantization (multiplier, output_zero_point
  // and table unused).
  bool float_output = false;
  // Set by graph/passes/integer_matmul.cc with float_output: the sum is ONNX Runtime's u8s8
  // one on x86 without VNNI (python/webnn/onnx/ops/ort_u8s8.py), sum over k pairs (2j, 2j + 1)
  // of int16-saturated pair sums, of the raw uint8 x (input_zero_point 0) by the int8 weights:
  // the graph's exact product plus the saturation correction the pass absorbed.
  bool u8s8_saturating = false;
  // Set by graph/passes/fake_quantize.cc (quantizeLinear only): the node also runs the
  // dequantizeLinear that read its value with the same zero point, and writes that float32
  // result; multiplier holds that dequantize's scale (of the quantize scale's shape),
  // requant_signed tells the (u)int8 type the value was quantized to. No other field is used.
  bool fake_quantize = false;
  // Set by graph/passes/dynamic_quant_lstm.cc (lstm only): the node runs this dynamically
  // quantized LSTM direction (no other field is used). Its input is the scaled x W product
  // [rows, 4 * hidden], its initial states the h and c entering the first step; outputs are
  // the last h and c [batch, hidden] and the steps' h in t order [steps, 1, batch, hidden].
  std::shared_ptr<const DynamicLstmForm> dynamic_lstm;
};

// A matmul's operand and output permutations (graph/passes/matmul_transposes.cc), each over
// the stored tensor's own axes and empty when it is read or written as stored: the matmul's
// a is transpose(stored a, a), its b transpose(stored b, b), and what it stores is
// transpose(its result, out). The last axis of a and of out stays last (rows are contiguous).
struct Node::Permuted {
  std::vector<int64_t> a, b, out;
};

struct NamedOperand {
  std::string name;
  OperandId id;
};

// A validated graph. Nodes are in topological order (builder order).
struct Graph {
  std::vector<Operand> operands;
  std::vector<Node> nodes;
  std::vector<OperandId> inputs;      // in creation order
  std::vector<NamedOperand> outputs;  // in the order given to build()

  const OperandDesc& desc(OperandId id) const { return operands[id].desc; }
};

}  // namespace webnn
