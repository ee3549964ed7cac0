// The fixed order of the passes: options made explicit, then folding (so fusion sees the folded
// convolutions), then layouts, then fusion; dead code between and last (rewrites leave producers of
// unused values).
#include <sstream>

#include "graph/passes/pass.h"

namespace webnn {

namespace {
bool cpu_only(std::string_view backend) { return backend == "cpu"; }
}  // namespace

const std::vector<Pass>& all_passes() {
  static const std::vector<Pass> passes = {
      {"dead_code", every_backend, remove_dead_code},
      // First: every later pass and kernel then sees the float16 graph's float32 form.
      {"float16_promotion", cpu_only, promote_float16},
      {"canonicalization", fast_backends, canonicalize},
      {"qdq_fusion", cpu_only, fuse_qdq},  // before folding turns quantized weights to float
      {"constant_folding", fast_backends, fold_constants},
      // After folding (a first step from a constant state is folded then, the run starts
      // after it), before integer_matmul and fusion change the steps' nodes.
      {"dynamic_quant_lstm", cpu_only, fuse_dynamic_quant_lstms},
      // After folding (weights folded from a dequantizeLinear are constants then).
      {"integer_matmul", cpu_only, fuse_integer_matmuls},
      // After folding (the regions' constants are folded then), before layouts and fusion.
      {"qdq_tables", cpu_only, fold_quantized_tables},
      // After qdq_tables (which reads the int32 index form), on the tables it left.
      {"byte_index_gathers", cpu_only, index_gathers_by_bytes},
      {"batch_norm_folding", fast_backends, fold_batch_norm},
      {"layout_assignment", cpu_only, assign_layouts},
      // The transposes layout assignment sank past are dead now; fusion needs exact use counts.
      {"dead_code", every_backend, remove_dead_code},
      // Before fusion: it merges only products without epilogues, and fusion then sees the
      // slices' readers as it saw the products'.
      {"shared_weight_products", cpu_only, merge_shared_weight_products},
      // After layouts (the pairs' parameters are permuted then), on the pairs the QDQ passes left.
      {"fake_quantize", cpu_only, fuse_fake_quantize},
      {"epilogue_fusion", cpu_only, fuse_epilogues},
      // After fusion: an output transpose folds only into a matmul without an epilogue.
      {"matmul_transposes", cpu_only, fold_matmul_transposes},
      // After layouts (whose transposes of one-channel or one-row values it turns into
      // reshapes the memory plan makes free) and after matmul_transposes (which folds such a
      // transpose into its matmul as well).
      {"unit_axis_transposes", cpu_only, reshape_unit_axis_transposes},
      // After epilogue fusion: the depthwise node moves with its fused activation.
      {"depthwise_pointwise", cpu_only, fuse_depthwise_pointwise},
      // On the depthwise stages depthwise_pointwise made.
      {"expansion_fusion", cpu_only, fuse_expansions},
      {"dead_code", every_backend, remove_dead_code},
  };
  return passes;
}

Expected<std::vector<const Pass*>> select_passes(std::string_view spec) {
  std::vector<const Pass*> out;
  if (spec.empty() || spec == "all") {
    for (const Pass& p : all_passes()) out.push_back(&p);
    return out;
  }
  std::vector<std::string> names;
  if (spec != "none") {
    std::stringstream ss{std::string(spec)};
    for (std::string name; std::getline(ss, name, ',');) {
      bool known = false;
      for (const Pass& p : all_passes()) known = known || name == p.name;
      if (!known) {
        std::string valid;
        for (const Pass& p : all_passes()) valid += std::string(valid.empty() ? "" : ", ") + p.name;
        return make_error(ErrorKind::kValue, "WEBNN_PASSES: unknown pass '", name,
                          "' (expected 'all', 'none' or a list of: ", valid, ")");
      }
      names.push_back(name);
    }
  }
  for (const Pass& p : all_passes()) {
    bool wanted = std::string_view(p.name) == "dead_code";
    for (const std::string& n : names) wanted = wanted || n == p.name;
    if (wanted) out.push_back(&p);
  }
  return out;
}

Expected<OptimizeReport> optimize(Graph& graph, std::string_view backend, std::string_view spec) {
  WEBNN_ASSIGN_OR_RETURN(std::vector<const Pass*> passes, select_passes(spec));
  OptimizeReport report;
  report.nodes_before = static_cast<int64_t>(graph.nodes.size());
  for (const Pass* p : passes) {
    if (!p->applies_to(backend)) continue;
    WEBNN_ASSIGN_OR_RETURN(int64_t n, p->run(graph));
    bool merged = false;
    for (PassCount& c : report.passes) {
      if (c.pass == p->name) c.rewrites += n, merged = true;
    }
    if (!merged) report.passes.push_back({p->name, n});
  }
  report.nodes_after = static_cast<int64_t>(graph.nodes.size());
  return report;
}

}  // namespace webnn
