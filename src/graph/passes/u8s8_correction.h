// Recognises the importer's emulation of ONNX Runtime's u8s8 pair saturation
// (python/webnn/onnx/ops/ort_u8s8.py), so that the integer passes can drop it and let the cpu
// kernels' pair-saturating tiles compute the same sums (Node::Quantized::u8s8_saturating).
#pragma once

#include <cstdint>
#include <vector>

#include "webnn/graph.h"

namespace webnn {

// The (u)int8 operand x when `id` is cast(x -> float32), else -1.
OperandId u8s8_cast_source(const Graph& g, OperandId id);

// Whether `fix` is ort_u8s8.py's correction(raw, w) of the product of x (uint8, or int8 that
// ORT shifts to uint8: raw = cast(x) + 128) by the k x n weights w: the pairs' products gathered
// from raw along its last axis ([..., slots, n]), clamped to int16, minus themselves, summed
// over the slots (or reshaped for one slot), with tables listing each of w's pairs
// (2j, 2j + 1) that can saturate exactly once with its weights (the same rule as
// cpu/dynamic_lstm.cc slots_are_saturation).
bool is_u8s8_matmul_correction(const Graph& g, OperandId fix, OperandId x, const float* w,
                               int64_t k, int64_t n);

// Whether `fix` is ort_u8s8.py's conv_correction for the conv2d `conv` (NCHW, filter oihw with
// the float32 values w) whose input is x - x_zp: a conv2d with the same geometry of that same
// input (or of a reshape of the same value, for a 1-D convolution) by one filter per pair slot
// of every output channel, its bias the slot's weight sum times raw_zero (ORT pads with the
// zero point), reshaped to [N, O, slots, spatial...], clamped to int16, minus itself, summed
// over the slots. The slots must list exactly the pairs (2j, 2j + 1) of each channel's weights
// in ORT's reduction order (kernel position, then input channel) that can saturate.
bool is_u8s8_conv_correction(const Graph& g, OperandId fix, const Node& conv, const float* w,
                             int32_t raw_zero);

}  // namespace webnn
