// Infer for the recurrent family: gru, gruCell, lstm, lstmCell (spec/ops.md 3.12).
#include <initializer_list>
#include <string>
#include <vector>

#include "ops/infer.h"

namespace webnn {

namespace {

bool one_of(const std::string& s, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (s == a) return true;
  }
  return false;
}

Status check_enum(const InferContext& ctx, const std::string& value, const char* what,
                  std::initializer_list<const char*> allowed) {
  if (one_of(value, allowed)) return Status::ok();
  std::string list;
  for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
  return ctx.error(what, " \"", value, "\" is not one of ", list);
}

Status check_activations(const InferContext& ctx, const OptStringList& activations, size_t count) {
  if (!activations) return Status::ok();
  if (activations->size() != count) {
    return ctx.error("activations must have ", count, " entries (got ", activations->size(), ")");
  }
  for (const std::string& a : *activations) {
    WEBNN_RETURN_IF_ERROR(check_enum(ctx, a, "activation", {"relu", "sigmoid", "tanh"}));
  }
  return Status::ok();
}

// hidden_size must be positive and `factor * hidden_size` (the widest weight a backend may
// build for both directions) must still be a valid dimension.
Status check_hidden_size(const InferContext& ctx, int64_t hidden_size, int64_t factor) {
  if (hidden_size < 1) {
    return ctx.error("hidden_size must be greater than 0 (got ", hidden_size, ")");
  }
  if (hidden_size > kMaxDimension / factor) {
    return ctx.error("hidden_size ", hidden_size, " is too large: ", factor,
                     " * hidden_size is not a valid dimension");
  }
  return Status::ok();
}

// Same data type as `input` and exactly the shape `want` (dynamic dims match by name).
Status check_operand(const InferContext& ctx, OperandRef input, OperandRef r, const char* name,
                     const Shape& want) {
  if (!r.present()) return Status::ok();
  WEBNN_RETURN_IF_ERROR(check_same_type(ctx, input, "input", r, name));
  const Shape& got = ctx.desc(r).shape;
  if (got != want) {
    return ctx.error(name, " shape ", shape_to_string(got), " must be ", shape_to_string(want));
  }
  return Status::ok();
}

// The parts of the sequence ops (gru, lstm) shared by both: steps, direction, input sizes.
struct SequenceDims {
  int64_t directions;
  Dim batch;
  int64_t input_size;
};

Expected<SequenceDims> check_sequence(const InferContext& ctx, OperandRef input, int64_t steps,
                                      const std::string& direction) {
  WEBNN_RETURN_IF_ERROR(check_enum(ctx, direction, "direction", {"forward", "backward", "both"}));
  if (steps < 1) return ctx.error("steps must be greater than 0 (got ", steps, ")");
  const Shape& shape = ctx.desc(input).shape;
  WEBNN_ASSIGN_OR_RETURN(int64_t input_steps, require_static(ctx, shape[0], 0, "input"));
  if (input_steps != steps) {
    return ctx.error("input.shape[0] (", input_steps, ") must equal steps (", steps, ")");
  }
  WEBNN_ASSIGN_OR_RETURN(int64_t input_size, require_static(ctx, shape[2], 2, "input"));
  return SequenceDims{direction == "both" ? 2 : 1, shape[1], input_size};
}

InferResult infer_gru(const InferContext& ctx) {
  const auto& p = ctx.params<GruParams>();
  WEBNN_ASSIGN_OR_RETURN(SequenceDims s, check_sequence(ctx, p.input, p.steps, p.direction));
  WEBNN_RETURN_IF_ERROR(check_enum(ctx, p.layout, "layout", {"zrn", "rzn"}));
  WEBNN_RETURN_IF_ERROR(check_activations(ctx, p.activations, 2));
  WEBNN_RETURN_IF_ERROR(check_hidden_size(ctx, p.hidden_size, 6));
  const int64_t d = s.directions, h = p.hidden_size;
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.weight, "weight", {d, 3 * h, s.input_size}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.recurrent_weight, "recurrent_weight", {d, 3 * h, h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.bias, "bias", {d, 3 * h}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.recurrent_bias, "recurrent_bias", {d, 3 * h}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.initial_hidden_state, "initial_hidden_state", {d, s.batch, h}));
  DataType t = ctx.desc(p.input).data_type;
  std::vector<OperandDesc> out = {{t, {d, s.batch, h}}};
  if (p.return_sequence) out.push_back({t, {p.steps, d, s.batch, h}});
  return out;
}

