// The activations of the recurrent ops (lstm, lstmCell, gru, gruCell) in double: one definition
// for the reference kernel (reference/recurrent.cc) and the cpu kernel (cpu/recurrent.cc), whose
// results must stay bit-identical to the reference's.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace webnn {

enum class RecurrentActivation { kRelu, kSigmoid, kTanh };

// The op's `activations` option as a list; nullopt when a name is not one of the three (Infer
// has rejected it before any kernel sees it) or the count differs from the defaults'.
inline std::optional<std::vector<RecurrentActivation>> parse_recurrent_activations(
    const std::optional<std::vector<std::string>>& names,
    std::vector<RecurrentActivation> defaults) {
  if (!names) return defaults;
  if (names->size() != defaults.size()) return std::nullopt;
  std::vector<RecurrentActivation> out;
  for (const std::string& n : *names) {
    if (n == "relu") {
      out.push_back(RecurrentActivation::kRelu);
    } else if (n == "sigmoid") {
      out.push_back(RecurrentActivation::kSigmoid);
    } else if (n == "tanh") {
      out.push_back(RecurrentActivation::kTanh);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

inline double apply_recurrent_activation(RecurrentActivation a, double x) {
  switch (a) {
    case RecurrentActivation::kRelu:
      return x > 0 ? x : 0.0;
    case RecurrentActivation::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case RecurrentActivation::kTanh:
      return std::tanh(x);
  }
  return x;
}

}  // namespace webnn
