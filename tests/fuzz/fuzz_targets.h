// One function per fuzz target, shared by the libFuzzer entry points (tests/fuzz/*_fuzzer.cc)
// and the regression test that replays tests/data/fuzz_regressions/<target>/* under gtest.
//
// Each returns "" when the input was handled correctly (accepted, or rejected with a proper
// error), otherwise a description of the finding: an internal error reachable from input, a
// message that echoes raw bytes, a round trip that changes the graph, or cpu and reference
// results that disagree. Crashes and sanitizer reports are findings by themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "webnn/status.h"

namespace webnn::fuzz {

// A `.webnn` text file: parse, load through GraphBuilder, print and reload.
std::string text_parser(const uint8_t* data, size_t size);
// A `webnn-graph-json` file: the same checks.
std::string json_graph(const uint8_t* data, size_t size);
// A manifest.json + `.weights` blob pair: open, then load every tensor it describes.
// Input layout: 2-byte little-endian manifest length, the manifest, then the blob.
std::string weights_manifest(const uint8_t* data, size_t size);
// A `.safetensors` file: open, then load every tensor with its stored dtype and shape.
std::string safetensors(const uint8_t* data, size_t size);
// Random op sequences with random options through GraphBuilder; a graph that builds is
// dispatched on the cpu and reference backends and their results compared.
std::string builder(const uint8_t* data, size_t size);

// "" for a proper rejection; a finding for an internal error or a message with raw bytes
// (control characters, invalid UTF-8). `what` names the call that failed.
std::string check_status(const Status& s, const char* what);

// Runs the target called `name` ("text_parser", ...); "unknown target" for other names.
std::string run_target(const std::string& name, const uint8_t* data, size_t size);

}  // namespace webnn::fuzz
