#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "webnn/builder.h"

namespace webnn {
namespace {

// steps = 2, batch = 3, input_size = 4, hidden_size = 5 unless a test says otherwise.
constexpr int64_t kSteps = 2, kBatch = 3, kIn = 4, kH = 5;

class RecurrentInferTest : public ::testing::Test {
 protected:
  OperandRef in(const Shape& shape, DataType t = DataType::kFloat32) {
    auto id = b_.input("x" + std::to_string(next_++), shape, t);
    EXPECT_TRUE(id.has_value()) << id.status().message();
    return OperandRef{*id};
  }
  OperandDesc desc(OperandId id) { return *b_.operand_desc(id); }

  GruParams gru(int64_t dirs = 1) {
    GruParams p;
    p.input = in({kSteps, kBatch, kIn});
    p.weight = in({dirs, 3 * kH, kIn});
    p.recurrent_weight = in({dirs, 3 * kH, kH});
    p.steps = kSteps;
    p.hidden_size = kH;
    if (dirs == 2) p.direction = "both";
    return p;
  }
  GruCellParams gru_cell() {
    GruCellParams p;
    p.input = in({kBatch, kIn});
    p.weight = in({3 * kH, kIn});
    p.recurrent_weight = in({3 * kH, kH});
    p.hidden_state = in({kBatch, kH});
    p.hidden_size = kH;
    return p;
  }
  LstmParams lstm(int64_t dirs = 1) {
    LstmParams p;
    p.input = in({kSteps, kBatch, kIn});
    p.weight = in({dirs, 4 * kH, kIn});
    p.recurrent_weight = in({dirs, 4 * kH, kH});
    p.steps = kSteps;
    p.hidden_size = kH;
    if (dirs == 2) p.direction = "both";
    return p;
  }
  LstmCellParams lstm_cell() {
    LstmCellParams p;
    p.input = in({kBatch, kIn});
    p.weight = in({4 * kH, kIn});
    p.recurrent_weight = in({4 * kH, kH});
    p.hidden_state = in({kBatch, kH});
    p.cell_state = in({kBatch, kH});
    p.hidden_size = kH;
    return p;
  }

  // Expects a ValueError whose message contains every fragment.
  template <class P>
  void expect_error(OpKind kind, const P& p, std::vector<std::string> fragments) {
    auto r = b_.add_op(kind, p, "rnn");
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.status().kind(), ErrorKind::kValue) << r.status().message();
    for (const std::string& f : fragments) {
      EXPECT_NE(r.status().message().find(f), std::string::npos)
          << "'" << f << "' not in: " << r.status().message();
    }
  }

