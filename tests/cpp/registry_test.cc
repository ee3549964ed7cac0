// Completeness: every operation of the op table has an Infer function, operand limits for
// every operand field and a reference kernel.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace webnn