InferResult infer_gru_cell(const InferContext& ctx) {
  const auto& p = ctx.params<GruCellParams>();
  WEBNN_RETURN_IF_ERROR(check_enum(ctx, p.layout, "layout", {"zrn", "rzn"}));
  WEBNN_RETURN_IF_ERROR(check_activations(ctx, p.activations, 2));
  WEBNN_RETURN_IF_ERROR(check_hidden_size(ctx, p.hidden_size, 6));
  const Shape& in = ctx.desc(p.input).shape;
  WEBNN_ASSIGN_OR_RETURN(int64_t input_size, require_static(ctx, in[1], 1, "input"));
  const int64_t h = p.hidden_size;
  const Dim batch = in[0];
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.weight, "weight", {3 * h, input_size}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.recurrent_weight, "recurrent_weight", {3 * h, h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.hidden_state, "hidden_state", {batch, h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.bias, "bias", {3 * h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.recurrent_bias, "recurrent_bias", {3 * h}));
  return std::vector<OperandDesc>{{ctx.desc(p.input).data_type, {batch, h}}};
}

InferResult infer_lstm(const InferContext& ctx) {
  const auto& p = ctx.params<LstmParams>();
  WEBNN_ASSIGN_OR_RETURN(SequenceDims s, check_sequence(ctx, p.input, p.steps, p.direction));
  WEBNN_RETURN_IF_ERROR(check_enum(ctx, p.layout, "layout", {"iofg", "ifgo"}));
  WEBNN_RETURN_IF_ERROR(check_activations(ctx, p.activations, 3));
  WEBNN_RETURN_IF_ERROR(check_hidden_size(ctx, p.hidden_size, 8));
  const int64_t d = s.directions, h = p.hidden_size;
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.weight, "weight", {d, 4 * h, s.input_size}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.recurrent_weight, "recurrent_weight", {d, 4 * h, h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.bias, "bias", {d, 4 * h}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.recurrent_bias, "recurrent_bias", {d, 4 * h}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.peephole_weight, "peephole_weight", {d, 3 * h}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.initial_hidden_state, "initial_hidden_state", {d, s.batch, h}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.initial_cell_state, "initial_cell_state", {d, s.batch, h}));
  DataType t = ctx.desc(p.input).data_type;
  std::vector<OperandDesc> out = {{t, {d, s.batch, h}}, {t, {d, s.batch, h}}};
  if (p.return_sequence) out.push_back({t, {p.steps, d, s.batch, h}});
  return out;
}

InferResult infer_lstm_cell(const InferContext& ctx) {
  const auto& p = ctx.params<LstmCellParams>();
  WEBNN_RETURN_IF_ERROR(check_enum(ctx, p.layout, "layout", {"iofg", "ifgo"}));
  WEBNN_RETURN_IF_ERROR(check_activations(ctx, p.activations, 3));
  WEBNN_RETURN_IF_ERROR(check_hidden_size(ctx, p.hidden_size, 8));
  const Shape& in = ctx.desc(p.input).shape;
  WEBNN_ASSIGN_OR_RETURN(int64_t input_size, require_static(ctx, in[1], 1, "input"));
  const int64_t h = p.hidden_size;
  const Dim batch = in[0];
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.weight, "weight", {4 * h, input_size}));
  WEBNN_RETURN_IF_ERROR(
      check_operand(ctx, p.input, p.recurrent_weight, "recurrent_weight", {4 * h, h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.hidden_state, "hidden_state", {batch, h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.cell_state, "cell_state", {batch, h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.bias, "bias", {4 * h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.recurrent_bias, "recurrent_bias", {4 * h}));
  WEBNN_RETURN_IF_ERROR(check_operand(ctx, p.input, p.peephole_weight, "peephole_weight", {3 * h}));
  DataType t = ctx.desc(p.input).data_type;
  return std::vector<OperandDesc>{{t, {batch, h}}, {t, {batch, h}}};
}

}  // namespace

void register_recurrent_schemas(SchemaTable& t) {
  const DataTypeMask f = kFloatTypes;
  set_schema(t, OpKind::kGru, infer_gru,
             {{"input", f, 3, 3},
              {"weight", f, 3, 3},
              {"recurrent_weight", f, 3, 3},
              {"bias", f, 2, 2},
              {"recurrent_bias", f, 2, 2},
              {"initial_hidden_state", f, 3, 3},
              {"output", f, 3, 4}});
  set_schema(t, OpKind::kGruCell, infer_gru_cell,
             {{"input", f, 2, 2},
              {"weight", f, 2, 2},
              {"recurrent_weight", f, 2, 2},
              {"hidden_state", f, 2, 2},
              {"bias", f, 1, 1},
              {"recurrent_bias", f, 1, 1},
              {"output", f, 2, 2}});
  set_schema(t, OpKind::kLstm, infer_lstm,
             {{"input", f, 3, 3},
              {"weight", f, 3, 3},
              {"recurrent_weight", f, 3, 3},
              {"bias", f, 2, 2},
              {"recurrent_bias", f, 2, 2},
              {"peephole_weight", f, 2, 2},
              {"initial_hidden_state", f, 3, 3},
              {"initial_cell_state", f, 3, 3},
              {"output", f, 3, 4}});
  set_schema(t, OpKind::kLstmCell, infer_lstm_cell,
             {{"input", f, 2, 2},
              {"weight", f, 2, 2},
              {"recurrent_weight", f, 2, 2},
              {"hidden_state", f, 2, 2},
              {"cell_state", f, 2, 2},
              {"bias", f, 1, 1},
              {"recurrent_bias", f, 1, 1},
              {"peephole_weight", f, 1, 1},
              {"output", f, 2, 2}});
}

}  // namespace webnn
