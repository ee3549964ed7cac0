// Node patterns the cpu convolution fusions look for (graph/passes/depthwise_pointwise.cc,
// expansion_fusion.cc): NHWC float32 1x1 and depthwise conv2d nodes with finite constant
// filters and unary fused steps, and intermediates read by one node only.
#pragma once

#include <vector>

#include "webnn/graph.h"

namespace webnn {

// A 1x1 conv2d, stride 1, no padding, one group, NHWC, float32, finite constant filter, no
// other fusion in it.
bool is_fusable_pointwise(const Graph& graph, const Node& n);

// A strided conv2d (any filter size, padding and dilation), one group, NHWC, float32, finite
// constant filter, no other fusion in it: a stem. (Stride 1 3x3 convs may run on the cpu's
// Winograd kernel, whose values a band-by-band direct product would not reproduce.)
bool is_fusable_strided_conv(const Graph& graph, const Node& n);

// A depthwise conv2d (groups == channels, one filter per channel), NHWC, float32, finite
// constant filter, whose fused steps (if any) are unary vector ops applied one after another.
bool is_fusable_depthwise(const Graph& graph, const Node& n);

// The node's fused steps (if any) are unary vector ops applied one after another, ending in a
// static float32 value.
bool unary_chain(const Graph& graph, const Node& n);

// The node producing `v` if `v` is an intermediate read once (by the node at `reader`, per
// `uses`), built before it and not marked `dead` (taken by another fusion): else -1.
int32_t sole_producer(const Graph& graph, const std::vector<int>& uses,
                      const std::vector<bool>& dead, OperandId v, size_t reader);

}  // namespace webnn
