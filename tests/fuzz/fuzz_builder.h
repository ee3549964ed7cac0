// The builder fuzz target: bytes -> inputs, constants and a short op sequence with random
// options through GraphBuilder; graphs that build run on cpu and reference and must agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace webnn::fuzz {

std::string run_builder(const uint8_t* data, size_t size);

}  // namespace webnn::fuzz
