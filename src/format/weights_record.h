// The record that pairs a saved graph with its weights sidecar (docs/text_format.md, "Weights
// record"). save_graph writes it as the first line of the graph file, a comment to every other
// reader:
//
//   # webnn-weights: bytes=1234 sha256=<64 hex digits>
//
// It describes the sidecar save writes, `<stem>.safetensors` next to the graph (so a renamed
// pair keeps working): `bytes` is its size and `sha256` the digest of its data section, which
// the sidecar also carries in its `__metadata__`. The graph and the sidecar are renamed into place
// one after the other, so a save killed in between leaves a new file next to an old one: the loader
// then refuses the pair instead of running a graph with another save's weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "webnn/status.h"

namespace webnn::format {

struct WeightsRecord {
  uint64_t bytes = 0;
  std::string sha256;
};

// The SafeTensors `__metadata__` key holding the digest of the data section.
inline constexpr const char* kSha256MetadataKey = "webnn.sha256";

// The record line, LF-terminated.
std::string format_weights_record(const WeightsRecord& record);

// The record on the first line of `source` (after a BOM), nullopt when there is none. A first
// line that starts like a record but does not parse is an error (kIo) naming `path`.
Expected<std::optional<WeightsRecord>> parse_weights_record(std::string_view source,
                                                            const std::string& path);

}  // namespace webnn::format
