// Completeness: every operation of the op table has an Infer function, operand limits for
// every operand field and a reference kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/reference/reference_backend.h"
#include "ops/infer.h"

namespace webnn {
namespace {

struct OperandFieldCollector {
  std::vector<std::string> names;
  void operator()(const char* name, OperandRef&, unsigned = 0, const char* = nullptr) {
    names.push_back(name);
  }
  void operator()(const char* name, OperandList&, unsigned = 0, const char* = nullptr) {
    names.push_back(name);
  }
  template <class T>
  void operator()(const char*, T&, unsigned = 0, const char* = nullptr) {}
};

TEST(RegistryTest, EveryOperationIsComplete) {
  for (int i = 0; i < kOpCount; ++i) {
    auto kind = static_cast<OpKind>(i);
    SCOPED_TRACE(op_spec_name(kind));
    const OpSchema& schema = op_schema(kind);
    EXPECT_NE(schema.infer, nullptr);
    EXPECT_NE(schema.limit("output"), nullptr);
    OperandFieldCollector fields;
    visit_params(default_params(kind), fields);
    for (const std::string& name : fields.names) {
      EXPECT_NE(schema.limit(name), nullptr) << "no limit for operand " << name;
    }
    EXPECT_NE(reference_kernels()[i], nullptr);
  }
}

TEST(RegistryTest, NamesRoundTrip) {
  for (int i = 0; i < kOpCount; ++i) {
    auto kind = static_cast<OpKind>(i);
    EXPECT_EQ(op_from_spec_name(op_spec_name(kind)), kind);
  }
  EXPECT_FALSE(op_from_spec_name("convolution").has_value());
  EXPECT_STREQ(op_python_name(OpKind::kConvTranspose2d), "conv_transpose2d");
  EXPECT_STREQ(op_python_name(OpKind::kReduceLogSumExp), "reduce_log_sum_exp");
  EXPECT_TRUE(op_multi_output(OpKind::kSplit));
  EXPECT_FALSE(op_multi_output(OpKind::kGruCell));
}

std::vector<std::string> spec_names(const std::vector<OpKind>& kinds) {
  std::vector<std::string> names;
  for (OpKind k : kinds) names.push_back(op_spec_name(k));
  return names;
}

// Families against the section lists of spec/ops.md (written out here, not derived).
TEST(RegistryTest, FamiliesFollowTheSpecSections) {
  using V = std::vector<std::string>;
  EXPECT_EQ(spec_names(ops_in_family(OpFamily::kBinary)),
            (V{"add", "sub", "mul", "div", "max", "min", "pow"}));
  EXPECT_EQ(spec_names(ops_in_family(OpFamily::kComparison)),
            (V{"equal", "notEqual", "greater", "greaterOrEqual", "lesser", "lesserOrEqual"}));
  EXPECT_EQ(spec_names(ops_in_family(OpFamily::kLogical)),
            (V{"logicalAnd", "logicalOr", "logicalXor", "logicalNot"}));
  EXPECT_EQ(spec_names(ops_in_family(OpFamily::kPool2d)),
            (V{"averagePool2d", "l2Pool2d", "maxPool2d"}));
  EXPECT_EQ(spec_names(ops_in_family(OpFamily::kArgMinMax)), (V{"argMin", "argMax"}));
  V unary = spec_names(elementwise_unary_ops());
  std::sort(unary.begin(), unary.end());
  EXPECT_EQ(unary, (V{"abs",      "ceil", "cos",      "erf",        "exp",  "floor",     "gelu",
                      "identity", "log",  "neg",      "reciprocal", "relu", "roundEven", "sigmoid",
                      "sign",     "sin",  "softplus", "softsign",   "sqrt", "tan",       "tanh"}));
  // Every reduce* op is a reduction, and nothing else is.
  size_t reductions = 0;
  for (int i = 0; i < kOpCount; ++i) {
    auto kind = static_cast<OpKind>(i);
    bool is_reduce = std::string(op_spec_name(kind)).rfind("reduce", 0) == 0;
    EXPECT_EQ(op_family(kind) == OpFamily::kReduction, is_reduce) << op_spec_name(kind);
    reductions += is_reduce;
  }
  EXPECT_EQ(ops_in_family(OpFamily::kReduction).size(), reductions);
  EXPECT_EQ(reductions, 10u);
}

}  // namespace
}  // namespace webnn
