// Binds every operation of include/webnn/op_table.def as an MLGraphBuilder method. Argument
// names, order, defaults and the Python signature all come from the params' visit().
#pragma once

#include <nanobind/nanobind.h>

#include "objects.h"

namespace webnn::py {

namespace nb = nanobind;

void bind_operations(nb::class_<BuilderHandle>& cls);
// The Python signature text of an operation ("def add(self, a: MLOperand, ...) -> MLOperand").
std::string op_signature(OpKind kind, const char* python_name);
// Checks that an operand argument was created by this builder.
OperandId operand_id(const BuilderHandle& self, nb::handle value, const std::string& what);
void check_builder_usable(const BuilderHandle& self);

}  // namespace webnn::py
