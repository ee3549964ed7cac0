// Files from strangers (issue 8): the saved graph/weights pair is verifiable, error messages
// name positions and sizes but never echo raw bytes, keys are never paths, and the Hugging Face
// cache layout (snapshot files symlinked into ../../blobs) loads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "format/sha256.h"
#include "format/weights_record.h"
#include "temp_files.h"
#include "webnn/builder.h"
#include "webnn/format.h"

namespace webnn {
namespace {

namespace fs = std::filesystem;

// y = x + w with w = {v, v, v}: two saves with different v are structurally identical.
Graph add_graph(float v) {
  GraphBuilder b;
  OperandId x = *b.input("x", {Dim(3)}, DataType::kFloat32);
  std::vector<uint8_t> bytes(12);
  for (int k = 0; k < 3; ++k) std::memcpy(bytes.data() + 4 * k, &v, 4);
  OperandId w = *b.constant({DataType::kFloat32, {Dim(3)}}, bytes);
  OperandId y = (*b.add_op(OpKind::kAdd, BinaryParams{{x}, {w}}))[0];
  return *b.extract({{"y", y}});
}

float first_weight(const Graph& g) {
  for (const Operand& op : g.operands) {
    if (op.kind == OperandKind::kConstant) {
      float v;
      std::memcpy(&v, op.constant->data(), 4);
      return v;
    }
  }
  return -1;
}

TEST(Sha256Test, KnownDigests) {
  auto digest = [](const std::string& s) {
    format::Sha256 h;
    h.update(s.data(), s.size());
    return h.hex_digest();
  };
  EXPECT_EQ(digest(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Fed in uneven pieces, across block boundaries.
  format::Sha256 h;
  std::string a(1000, 'a');
  for (int k = 0; k < 1000; ++k) h.update(a.data(), a.size());
  EXPECT_EQ(h.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(WeightsRecordTest, SaveRecordsItsSidecarAndLoadChecksIt) {
  TempDir dir;
  ASSERT_TRUE(save_graph(add_graph(1.5f), dir.file("m.webnn")).is_ok());
  std::string text = read_bytes(dir.file("m.webnn"));
  std::string sidecar = read_bytes(dir.file("m.safetensors"));
  ASSERT_EQ(text.rfind("# webnn-weights: bytes=" + std::to_string(sidecar.size()) + " sha256=", 0),
            0u)
      << text;
  auto loaded = load_graph_file(dir.file("m.webnn"));
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  EXPECT_EQ(first_weight(*loaded), 1.5f);

  // The sidecar of another save with the same layout: refused, not silently used.
  ASSERT_TRUE(save_graph(add_graph(2.5f), dir.file("other.webnn")).is_ok());
  std::string other = read_bytes(dir.file("other.safetensors"));
  ASSERT_EQ(other.size(), sidecar.size());
  write_file(dir.file("m.safetensors"), other);
  auto mixed = load_graph_file(dir.file("m.webnn"));
  ASSERT_FALSE(mixed.has_value());
  EXPECT_EQ(mixed.status().kind(), ErrorKind::kIo);
  EXPECT_NE(mixed.status().message().find("is not the weights file saved with"), std::string::npos)
      << mixed.status().message();

  // Truncated or grown sidecars: the size names both numbers.
  write_file(dir.file("m.safetensors"), sidecar + "xxxx");
  std::string grown = load_graph_file(dir.file("m.webnn")).status().message();
  EXPECT_NE(grown.find(std::to_string(sidecar.size() + 4) + " bytes, the graph records " +
                       std::to_string(sidecar.size())),
            std::string::npos)
      << grown;
  fs::remove(dir.file("m.safetensors"));
  std::string missing = load_graph_file(dir.file("m.webnn")).status().message();
  EXPECT_NE(missing.find("which is missing"), std::string::npos) << missing;

  // A pair renamed together still loads: the record does not name the file.
  write_file(dir.file("m.safetensors"), sidecar);
  fs::rename(dir.file("m.webnn"), dir.file("n.webnn"));
  fs::rename(dir.file("m.safetensors"), dir.file("n.safetensors"));
  // A model.safetensors next to it does not shadow the graph's own sidecar.
  write_file(dir.file("model.safetensors"), other);
  auto renamed = load_graph_file(dir.file("n.webnn"));
  ASSERT_TRUE(renamed.has_value()) << renamed.status().message();
  EXPECT_EQ(first_weight(*renamed), 1.5f);

  // A hand-edited graph without the record follows format.md §9.4 as before.
  write_file(dir.file("n.webnn"), text.substr(text.find('\n') + 1));
  auto unrecorded = load_graph_file(dir.file("n.webnn"));
  ASSERT_TRUE(unrecorded.has_value()) << unrecorded.status().message();
  EXPECT_EQ(first_weight(*unrecorded), 2.5f);  // model.safetensors comes first in §9.4
}

TEST(WeightsRecordTest, MalformedRecordsAreErrors) {
  for (const char* line :
       {"# webnn-weights: bytes=12\n", "# webnn-weights: bytes=x sha256=00\n",
        "# webnn-weights: "
        "sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n",
        "# webnn-weights: bytes=1 "
        "sha256=E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855\n",
        "# webnn-weights: bytes=1 "
        "sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 x\n"}) {
    auto r = format::parse_weights_record(line, "g.webnn");
    ASSERT_FALSE(r.has_value()) << line;
    EXPECT_NE(r.status().message().find("g.webnn:1:1: malformed weights record"), std::string::npos)
        << r.status().message();
  }
  // An ordinary comment is no record.
  auto none = format::parse_weights_record("# webnn-weights are great\n", "g.webnn");
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
}

// The message with the temporary directory written as <dir>: its random name could contain the
// very bytes a test checks are not echoed.
std::string load_error(const std::string& path) {
  auto g = load_graph_file(path);
  std::string msg = g.has_value() ? "(loaded)" : g.status().message();
  const std::string dir = fs::path(path).parent_path().string();
  for (size_t at = msg.find(dir); at != std::string::npos; at = msg.find(dir)) {
    msg.replace(at, dir.size(), "<dir>");
  }
  return msg;
}

TEST(HostileFilesTest, MessagesNameSizesAndPositionsNotRawBytes) {
  TempDir dir;
  const std::string graph =
      "webnn_graph \"g\" v2 {\n  inputs { x: f32[2]; }\n  consts { w: f32[2]; }\n"
      "  nodes { y = add(x, w); }\n  outputs { y; }\n}\n";
  write_file(dir.file("g.webnn"), graph);
  // A zip archive saved as .safetensors: its first 8 bytes are not a length worth printing.
  write_file(dir.file("g.safetensors"), std::string("PK\x03\x04\x14\x00\x08\x00rest", 12));
  std::string msg = load_error(dir.file("g.webnn"));
  EXPECT_NE(msg.find("not a SafeTensors file"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("PK"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("578437695752307280"), std::string::npos) << msg;  // the bytes as u64
  // A plausible length past the end: declared and available sizes, both named.
  write_file(dir.file("g.safetensors"), std::string("\x40\x00\x00\x00\x00\x00\x00\x00{}", 10));
  msg = load_error(dir.file("g.webnn"));
  EXPECT_NE(msg.find("declares 64 bytes, 2 follow"), std::string::npos) << msg;

  // A manifest that is not JSON: the position, not its first character.
  fs::remove(dir.file("g.safetensors"));
  write_file(dir.file("g.weights"), std::string("WGWT\x01\x00\x00\x00", 8) + std::string(8, '\0'));
  write_file(dir.file("manifest.json"), "Ztensors");
  msg = load_error(dir.file("g.webnn"));
  EXPECT_NE(msg.find("manifest.json:1:1: expected a JSON value"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('Z'), std::string::npos) << msg;

  // Control characters from the file are escaped, never passed through.
  write_file(dir.file("manifest.json"), "{\"tensors\": {\"w\\u001b[31m\": 5}}");
  msg = load_error(dir.file("g.webnn"));
  EXPECT_NE(msg.find("w\\x1b[31m"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\x1b'), std::string::npos) << msg;
  write_file(dir.file("t.webnn"), std::string("webnn_graph \"g\" v2 {\x01}"));
  msg = load_error(dir.file("t.webnn"));
  EXPECT_NE(msg.find("t.webnn:1:21: unexpected character"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\x01'), std::string::npos) << msg;
}

TEST(HostileFilesTest, WeightKeysAreNeverPaths) {
  TempDir dir;
  fs::create_directory(dir.file("model"));
  write_file(dir.file("secret.safetensors"), "not for you");
  // A key that looks like a path is looked up in the container next to the graph, nowhere else.
  write_file(dir.file("model/g.webnn"),
             "webnn_graph \"g\" v2 {\n  inputs { x: f32[2]; }\n"
             "  consts { w: f32[2] @weights(\"../secret.safetensors\"); }\n"
             "  nodes { y = add(x, w); }\n  outputs { y; }\n}\n");
  std::string msg = load_error(dir.file("model/g.webnn"));
  EXPECT_NE(msg.find("no weights file found next to"), std::string::npos) << msg;
}

TEST(HostileFilesTest, HuggingFaceCacheSnapshotOfSymlinks) {
  // snapshots/<rev>/<file> -> ../../blobs/<hash>, as huggingface_hub lays out its cache.
  TempDir dir;
  TempDir staging;
  ASSERT_TRUE(save_graph(add_graph(0.25f), staging.file("model.webnn")).is_ok());
  const std::string repo = dir.file("models--user--tiny");
  fs::create_directories(repo + "/blobs");
  fs::create_directories(repo + "/snapshots/0123abcd");
  fs::rename(staging.file("model.webnn"), repo + "/blobs/1111");
  fs::rename(staging.file("model.safetensors"), repo + "/blobs/2222");
  fs::create_symlink("../../blobs/1111", repo + "/snapshots/0123abcd/model.webnn");
  fs::create_symlink("../../blobs/2222", repo + "/snapshots/0123abcd/model.safetensors");
  auto g = load_graph_file(repo + "/snapshots/0123abcd/model.webnn");
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_EQ(first_weight(*g), 0.25f);

  // The same with a manifest + .weights blob (the Hub models' layout).
  const std::string graph =
      "webnn_graph \"g\" v2 {\n  inputs { x: f32[1]; }\n  consts { w: f32[1]; }\n"
      "  nodes { y = add(x, w); }\n  outputs { y; }\n}\n";
  float v = 4.0f;
  std::string blob("WGWT\x01\x00\x00\x00", 8);
  blob.append(reinterpret_cast<const char*>(&v), 4);
  write_file(repo + "/blobs/3333", graph);
  write_file(repo + "/blobs/4444", blob);
  write_file(repo + "/blobs/5555",
             "{\"tensors\": {\"w\": {\"dataType\": \"float32\", \"shape\": [1], \"byteOffset\": 8, "
             "\"byteLength\": 4}}}");
  fs::create_directories(repo + "/snapshots/feed");
  fs::create_symlink("../../blobs/3333", repo + "/snapshots/feed/model.webnn");
  fs::create_symlink("../../blobs/4444", repo + "/snapshots/feed/model.weights");
  fs::create_symlink("../../blobs/5555", repo + "/snapshots/feed/manifest.json");
  auto h = load_graph_file(repo + "/snapshots/feed/model.webnn");
  ASSERT_TRUE(h.has_value()) << h.status().message();
  EXPECT_EQ(first_weight(*h), 4.0f);
}

// Found by the builder fuzz target: a negative slice start passed the bounds check (start +
// size <= dim) and the kernels read before the input. The text format and the Python bindings
// refuse negative values already; the C++ builder did not.
TEST(HostileFilesTest, NegativeSliceStartIsRefused) {
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim(4)}, DataType::kFloat32);
  ASSERT_TRUE(x.has_value());
  SliceParams p;
  p.input = OperandRef{*x};
  p.starts = {-1};
  p.sizes = Shape{Dim(2)};
  auto y = b.add_op(OpKind::kSlice, p);
  ASSERT_FALSE(y.has_value());
  EXPECT_NE(y.status().message().find("starts[0] -1 must not be negative"), std::string::npos)
      << y.status().message();
}

}  // namespace
}  // namespace webnn