  GraphBuilder b_;
  int next_ = 0;
};

TEST_F(RecurrentInferTest, GruDefaultReturnsHiddenOnly) {
  auto r = b_.add_op(OpKind::kGru, gru());
  ASSERT_TRUE(r.has_value()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(desc((*r)[0]), (OperandDesc{DataType::kFloat32, {1, kBatch, kH}}));
}

TEST_F(RecurrentInferTest, GruBothDirectionsWithSequence) {
  GruParams p = gru(2);
  p.return_sequence = true;
  p.bias = in({2, 3 * kH});
  p.recurrent_bias = in({2, 3 * kH});
  p.initial_hidden_state = in({2, kBatch, kH});
  p.layout = "rzn";
  p.reset_after = false;
  p.activations = std::vector<std::string>{"relu", "tanh"};
  auto r = b_.add_op(OpKind::kGru, p);
  ASSERT_TRUE(r.has_value()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(desc((*r)[0]).shape, (Shape{2, kBatch, kH}));
  EXPECT_EQ(desc((*r)[1]).shape, (Shape{kSteps, 2, kBatch, kH}));
}

TEST_F(RecurrentInferTest, GruFloat16) {
  GruParams p;
  p.input = in({1, 2, 3}, DataType::kFloat16);
  p.weight = in({1, 6, 3}, DataType::kFloat16);
  p.recurrent_weight = in({1, 6, 2}, DataType::kFloat16);
  p.steps = 1;
  p.hidden_size = 2;
  auto r = b_.add_op(OpKind::kGru, p);
  ASSERT_TRUE(r.has_value()) << r.status().message();
  EXPECT_EQ(desc((*r)[0]), (OperandDesc{DataType::kFloat16, {1, 2, 2}}));
}

TEST_F(RecurrentInferTest, GruDynamicBatchPassesThrough) {
  const Dim batch("batch", 8);
  GruParams p = gru();
  p.input = in({kSteps, batch, kIn});
  p.initial_hidden_state = in({1, batch, kH});
  p.return_sequence = true;
  auto r = b_.add_op(OpKind::kGru, p);
  ASSERT_TRUE(r.has_value()) << r.status().message();
  EXPECT_EQ(desc((*r)[0]).shape, (Shape{1, batch, kH}));
  EXPECT_EQ(desc((*r)[1]).shape, (Shape{kSteps, 1, batch, kH}));
}

TEST_F(RecurrentInferTest, GruDynamicStepsOrFeaturesRejected) {
  GruParams p = gru();
  p.input = in({Dim("seq", 2), kBatch, kIn});
  expect_error(OpKind::kGru, p, {"gru 'rnn'", "dynamic dimension 'seq'", "axis 0"});
  p = gru();
  p.input = in({kSteps, kBatch, Dim("feat", 4)});
  expect_error(OpKind::kGru, p, {"dynamic dimension 'feat'", "axis 2"});
}

TEST_F(RecurrentInferTest, GruInitialStateBatchMustMatchDynamicBatch) {
  GruParams p = gru();
  p.input = in({kSteps, Dim("batch", 3), kIn});
  p.initial_hidden_state = in({1, kBatch, kH});
  expect_error(OpKind::kGru, p, {"initial_hidden_state shape", "must be"});
}

TEST_F(RecurrentInferTest, GruStepsRules) {
  GruParams p = gru();
  p.steps = 3;
  expect_error(OpKind::kGru, p, {"input.shape[0] (2)", "steps (3)"});
  p = gru();
  p.steps = 0;
  expect_error(OpKind::kGru, p, {"steps must be greater than 0", "got 0"});
}

TEST_F(RecurrentInferTest, GruHiddenSizeRules) {
  GruParams p = gru();
  p.hidden_size = 0;
  expect_error(OpKind::kGru, p, {"hidden_size must be greater than 0"});
  p = gru();
  p.hidden_size = kMaxDimension / 6 + 1;
  expect_error(OpKind::kGru, p, {"6 * hidden_size is not a valid dimension"});
}

TEST_F(RecurrentInferTest, GruEnumsAndActivations) {
  GruParams p = gru();
  p.direction = "sideways";
  expect_error(OpKind::kGru, p, {"direction \"sideways\"", "\"both\""});
  p = gru();
  p.layout = "iofg";
  expect_error(OpKind::kGru, p, {"layout \"iofg\"", "\"zrn\", \"rzn\""});
  p = gru();
  p.activations = std::vector<std::string>{"sigmoid", "tanh", "relu"};
  expect_error(OpKind::kGru, p, {"activations must have 2 entries (got 3)"});
  p = gru();
  p.activations = std::vector<std::string>{"sigmoid", "softmax"};
  expect_error(OpKind::kGru, p, {"activation \"softmax\""});
}

TEST_F(RecurrentInferTest, GruShapeMismatches) {
  GruParams p = gru();
  p.weight = in({1, 4 * kH, kIn});
  expect_error(OpKind::kGru, p, {"weight shape [1,20,4]", "must be [1,15,4]"});
  p = gru();
  p.weight = in({1, 3 * kH, kIn + 1});
  expect_error(OpKind::kGru, p, {"weight shape"});
  p = gru(2);
  p.direction = "forward";
  expect_error(OpKind::kGru, p, {"weight shape [2,15,4]"});
  p = gru();
  p.recurrent_weight = in({1, 3 * kH, kIn});
  expect_error(OpKind::kGru, p, {"recurrent_weight shape"});
  p = gru();
  p.bias = in({3 * kH, 1});
  expect_error(OpKind::kGru, p, {"bias shape [15,1]", "must be [1,15]"});
  p = gru();
  p.recurrent_bias = in({1, 4 * kH});
  expect_error(OpKind::kGru, p, {"recurrent_bias shape"});
  p = gru();
  p.initial_hidden_state = in({2, kBatch, kH});
  expect_error(OpKind::kGru, p, {"initial_hidden_state shape"});
}

TEST_F(RecurrentInferTest, GruTypeAndRankRules) {
  GruParams p = gru();
  p.bias = in({1, 3 * kH}, DataType::kFloat16);
  expect_error(OpKind::kGru, p, {"bias data type float16", "input data type float32"});
  p = gru();
  p.input = in({kSteps, kBatch, kIn}, DataType::kInt32);
  expect_error(OpKind::kGru, p, {"input data type int32 is not supported"});
  p = gru();
  p.input = in({kSteps, kBatch * kIn});
  expect_error(OpKind::kGru, p, {"input rank must be in [3, 3]"});
  p = gru();
  p.bias = in({3 * kH});
  expect_error(OpKind::kGru, p, {"bias rank"});
}

TEST_F(RecurrentInferTest, GruCellShapes) {
  GruCellParams p = gru_cell();
  p.bias = in({3 * kH});
  p.recurrent_bias = in({3 * kH});
  auto r = b_.add_op(OpKind::kGruCell, p);
  ASSERT_TRUE(r.has_value()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(desc((*r)[0]), (OperandDesc{DataType::kFloat32, {kBatch, kH}}));

  const Dim batch("n", 4);
  p = gru_cell();
  p.input = in({batch, kIn});
  p.hidden_state = in({batch, kH});
  r = b_.add_op(OpKind::kGruCell, p);
  ASSERT_TRUE(r.has_value()) << r.status().message();
  EXPECT_EQ(desc((*r)[0]).shape, (Shape{batch, kH}));
}

TEST_F(RecurrentInferTest, GruCellRejections) {
  GruCellParams p = gru_cell();
  p.input = in({kIn, kIn});
  expect_error(OpKind::kGruCell, p, {"hidden_state shape [3,5]", "must be [4,5]"});
  p = gru_cell();
  p.weight = in({4 * kH, kIn});
  expect_error(OpKind::kGruCell, p, {"weight shape [20,4]"});
  p = gru_cell();
  p.recurrent_weight = in({4 * kH, kIn});
  expect_error(OpKind::kGruCell, p, {"recurrent_weight shape"});
  p = gru_cell();
  p.hidden_state = in({kBatch, 3 * kH});
  expect_error(OpKind::kGruCell, p, {"hidden_state shape"});
  p = gru_cell();
  p.bias = in({2 * kH});
  expect_error(OpKind::kGruCell, p, {"bias shape [10]"});
  p = gru_cell();
  p.recurrent_bias = in({kBatch, 3 * kH});
  expect_error(OpKind::kGruCell, p, {"recurrent_bias rank"});
  p = gru_cell();
  p.hidden_size = 0;
  expect_error(OpKind::kGruCell, p, {"hidden_size must be greater than 0"});
  p = gru_cell();
  p.hidden_size = 4294967295;
  expect_error(OpKind::kGruCell, p, {"not a valid dimension"});
  p = gru_cell();
  p.activations = std::vector<std::string>{"sigmoid"};
  expect_error(OpKind::kGruCell, p, {"activations must have 2 entries (got 1)"});
  p = gru_cell();
  p.layout = "ZRN";
  expect_error(OpKind::kGruCell, p, {"layout \"ZRN\""});
  p = gru_cell();
  p.input = in({kBatch, Dim("feat", kIn)});
  expect_error(OpKind::kGruCell, p, {"dynamic dimension 'feat'", "axis 1"});
  p = gru_cell();
  p.hidden_state = in({kBatch, kH}, DataType::kFloat16);
  expect_error(OpKind::kGruCell, p, {"hidden_state data type float16"});
}

TEST_F(RecurrentInferTest, LstmOutputs) {
  auto r = b_.add_op(OpKind::kLstm, lstm());
  ASSERT_TRUE(r.has_value()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(desc((*r)[0]).shape, (Shape{1, kBatch, kH}));
  EXPECT_EQ(desc((*r)[1]).shape, (Shape{1, kBatch, kH}));

  LstmParams p = lstm(2);
  p.return_sequence = true;
  p.bias = in({2, 4 * kH});
  p.recurrent_bias = in({2, 4 * kH});
  p.peephole_weight = in({2, 3 * kH});
  p.initial_hidden_state = in({2, kBatch, kH});
  p.initial_cell_state = in({2, kBatch, kH});
  p.layout = "ifgo";
  p.activations = std::vector<std::string>{"sigmoid", "relu", "tanh"};
  r = b_.add_op(OpKind::kLstm, p);
  ASSERT_TRUE(r.has_value()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ(desc((*r)[0]).shape, (Shape{2, kBatch, kH}));
  EXPECT_EQ(desc((*r)[1]).shape, (Shape{2, kBatch, kH}));
  EXPECT_EQ(desc((*r)[2]).shape, (Shape{kSteps, 2, kBatch, kH}));
}

TEST_F(RecurrentInferTest, LstmRejections) {
  LstmParams p = lstm();
  p.steps = 1;
  expect_error(OpKind::kLstm, p, {"lstm 'rnn'", "steps (1)"});
  p = lstm();
  p.steps = 0;
  expect_error(OpKind::kLstm, p, {"steps must be greater than 0"});
  p = lstm();
  p.hidden_size = kMaxDimension / 8 + 1;
  expect_error(OpKind::kLstm, p, {"8 * hidden_size"});
  p = lstm();
  p.weight = in({1, 3 * kH, kIn});
  expect_error(OpKind::kLstm, p, {"weight shape [1,15,4]", "must be [1,20,4]"});
  p = lstm();
  p.peephole_weight = in({1, 4 * kH});
  expect_error(OpKind::kLstm, p, {"peephole_weight shape [1,20]", "must be [1,15]"});
  p = lstm();
  p.initial_cell_state = in({1, kBatch + 1, kH});
  expect_error(OpKind::kLstm, p, {"initial_cell_state shape"});
  p = lstm();
  p.layout = "zrn";
  expect_error(OpKind::kLstm, p, {"layout \"zrn\""});
  p = lstm();
  p.activations = std::vector<std::string>{"sigmoid", "tanh"};
  expect_error(OpKind::kLstm, p, {"activations must have 3 entries (got 2)"});
  p = lstm();
  p.direction = "Both";
  expect_error(OpKind::kLstm, p, {"direction \"Both\""});
  p = lstm();
  p.input = in({Dim("t", 2), kBatch, kIn});
  expect_error(OpKind::kLstm, p, {"dynamic dimension 't'"});
}

TEST_F(RecurrentInferTest, LstmCellOutputsAndRejections) {
  LstmCellParams p = lstm_cell();
  p.peephole_weight = in({3 * kH});
  auto r = b_.add_op(OpKind::kLstmCell, p);
  ASSERT_TRUE(r.has_value()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(desc((*r)[0]), (OperandDesc{DataType::kFloat32, {kBatch, kH}}));
  EXPECT_EQ(desc((*r)[1]), (OperandDesc{DataType::kFloat32, {kBatch, kH}}));

  p = lstm_cell();
  p.cell_state = in({kBatch, kH + 1});
  expect_error(OpKind::kLstmCell, p, {"cell_state shape [3,6]", "must be [3,5]"});
  p = lstm_cell();
  p.peephole_weight = in({4 * kH});
  expect_error(OpKind::kLstmCell, p, {"peephole_weight shape [20]"});
  p = lstm_cell();
  p.bias = in({3 * kH});
  expect_error(OpKind::kLstmCell, p, {"bias shape [15]", "must be [20]"});
  p = lstm_cell();
  p.recurrent_weight = in({4 * kH, kIn});
  expect_error(OpKind::kLstmCell, p, {"recurrent_weight shape"});
  p = lstm_cell();
  p.weight = in({4 * kH, kIn}, DataType::kFloat16);
  expect_error(OpKind::kLstmCell, p, {"weight data type float16"});
  p = lstm_cell();
  p.activations = std::vector<std::string>{"relu", "relu", "gelu"};
  expect_error(OpKind::kLstmCell, p, {"activation \"gelu\""});
  p = lstm_cell();
  p.hidden_size = 0;
  expect_error(OpKind::kLstmCell, p, {"hidden_size must be greater than 0"});
  p = lstm_cell();
  p.input = in({kBatch, kIn}, DataType::kUint8);
  expect_error(OpKind::kLstmCell, p, {"input data type uint8 is not supported"});
}

}  // namespace
}  // namespace webnn
