// Graph files: lexer, parser, printer round trips, legacy forms, weights containers, hostile
// input, atomic saves, and every WPT graph saved -> loaded -> saved byte for byte.
#include "webnn/format.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "format/json.h"
#include "format/lexer.h"
#include "format/params.h"
#include "format/weights.h"
#include "temp_files.h"
#include "webnn/builder.h"

namespace webnn {
namespace {

namespace fs = std::filesystem;
using format::Value;

std::string bytes_of(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

void write_safetensors(
    const std::string& path,
    const std::vector<std::tuple<std::string, DataType, std::vector<int64_t>, std::string>>&
        tensors) {
  std::vector<format::TensorToWrite> t;
  std::string data;
  for (const auto& [key, type, shape, bytes] : tensors) {
    t.push_back({key, type, shape, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
    data += bytes;
  }
  write_file(path, *format::safetensors_header(t) + data);
}

// Loads `text` as if it were `path`; the file itself need not exist.
Expected<Graph> load(const std::string& text, const std::string& path = "/nonexistent/g.webnn") {
  return load_graph_source(text, path);
}

std::string load_error(const std::string& text, const std::string& path = "/nonexistent/g.webnn") {
  auto g = load(text, path);
  EXPECT_FALSE(g.has_value()) << text;
  if (g.has_value()) return "";
  EXPECT_EQ(g.status().kind(), ErrorKind::kIo) << g.status().message();
  return g.status().message();
}

const OperandDesc& output_desc(const Graph& g, const std::string& name) {
  for (const NamedOperand& o : g.outputs) {
    if (o.name == name) return g.desc(o.id);
  }
  static OperandDesc none;
  ADD_FAILURE() << "no output " << name;
  return none;
}

// ---- lexer and parser ---------------------------------------------------------------------

TEST(FormatJsonTest, StrictParsing) {
  auto v = format::parse_json(
      R"({"a": "\u00e9\ud83d\ude00\n", "b": -9223372036854775808, "c": 18446744073709551615,
          "d": [1.5e3, true, null]})",
      "t.json");
  ASSERT_TRUE(v.has_value()) << v.status().message();
  EXPECT_EQ(v->find("a")->s, "\xC3\xA9\xF0\x9F\x98\x80\n");
  EXPECT_EQ(v->find("b")->i, INT64_MIN);
  EXPECT_EQ(v->find("c")->u, UINT64_MAX);
  EXPECT_EQ(v->find("d")->items[0].d, 1500.0);
  for (const char* bad : {"01", "[1,]", "{\"a\" 1}", "\"\\ud800\"", "\"a\nb\"",
                          "18446744073709551616", "1e999", "[1] x", "\"\\q\"", "nul"}) {
    auto r = format::parse_json(bad, "t.json");
    EXPECT_FALSE(r.has_value()) << bad;
    if (!r.has_value()) EXPECT_EQ(r.status().message().rfind("t.json:1:", 0), 0u) << bad;
  }
}

TEST(FormatLexerTest, TokensAndLegacyIdentifiers) {
  format::Lexer lex("a::b.c/d $x -1.5e3 \"q\\\"\\\\\\n\" @bytes # comment\n{");
  EXPECT_EQ(lex.next().text, "a__b.c/d");
  EXPECT_EQ(lex.next().text, "$x");
  format::Token n = lex.next();
  EXPECT_EQ(n.kind, format::Token::Kind::kNumber);
  EXPECT_FALSE(n.is_integer);
  EXPECT_EQ(lex.next().text, "q\"\\\\n");  // only \" and \\ are escapes
  format::Token at = lex.next();
  EXPECT_EQ(at.kind, format::Token::Kind::kAt);
  EXPECT_EQ(at.text, "bytes");
  format::Token brace = lex.next();
  EXPECT_EQ(brace.punct, '{');
  EXPECT_EQ(brace.loc.line, 2);
  EXPECT_EQ(brace.loc.col, 1);
  EXPECT_EQ(lex.next().kind, format::Token::Kind::kEof);
  for (const char* bad : {"5.", ".5", "1e", "\"open", "x - y", "5x"}) {
    format::Lexer l(bad);
    format::Token t;
    do t = l.next();
    while (t.kind != format::Token::Kind::kEof && t.kind != format::Token::Kind::kError);
    EXPECT_EQ(t.kind, format::Token::Kind::kError) << bad;
  }
}

TEST(FormatLocTest, LinesAndCodePointColumns) {
  const std::string text = "ab\n\xC3\xA9x\n\n y";  // "é" is two bytes, one column
  format::LocTracker t(text);
  auto at = [&](size_t offset) { return std::make_pair(t.at(offset).line, t.at(offset).col); };
  EXPECT_EQ(at(0), std::make_pair(1, 1));
  EXPECT_EQ(at(2), std::make_pair(1, 3));
  EXPECT_EQ(at(3), std::make_pair(2, 1));
  EXPECT_EQ(at(5), std::make_pair(2, 2));  // after "é"
  EXPECT_EQ(at(9), std::make_pair(4, 2));
  EXPECT_EQ(at(1), std::make_pair(1, 2));  // stepping back counts again
  EXPECT_EQ(format::loc_of(text, 9).col, 2);
  // The lexer and the JSON parser report the same position for the same bad byte.
  format::Lexer lex("x\n\xC3\xA9 ?");
  format::Token t1 = lex.next(), t2 = lex.next();
  EXPECT_EQ(t1.text, "x");
  EXPECT_EQ(t2.kind, format::Token::Kind::kError);
  EXPECT_EQ(std::make_pair(t2.loc.line, t2.loc.col), std::make_pair(2, 1));
  auto json = format::parse_json("[1,\n \"\xC3\xA9\", ?]", "t.json");
  ASSERT_FALSE(json.has_value());
  EXPECT_EQ(json.status().message().rfind("t.json:2:7:", 0), 0u) << json.status().message();
}

// format.md §2: the printer writes a name bare exactly when the lexer reads it back as one
// identifier token.
TEST(FormatLexerTest, PrinterAndLexerAgreeOnIdentifiers) {
  for (const char* s :
       {"x", "_a1", "/model/conv.weight", "$x", "a.b", "1a", "a-b", "a$", ".a", "a b", "é", ""}) {
    format::Lexer lex(s);
    format::Token t = lex.next();
    bool one_ident = t.kind == format::Token::Kind::kIdent && t.text == s &&
                     lex.next().kind == format::Token::Kind::kEof;
    EXPECT_EQ(format::is_text_identifier(s), one_ident) << s;
  }
}

// format.md §5.3: options in the order of the spec's dictionaries, not the Python order.
TEST(FormatPrinterTest, OptionOrderOfTheSpecDictionaries) {
  auto keys = [](OpKind kind, OpParams params) {
    Node node{kind, "", std::move(params), {9}};
    auto args = format::format_args(node, [](OperandId id) { return "v" + std::to_string(id); });
    EXPECT_TRUE(args.has_value());
    std::vector<std::string> out;
    for (const std::string& a : *args) {
      if (a.find('=') != std::string::npos) out.push_back(a.substr(0, a.find('=')));
    }
    return out;
  };
  using V = std::vector<std::string>;
  Conv2dParams conv{{0},    {1}, IntList{2, 2}, IntList{2, 2}, IntList{1, 1, 1, 1}, 2, "nhwc",
                    "ohwi", {2}};
  EXPECT_EQ(keys(OpKind::kConv2d, conv), (V{"padding", "strides", "dilations", "groups",
                                            "inputLayout", "filterLayout", "bias"}));
  ConvTranspose2dParams convt{{0},
                              {1},
                              IntList{2, 2},
                              IntList{2, 2},
                              IntList{1, 1, 1, 1},
                              IntList{1, 1},
                              IntList{8, 8},
                              2,
                              "nhwc",
                              "ohwi",
                              {2}};
  EXPECT_EQ(keys(OpKind::kConvTranspose2d, convt),
            (V{"padding", "strides", "dilations", "outputPadding", "outputSizes", "groups",
               "inputLayout", "filterLayout", "bias"}));
  Pool2dParams pool{{0},    IntList{2, 2}, IntList{2, 2}, IntList{2, 2}, IntList{1, 1, 1, 1},
                    "nhwc", "ceil",        IntList{4, 4}};
  EXPECT_EQ(keys(OpKind::kMaxPool2d, pool),
            (V{"windowDimensions", "padding", "strides", "dilations", "layout",
               "outputShapeRounding", "outputSizes"}));
  Resample2dParams resample{
      {0}, IntList{4, 4}, std::vector<double>{2.0, 2.0}, "linear", IntList{1, 2}};
  EXPECT_EQ(keys(OpKind::kResample2d, resample), (V{"mode", "scales", "sizes", "axes"}));
  BatchNormalizationParams batch{{0}, {1}, {2}, {3}, {4}, 1e-3, 3};
  EXPECT_EQ(keys(OpKind::kBatchNormalization, batch), (V{"scale", "bias", "axis", "epsilon"}));
  LayerNormalizationParams layer{{0}, {1}, {2}, 1e-3, IntList{1}};
  EXPECT_EQ(keys(OpKind::kLayerNormalization, layer), (V{"scale", "bias", "axes", "epsilon"}));
  // An op without dictionary positions keeps its visit order.
  GemmParams gemm{{0}, {1}, {2}, 2.0, 3.0, true, true};
  EXPECT_EQ(keys(OpKind::kGemm, gemm), (V{"c", "alpha", "beta", "aTranspose", "bTranspose"}));
}

// format.md §11.1, shared with tests/python/test_files.py.
std::string read_test_data(const std::string& relative) {
  std::ifstream in(std::string(WEBNN_TEST_DATA_DIR) + "/" + relative);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string tiny_mlp() { return read_test_data("format/tiny_mlp.webnn"); }

TEST(FormatExamplesTest, TinyMlpWithSafeTensors) {
  TempDir dir;
  write_file(dir.file("tiny_mlp.webnn"), tiny_mlp());
  write_safetensors(dir.file("tiny_mlp.safetensors"),
                    {{"w1", DataType::kFloat32, {4, 8}, bytes_of(std::vector<float>(32, 1))},
                     {"b1", DataType::kFloat32, {8}, bytes_of(std::vector<float>(8, 2))},
                     {"w2", DataType::kFloat32, {8, 3}, bytes_of(std::vector<float>(24, 3))}});
  GraphFileInfo info;
  auto g = load_graph_file(dir.file("tiny_mlp.webnn"), &info);
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_EQ(info.name, "tiny_mlp");
  const OperandDesc& probs = output_desc(*g, "probs");
  EXPECT_EQ(probs.shape, (Shape{Dim("batch", 16), 3}));
  EXPECT_EQ(g->nodes[2].label, "hidden_act");
  // Weights are views into the mapped sidecar; @scalar constants are expanded.
  int views = 0;
  for (const Operand& op : g->operands) {
    if (op.kind != OperandKind::kConstant) continue;
    views += op.constant->is_view();
    if (op.name == "b2") {
      EXPECT_EQ(reinterpret_cast<const float*>(op.constant->data())[2], 0.5f);
    }
  }
  EXPECT_EQ(views, 3);
  // Canonical text of a loaded graph keeps its names and re-loads identically.
  auto text = format_graph(*g, info);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("    h2 = relu(h1, label=\"hidden_act\");\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("    b2: f32[3] @weights(\"b2\");\n"), std::string::npos);
  auto missing = load_graph_file(dir.file("nothere.webnn"));
  EXPECT_EQ(missing.status().kind(), ErrorKind::kNotFound);
}

TEST(FormatExamplesTest, ManifestAndWeightsBlob) {
  TempDir dir;
  write_file(dir.file("edge.webnn"), R"(webnn_graph "edge_detector" v2 {
  inputs { image: f32[1, 1, 28, 28]; }
  consts {
    kernel: f32[4, 1, 3, 3] @weights("conv.kernel");
    kbias: f32[4] @weights("conv.bias");
    fc: f32[784, 10] @weights("fc.weight");
  }
  nodes {
    c = conv2d(image, kernel, padding=[1, 1, 1, 1], bias=kbias);
    r = clamp(c, minValue=0, maxValue=6);
    p = maxPool2d(r, windowDimensions=[2, 2], strides=[2, 2]);
    flat = reshape(p, newShape=[1, 784]);
    logits = matmul(flat, fc);
  }
  outputs { logits; }
})");
  std::string manifest = R"({"format": "wg-weights-manifest", "version": 1, "tensors": {
    "conv.bias": {"dataType": "float32", "shape": [4], "byteOffset": 8, "byteLength": 16},
    "conv.kernel": {"dataType": "float32", "shape": [4, 1, 3, 3], "byteOffset": 24,
                    "byteLength": 144, "layout": "row-major"},
    "fc.weight": {"dataType": "float32", "shape": [784, 10], "byteOffset": 168,
                  "byteLength": 31360}}})";
  write_file(dir.file("edge.manifest.json"), manifest);
  std::string blob = std::string("WGWT\x01\0\0\0", 8) + std::string(31520, '\0');
  write_file(dir.file("edge.weights"), blob);
  auto g = load_graph_file(dir.file("edge.webnn"));
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_EQ(output_desc(*g, "logits").shape, (Shape{1, 10}));
  const auto& clamp = g->nodes[1].as<ClampParams>();
  EXPECT_EQ(clamp.max_value, Scalar::from_int(6));

  write_file(dir.file("edge.weights"), "WGWX" + blob.substr(4));
  EXPECT_NE(load_graph_file(dir.file("edge.webnn")).status().message().find("WGWT"),
            std::string::npos);
  write_file(dir.file("edge.weights"), blob.substr(0, 1000));  // truncated blob
  std::string msg = load_graph_file(dir.file("edge.webnn")).status().message();
  EXPECT_NE(msg.find("outside the blob"), std::string::npos) << msg;
  write_file(dir.file("edge.weights"), blob);
  std::string bad = manifest;
  bad.replace(bad.find("\"byteOffset\": 168"), 17, "\"byteOffset\": 18446744073709551615");
  write_file(dir.file("edge.manifest.json"), bad);
  EXPECT_FALSE(load_graph_file(dir.file("edge.webnn")).has_value());
  bad = manifest;
  bad.replace(bad.find("[784, 10]"), 9, "[10, 784]");
  write_file(dir.file("edge.manifest.json"), bad);
  msg = load_graph_file(dir.file("edge.webnn")).status().message();
  EXPECT_NE(msg.find("'fc.weight'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shape"), std::string::npos) << msg;
  fs::remove(dir.file("edge.manifest.json"));
  msg = load_graph_file(dir.file("edge.webnn")).status().message();
  EXPECT_NE(msg.find("no manifest"), std::string::npos) << msg;
  fs::remove(dir.file("edge.weights"));
  msg = load_graph_file(dir.file("edge.webnn")).status().message();
  EXPECT_NE(msg.find("no weights file found"), std::string::npos) << msg;
}

// format.md §11.3, shared with tests/python/test_files.py.
std::string token_mixer() { return read_test_data("format/token_mixer.webnn"); }

TEST(FormatExamplesTest, SplitGatherWhereLstmAndDynamicReshape) {
  auto g = load(token_mixer());
  ASSERT_TRUE(g.has_value()) << g.status().message();
  EXPECT_EQ(output_desc(*g, "picked").shape, (Shape{2, 3}));
  EXPECT_EQ(output_desc(*g, "total").shape, (Shape{2, 1}));

  TempDir dir;
  write_file(dir.file("seq.webnn"), R"(webnn_graph "seq_encoder" v2 {
  inputs { seq: f32[5, 1, 3]; }
  consts { w: f32[1, 8, 3] @weights("w"); r: f32[1, 8, 2] @weights("r"); b: f32[1, 8]; }
  nodes {
    [h, c, all_h] = lstm(seq, w, r, steps=5, hiddenSize=2, bias=b, returnSequence=true);
  }
  outputs { h; all_h; }
})");
  write_safetensors(dir.file("seq.safetensors"),
                    {{"w", DataType::kFloat32, {1, 8, 3}, std::string(96, '\0')},
                     {"r", DataType::kFloat32, {1, 8, 2}, std::string(64, '\0')},
                     {"b", DataType::kFloat32, {1, 8}, std::string(32, '\0')}});
  auto lstm = load_graph_file(dir.file("seq.webnn"));
  ASSERT_TRUE(lstm.has_value()) << lstm.status().message();
  EXPECT_EQ(output_desc(*lstm, "all_h").shape, (Shape{5, 1, 1, 2}));

  auto heads = load(R"(webnn_graph "split_heads" v2 {
  inputs { q: f16[dyn("batch", 4), 16, 64]; }
  nodes {
    q4 = reshape(q, newShape=[{"name": "batch", "maxSize": 4}, 16, 8, 8]);
    qt = transpose(q4, permutation=[0, 2, 1, 3]);
  }
  outputs { qt; }
})");
  ASSERT_TRUE(heads.has_value()) << heads.status().message();
  EXPECT_EQ(output_desc(*heads, "qt").shape, (Shape{Dim("batch", 4), 8, 16, 8}));
}

TEST(FormatExamplesTest, JsonForm) {
  auto g = load(R"(
  {"format": "webnn-graph-json", "version": 2, "name": "token_mixer",
   "inputs": {"x": {"dataType": "float32", "shape": [2, 6]},
              "mask": {"dataType": "uint8", "shape": [2, 6]}},
   "consts": {"zero": {"dataType": "float32", "shape": [], "init": {"kind": "scalar", "value": 0}},
              "two": {"dataType": "int4", "shape": [3],
                      "init": {"kind": "inlineBytes", "bytes": [34, 2]}}},
   "nodes": [
     {"id": "left", "op": "split", "inputs": ["x"], "options": {"splits": 2, "axis": 1},
      "outputs": ["left", "right"]},
     {"id": "swapped", "op": "concat", "inputs": ["right", "left"], "options": {"axis": 1}},
     {"id": "masked", "op": "where", "inputs": ["mask", "swapped", "zero"], "outputs": null}],
   "outputs": {"swapped": "swapped", "also": "swapped", "m": "masked"}})");
  ASSERT_TRUE(g.has_value()) << g.status().message();
  ASSERT_EQ(g->outputs.size(), 3u);
  EXPECT_EQ(g->outputs[0].id, g->outputs[1].id);  // JSON outputs may alias
  // The text form has no aliases: the second name becomes an identity.
  auto text = format_graph(*g, {"token_mixer", false});
  ASSERT_TRUE(text.has_value()) << text.status().message();
  EXPECT_NE(text->find("    also = identity(swapped);\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("  outputs { swapped; also; m; }\n}\n"), std::string::npos) << *text;
  TempDir dir;
  ASSERT_TRUE(save_graph(*g, dir.file("t.webnn"), {"token_mixer", false}).is_ok());
  auto again = load_graph_file(dir.file("t.webnn"));
  ASSERT_TRUE(again.has_value()) << again.status().message();
  EXPECT_EQ(*format_graph(*again, {"token_mixer", false}), *text);

  std::string msg = load_error("{\"nodes\": [{\"op\": \"relu\", \"inputs\": [\"x\"]}]}");
  EXPECT_NE(msg.find(":1:12:"), std::string::npos) << msg;  // node without outputs or id
  msg = load_error(
      "{\"inputs\": {\"x\": {\"dataType\": \"float32\", \"shape\": [2]}}, \"outputs\": {\n"
      " \"y\": \"x\"}}");
  EXPECT_NE(msg.find(":2:7: output 'x' is an input"), std::string::npos) << msg;
  EXPECT_NE(load_error("{\"a\": 1, \"a\": 2}").find("duplicate JSON key"), std::string::npos);
}

TEST(FormatParserTest, ErrorsNameLineAndColumn) {
  const std::string head = "webnn_graph \"g\" v2 {\n  inputs { x: f32[2, 3]; }\n  nodes {\n";
  auto err = [&](const std::string& body) {
    return load_error(head + body + "  }\n  outputs { y; }\n}\n");
  };
  EXPECT_NE(err("    y = frobnicate(x);\n").find("g.webnn:4:9: unknown operation 'frobnicate'"),
            std::string::npos);
  EXPECT_NE(err("    y = relu(x;\n").find("g.webnn:4:15: expected ',' or ')'"), std::string::npos);
  EXPECT_NE(err("    y = relu(z);\n").find("g.webnn:4:14:"), std::string::npos);
  EXPECT_NE(err("    y = softmax(x);\n").find("missing required argument 'axis'"),
            std::string::npos);
  EXPECT_NE(
      err("    y = softmax(x, axis=1, colour=2);\n").find("4:28: softmax: unknown option 'colour'"),
      std::string::npos);
  EXPECT_NE(err("    y = softmax(x, axis=-1);\n").find("must not be negative"), std::string::npos);
  EXPECT_NE(err("    y = softmax(x, axis=\"1\");\n").find("must be an integer"), std::string::npos);
  EXPECT_NE(err("    y = relu(1.5);\n").find("positional arguments must be value names"),
            std::string::npos);
  EXPECT_NE(err("    y = x;\n").find("identity"), std::string::npos);
  EXPECT_NE(err("    x = relu(x);\n").find("'x' is already defined"), std::string::npos);
  EXPECT_NE(err("    [y, z] = relu(x);\n").find("relu produces 1 result, but 2 names are given"),
            std::string::npos);
  EXPECT_NE(err("    y = softmax(x, axis=5);\n").find("g.webnn:4:5: softmax"), std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v3 {}").find("unsupported format version 3"),
            std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { inputs { x: f320[2]; } }").find("f320"),
            std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { consts { c: f32[dyn(\"b\", 2)]; } }")
                .find("not allowed in constants"),
            std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { consts { c: u8[3] @bytes([1, 2]); } }")
                .find("@bytes has 2 bytes"),
            std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { consts { c: i8[3] @scalar(200); } }")
                .find("out of range for int8"),
            std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { consts { c: u8[1] @bytes([256]); } }")
                .find("out of range 0-255"),
            std::string::npos);
  std::string ok = head + "    y = relu(x);\n  }\n  outputs { y; }\n}\n";
  EXPECT_NE(load_error(ok + "junk").find("after the graph's closing '}'"), std::string::npos);
  EXPECT_NE(load_error(ok.substr(0, ok.size() - 2)).find("missing '}'"), std::string::npos);
  EXPECT_NE(load_error(head + "  }\n  outputs { }\n}\n").find("no outputs"), std::string::npos);
  EXPECT_NE(load_error(head + "  }\n  outputs { x; }\n}\n").find("is an input"), std::string::npos);
  // Invalid UTF-8 is reported where it occurs.
  EXPECT_NE(load_error("webnn_graph \"g\" v2 {\n  # caf\xC3\n}").find("g.webnn:2:8: invalid UTF-8"),
            std::string::npos);
  EXPECT_TRUE(load(ok).has_value());
}

TEST(FormatParserTest, LegacyForms) {
  // `v 1`, BOM, blocks in any order and repeated, `::` identifiers, snake_case and legacy
  // keys, upstream's empty lists and labels, positional bias next to an integer index.
  // Constants may be declared after the statements that use them: blocks accumulate.
  EXPECT_TRUE(load("webnn_graph \"g\" v2 { inputs { x: f32[2]; }\n"
                   "  nodes { y = gather(x, idx); }\n"
                   "  consts { idx: i32[] @scalar(0); } outputs { y; } }")
                  .has_value());
  GraphFileInfo info;
  auto ok = load_graph_source(
      "\xEF\xBB\xBFwebnn_graph \"g\" v 1 @quantized {\n"
      "  consts { w: f32[1, 1, 1, 1] @scalar(2) @scalar(3); }\n"
      "  inputs { b::x: f32[dyn(\"n\", 4), 1, 2, 2]; }\n"
      "  consts { bias: f32[1] @bytes([0, 0, 128, 63]); }\n"
      "  nodes {\n"
      "    c = conv2d(b::x, w, bias, bias=2, hasBias=true, groups=1, strides=[], padding=[],\n"
      "               label=\"\");\n"
      "    r = reshape(c, new_shape=[{\"name\": \"n\", \"max_size\": 4}, 4]);\n"
      "    t = cast(c, dataType=\"float16\");\n"
      "  }\n"
      "  outputs { t, t }\n"
      "}\n",
      "legacy.webnn", &info);
  ASSERT_TRUE(ok.has_value()) << ok.status().message();
  EXPECT_TRUE(info.quantized);
  EXPECT_EQ(ok->operands[ok->inputs[0]].name, "b__x");
  const auto& conv = ok->nodes[0].as<Conv2dParams>();
  EXPECT_TRUE(conv.bias.present());
  EXPECT_FALSE(conv.strides.has_value());
  EXPECT_EQ(ok->nodes[0].label, "");
  EXPECT_EQ(ok->nodes[1].as<CastParams>().data_type, DataType::kFloat16);
  EXPECT_EQ(ok->outputs.size(), 1u);
  for (const Operand& op : ok->operands) {
    if (op.name == "w") EXPECT_EQ(reinterpret_cast<const float*>(op.constant->data())[0], 3.0f);
  }
  // An integer operand option without the positional operand cannot be resolved.
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { inputs { x: f32[1, 1, 2, 2]; }\n"
                       "  consts { w: f32[1, 1, 1, 1] @scalar(1); }\n"
                       "  nodes { c = conv2d(x, w, bias=3); } outputs { c; } }")
                .find("integer operand indices"),
            std::string::npos);
}

// ---- printer ------------------------------------------------------------------------------

TEST(FormatPrinterTest, LosslessNumbersAndCanonicalOrder) {
  GraphBuilder b;
  OperandId x = *b.input("x", {Dim("n", 3), 4}, DataType::kFloat32);
  OperandId i = *b.input("i", {2}, DataType::kInt64);
  OperandId u = *b.input("u", {2}, DataType::kUint64);
  const double tricky[] = {0.1, 1e-05, 1.0 / 3.0, 5e-324, -0.0, 1e300, 0.2f, 123456789012.5};
  std::vector<NamedOperand> outs;
  for (double a : tricky) {
    OperandId y = (*b.add_op(OpKind::kLeakyRelu, LeakyReluParams{{x}, a}))[0];
    outs.push_back({"y" + std::to_string(outs.size()), y});
  }
  ClampParams ci{{i}, Scalar::from_int(INT64_MIN), Scalar::from_int(9007199254740993)};
  outs.push_back({"ci", (*b.add_op(OpKind::kClamp, ci))[0]});
  ClampParams cu{{u}, Scalar::from_double(1.0), Scalar::from_uint(UINT64_MAX)};
  outs.push_back({"cu", (*b.add_op(OpKind::kClamp, cu))[0]});
  ClampParams unbounded{{x}, Scalar::from_double(-INFINITY), Scalar::from_double(INFINITY)};
  outs.push_back({"cx", (*b.add_op(OpKind::kClamp, unbounded))[0]});
  Pool2dParams pool{
      {(*b.add_op(OpKind::kReshape, NewShapeParams{{x}, {Dim("n", 3), 1, 2, 2}}))[0]}};
  pool.window_dimensions = IntList{1, 1};
  pool.padding = IntList{0, 0, 0, 0};
  pool.layout = "nhwc";
  outs.push_back({"p", (*b.add_op(OpKind::kMaxPool2d, pool, "a \"quoted\" \\ label"))[0]});
  Graph g = *b.extract(outs);
  auto text = format_graph(g);
  ASSERT_TRUE(text.has_value()) << text.status().message();
  EXPECT_NE(text->find("    x: f32[dyn(\"n\", 3), 4];\n"), std::string::npos);
  EXPECT_NE(text->find("y0 = leakyRelu(x, alpha=0.1);"), std::string::npos) << *text;
  EXPECT_NE(text->find("y1 = leakyRelu(x, alpha=1e-05);"), std::string::npos);
  EXPECT_NE(text->find("y4 = leakyRelu(x, alpha=-0.0);"), std::string::npos);
  EXPECT_NE(text->find("ci = clamp(i, minValue=-9223372036854775808, maxValue=9007199254740993);"),
            std::string::npos);
  EXPECT_NE(text->find("cu = clamp(u, minValue=1.0, maxValue=18446744073709551615);"),
            std::string::npos);
  EXPECT_NE(text->find("cx = clamp(x);"), std::string::npos);
  EXPECT_NE(text->find("p = maxPool2d(operand_"), std::string::npos);
  EXPECT_NE(text->find(", windowDimensions=[1, 1], padding=[0, 0, 0, 0], layout=\"nhwc\", "
                       "label=\"a \\\"quoted\\\" \\\\ label\");"),
            std::string::npos)
      << *text;
  auto loaded = load(*text);
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message() << *text;
  for (size_t k = 0; k < std::size(tricky); ++k) {
    double a = loaded->nodes[k].as<LeakyReluParams>().alpha;
    EXPECT_EQ(std::memcmp(&a, &tricky[k], sizeof a), 0) << tricky[k];
  }
  EXPECT_EQ(loaded->nodes[8].as<ClampParams>().min_value, ci.min_value);
  EXPECT_EQ(loaded->nodes[8].as<ClampParams>().max_value, ci.max_value);
  EXPECT_EQ(loaded->nodes[9].as<ClampParams>().max_value, cu.max_value);
  EXPECT_EQ(loaded->nodes.back().label, "a \"quoted\" \\ label");
  EXPECT_EQ(*format_graph(*loaded), *text);
}

TEST(FormatPrinterTest, NamesAndUnwritableValues) {
  auto graph_with = [](const std::string& input, const std::string& output, double alpha) {
    GraphBuilder b;
    OperandId x = *b.input(input, {2}, DataType::kFloat32);
    OperandId y = (*b.add_op(OpKind::kElu, EluParams{{x}, alpha}))[0];
    return *b.extract({{output, y}});
  };
  EXPECT_TRUE(format_graph(graph_with("x", "y", 1.0)).has_value());
  auto odd = format_graph(graph_with("$in/a.0", "out/b.1", 1.0));
  ASSERT_TRUE(odd.has_value());
  EXPECT_TRUE(load(*odd).has_value()) << *odd;
  for (auto [in, out] : {std::pair{"x-1", "y"}, {"x", "9y"}, {"x", "null"}, {"x", "x"}}) {
    auto r = format_graph(graph_with(in, out, 1.0));
    ASSERT_FALSE(r.has_value()) << in << " " << out;
    EXPECT_EQ(r.status().kind(), ErrorKind::kValue);
  }
  auto nan = format_graph(graph_with("x", "y", NAN));
  EXPECT_NE(nan.status().message().find("'alpha' is NaN"), std::string::npos);
  // A generated name never collides with a user name.
  GraphBuilder b;
  OperandId x = *b.input("operand_1", {2}, DataType::kFloat32);
  OperandId r = (*b.add_op(OpKind::kRelu, UnaryParams{{x}}))[0];
  OperandId s = (*b.add_op(OpKind::kSigmoid, UnaryParams{{r}}))[0];
  auto text = format_graph(*b.extract({{"out", s}, {"again", s}}));
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("operand_1_1 = relu(operand_1);"), std::string::npos) << *text;
  EXPECT_NE(text->find("again = identity(out);"), std::string::npos) << *text;
}

TEST(FormatSaveTest, SidecarAtomicityAndErrors) {
  TempDir dir;
  GraphBuilder b;
  OperandId x = *b.input("x", {3}, DataType::kFloat32);
  OperandId w = *b.constant({DataType::kFloat32, {3}}, std::vector<uint8_t>(12, 1));
  OperandId q = *b.constant({DataType::kInt4, {3}}, std::vector<uint8_t>{0x21, 0x03});
  OperandId y = (*b.add_op(OpKind::kAdd, BinaryParams{{x}, {w}}))[0];
  OperandId z = (*b.add_op(OpKind::kCast, CastParams{{q}, DataType::kFloat32}))[0];
  Graph g = *b.extract({{"y", y}, {"z", z}});
  ASSERT_TRUE(save_graph(g, dir.file("m.webnn")).is_ok());
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"m.safetensors", "m.webnn"}));
  std::string text = read_bytes(dir.file("m.webnn"));
  EXPECT_NE(text.find("operand_2: i4[3] @bytes([33, 3]);"), std::string::npos) << text;
  EXPECT_NE(text.find("operand_1: f32[3] @weights(\"operand_1\");"), std::string::npos);
  auto loaded = load_graph_file(dir.file("m.webnn"));
  ASSERT_TRUE(loaded.has_value()) << loaded.status().message();
  ASSERT_TRUE(save_graph(*loaded, dir.file("again.webnn")).is_ok());
  EXPECT_EQ(read_bytes(dir.file("again.webnn")), text);
  EXPECT_EQ(read_bytes(dir.file("again.safetensors")), read_bytes(dir.file("m.safetensors")));
  // Saving over the file a loaded graph maps is safe: the rename replaces the directory entry.
  ASSERT_TRUE(save_graph(*loaded, dir.file("m.webnn")).is_ok());
  EXPECT_EQ(read_bytes(dir.file("m.webnn")), text);

  EXPECT_EQ(save_graph(g, dir.file("missing/m.webnn")).kind(), ErrorKind::kNotFound);
  fs::create_directory(dir.file("blocked.safetensors"));
  Status blocked = save_graph(g, dir.file("blocked.webnn"));
  EXPECT_EQ(blocked.kind(), ErrorKind::kIo) << blocked.message();
  EXPECT_EQ(save_graph(g, dir.file("m.safetensors")).kind(), ErrorKind::kValue);
  // No partial files and no temporaries were left behind by the failed saves.
  EXPECT_EQ(dir.list(),
            (std::vector<std::string>{"again.safetensors", "again.webnn", "blocked.safetensors",
                                      "m.safetensors", "m.webnn"}));
}

// ---- weights containers -------------------------------------------------------------------

TEST(FormatWeightsTest, SafeTensorsValidationAndKeyMatching) {
  TempDir dir;
  const std::string graph = R"(webnn_graph "g" v2 {
  inputs { x: f32[2]; }
  consts { w: f32[2] @weights("enc::layer.0.w"); }
  nodes { y = add(x, w); }
  outputs { y; }
})";
  write_file(dir.file("g.webnn"), graph);
  auto status = [&] { return load_graph_file(dir.file("g.webnn")).status().message(); };
  std::string two = bytes_of({1.0f, 2.0f});
  write_safetensors(dir.file("g.safetensors"), {{"enc__layer_0_w", DataType::kFloat32, {2}, two}});
  EXPECT_TRUE(load_graph_file(dir.file("g.webnn")).has_value());  // sanitised match
  write_safetensors(dir.file("g.safetensors"), {{"enc__layer_0_w", DataType::kFloat32, {2}, two},
                                                {"enc::layer_0.w", DataType::kFloat32, {2}, two}});
  EXPECT_NE(status().find("ambiguous"), std::string::npos);
  write_safetensors(dir.file("g.safetensors"), {{"enc::layer.0.w", DataType::kInt32, {2}, two}});
  EXPECT_NE(status().find("dtype I32 does not match"), std::string::npos) << status();
  write_safetensors(dir.file("g.safetensors"), {{"other", DataType::kFloat32, {2}, two}});
  EXPECT_NE(status().find("weights 'enc::layer.0.w' not found"), std::string::npos) << status();
  // BF16 widens to float32 (1.0 and 2.0 are exact in bfloat16).
  std::string st =
      *format::safetensors_header({{"enc::layer.0.w", DataType::kUint8, {2}, nullptr, 4}});
  st.replace(st.find("\"U8\""), 4, "\"BF16\"");
  write_file(dir.file("g.safetensors"), st + std::string("\x80\x3f\x00\x40", 4));
  auto bf = load_graph_file(dir.file("g.webnn"));
  ASSERT_TRUE(bf.has_value()) << bf.status().message();

  // Hostile files: every truncation, offsets past the end, header length past the end.
  write_safetensors(dir.file("g.safetensors"), {{"enc::layer.0.w", DataType::kFloat32, {2}, two}});
  std::string good = read_bytes(dir.file("g.safetensors"));
  for (size_t n = 0; n < good.size(); ++n) {
    write_file(dir.file("g.safetensors"), good.substr(0, n));
    EXPECT_FALSE(load_graph_file(dir.file("g.webnn")).has_value()) << n;
  }
  std::string huge = good;
  huge[7] = '\x7f';
  write_file(dir.file("g.safetensors"), huge);
  // The length field is not echoed as a number: the file may not be SafeTensors at all.
  EXPECT_NE(status().find("not a SafeTensors file"), std::string::npos) << status();
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string mutated = good;
    for (int k = 0; k < 3; ++k) mutated[rng() % mutated.size()] = static_cast<char>(rng());
    write_file(dir.file("g.safetensors"), mutated);
    (void)load_graph_file(dir.file("g.webnn"));  // any outcome but a crash
  }
  std::string header =
      "{\"t\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],"
      "\"data_offsets\":[0,8]}}";
  write_file(dir.file("g.safetensors"), std::string(1, static_cast<char>(header.size())) +
                                            std::string(7, '\0') + header + two);
  EXPECT_NE(status().find("do not match"), std::string::npos) << status();
}

// SafeTensors has no holes: a float32 tensor stored after 3 int8 bytes starts at an odd
// offset. Kernels read constants as float*, so the loader copies such a tensor to aligned
// storage (found by UBSan: a misaligned float load in the reference dequantizeLinear).
TEST(FormatWeightsTest, TensorsAtUnalignedOffsetsLoadAligned) {
  TempDir dir;
  write_file(dir.file("g.webnn"), R"(webnn_graph "g" v2 {
  inputs { x: f32[2]; }
  consts { q: i8[3] @weights("q"); w: f32[2] @weights("w"); }
  nodes { y = add(x, w); }
  outputs { y; }
})");
  write_safetensors(dir.file("g.safetensors"),
                    {{"q", DataType::kInt8, {3}, std::string("\x01\x02\x03", 3)},
                     {"w", DataType::kFloat32, {2}, bytes_of({1.5f, -2.0f})}});
  auto g = load_graph_file(dir.file("g.webnn"));
  ASSERT_TRUE(g.has_value()) << g.status().message();
  int found = 0;
  for (const Operand& o : g->operands) {
    if (o.kind != OperandKind::kConstant || o.name != "w") continue;
    ++found;
    ASSERT_TRUE(o.constant);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(o.constant->data()) % alignof(float), 0u);
    float got[2];
    ASSERT_EQ(o.constant->size(), sizeof(got));
    std::memcpy(got, o.constant->data(), sizeof(got));
    EXPECT_EQ(got[0], 1.5f);
    EXPECT_EQ(got[1], -2.0f);
  }
  EXPECT_EQ(found, 1);
}

TEST(FormatHostileTest, TruncationsDeepNestingAndHugeShapes) {
  std::string text = token_mixer();
  for (size_t n = 0; n + 1 < text.size(); ++n) {
    auto g = load(text.substr(0, n));
    // The only valid prefix is the file without its final newline.
    if (n != text.size() - 1) EXPECT_FALSE(g.has_value()) << n;
  }
  // Random byte edits of a valid file: any outcome but a crash (run under ASan/UBSan too).
  std::mt19937 rng(11);
  const std::string alphabet = "{}[]():;,=@\"#\\-.0123456789eE\n xyz\xC3\xFF";
  for (int trial = 0; trial < 3000; ++trial) {
    std::string mutated = text;
    for (int k = 0; k < 1 + trial % 4; ++k) {
      size_t at = rng() % mutated.size();
      char c = alphabet[rng() % alphabet.size()];
      if (rng() % 2)
        mutated[at] = c;
      else
        mutated.insert(mutated.begin() + at, c);
    }
    (void)load(mutated);
    (void)load("{\"inputs\": {\"x\": {\"dataType\": \"float32\", \"shape\": [2]}}, " +
               mutated.substr(0, trial % 64) + "}");
  }
  std::string deep = "webnn_graph \"g\" v2 { inputs { x: f32[1]; } nodes { y = relu(x, a=" +
                     std::string(100000, '[') + "); } }";
  EXPECT_NE(load_error(deep).find("nested deeper"), std::string::npos);
  EXPECT_NE(load_error("{\"x\": " + std::string(100000, '[')).find("nesting deeper"),
            std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { consts { c: f32[65536, 65536] @scalar(1); } }")
                .find("store a constant this large"),
            std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { inputs { x: f32[99999999999999999999]; } }")
                .find("out of range"),
            std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { inputs { x: f32[1,1,1,1,1,1,1,1,1]; } }")
                .find("rank exceeds"),
            std::string::npos);
  EXPECT_NE(load_error("webnn_graph \"g\" v2 { consts { c: f32[2147483648] @scalar(1); } }")
                .find("not valid"),
            std::string::npos);
}

// ---- every WPT graph: save -> load -> save is byte-identical -------------------------------

Value decode_wpt(const Value& v) {
  if (v.kind == Value::Kind::kString) {
    if (v.s == "NaN") return Value::number(NAN);
    if (v.s == "Infinity") return Value::number(INFINITY);
    if (v.s == "-Infinity") return Value::number(-INFINITY);
    bool digits = !v.s.empty() && v.s.find_first_not_of("-0123456789") == std::string::npos;
    if (digits) {
      if (v.s[0] == '-') return Value::integer(std::stoll(v.s));
      uint64_t u = std::stoull(v.s);
      return u > INT64_MAX ? Value::uinteger(u) : Value::integer(static_cast<int64_t>(u));
    }
  }
  if (v.kind == Value::Kind::kArray) {
    Value a = Value::array();
    for (const Value& item : v.items) a.items.push_back(decode_wpt(item));
    return a;
  }
  return v;
}

std::vector<uint8_t> wpt_tensor_bytes(const Value& data, DataType t) {
  std::vector<uint8_t> out, nibbles;
  auto put = [&](const auto& x) {
    const auto* p = reinterpret_cast<const uint8_t*>(&x);
    out.insert(out.end(), p, p + sizeof x);
  };
  for (const Value& raw : data.items) {
    Value v = decode_wpt(raw);
    int64_t i = v.kind == Value::Kind::kInt    ? v.i
                : v.kind == Value::Kind::kUint ? static_cast<int64_t>(v.u)
                // Only used for integer types; float data may be inf or huge (no UB casts).
                : std::fabs(v.as_double()) < 9.2e18 ? static_cast<int64_t>(v.as_double())
                                                    : 0;
    switch (t) {
      case DataType::kFloat32:
        put(static_cast<float>(v.as_double()));
        break;
      case DataType::kFloat16:
        put(static_cast<float16>(v.as_double()));
        break;
      case DataType::kInt32:
      case DataType::kUint32:
        put(static_cast<int32_t>(i));
        break;
      case DataType::kInt64:
      case DataType::kUint64:
        put(i);
        break;
      case DataType::kInt8:
      case DataType::kUint8:
        put(static_cast<int8_t>(i));
        break;
      case DataType::kInt4:
      case DataType::kUint4:
        nibbles.push_back(static_cast<uint8_t>(i));
        break;
    }
  }
  if (is_4bit(t)) {
    out.resize((nibbles.size() + 1) / 2);
    pack_4bit(nibbles.data(), nibbles.size(), out.data());
  }
  return out;
}

// Builds a WPT case through GraphBuilder with the file reader's argument mapping (the WPT
// argument names are the WebNN camelCase names the text format uses).
Expected<Graph> build_wpt_graph(const Value& graph) {
  GraphBuilder b;
  std::map<std::string, OperandId> names;
  for (const auto& [name, tensor] : graph.find("inputs")->members) {
    const Value& desc = *tensor.find("descriptor");
    DataType type = *parse_data_type(desc.find("dataType")->s);
    Shape shape;
    for (const Value& d : desc.find("shape")->items) shape.push_back(Dim(d.i));
    const Value* constant = tensor.find("constant");
    Expected<OperandId> id =
        constant && constant->b
            ? b.constant({type, shape}, wpt_tensor_bytes(*tensor.find("data"), type))
            : b.input(name, shape, type);
    if (!id) return id.status();
    names[name] = *id;
  }
  auto rename = [](const std::string& k) {
    return k == "type"           ? std::string("to")
           : k == "roundingType" ? std::string("outputShapeRounding")
                                 : k;
  };
  for (const Value& op : graph.find("operators")->items) {
    OpKind kind = *op_from_spec_name(op.find("name")->s);
    std::vector<format::ArgDoc> args;
    for (const Value& arg : op.find("arguments")->items) {
      const auto& [key, value] = arg.members[0];
      if (key != "options") {
        args.push_back({rename(key), decode_wpt(value), {}});
        continue;
      }
      for (const auto& [k, v] : value.members) args.push_back({rename(k), decode_wpt(v), {}});
    }
    OpParams params = default_params(kind);
    std::string label;
    auto resolve = [&](const std::string& n) -> std::optional<OperandId> {
      auto it = names.find(n);
      return it == names.end() ? std::nullopt : std::optional<OperandId>(it->second);
    };
    WEBNN_RETURN_IF_ERROR(format::apply_args(kind, args, resolve, "wpt", {}, params, label));
    WEBNN_ASSIGN_OR_RETURN(std::vector<OperandId> outs, b.add_op(kind, params, label));
    const Value& out_names = *op.find("outputs");
    if (out_names.kind == Value::Kind::kString) {
      names[out_names.s] = outs[0];
    } else {
      for (size_t k = 0; k < out_names.items.size(); ++k) names[out_names.items[k].s] = outs[k];
    }
  }
  std::vector<NamedOperand> outputs;
  for (const auto& [name, tensor] : graph.find("expectedOutputs")->members) {
    outputs.push_back({name, names.at(name)});
  }
  return b.extract(outputs);
}

TEST(FormatWptTest, EverySavedGraphReloadsAndResavesByteIdentical) {
  // Not writable in the text format: a non-identifier input name, and clamp limits of
  // +inf/-inf on the bounded side or NaN (format.md §5.2: non-finite numbers cannot be written).
  const std::set<std::string> unwritable = {"add/10", "clamp/45", "clamp/46", "clamp/49",
                                            "clamp/50"};
  TempDir dir;
  int cases = 0, round_trips = 0, rejected = 0;
  for (const auto& entry : fs::directory_iterator(WEBNN_WPT_DIR)) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "INDEX.json") continue;
    auto file = format::parse_json(read_bytes(entry.path()), entry.path());
    ASSERT_TRUE(file.has_value()) << file.status().message();
    const std::string op = file->find("operation")->s;
    const auto& tests = file->find("tests")->items;
    for (size_t index = 0; index < tests.size(); ++index) {
      ++cases;
      const std::string id = op + "/" + std::to_string(index);
      auto g = build_wpt_graph(*tests[index].find("graph"));
      ASSERT_TRUE(g.has_value()) << id << ": " << g.status().message();
      Status saved = save_graph(*g, dir.file("a.webnn"));
      if (unwritable.count(id)) {
        EXPECT_EQ(saved.kind(), ErrorKind::kValue) << id;
        ++rejected;
        continue;
      }
      ASSERT_TRUE(saved.is_ok()) << id << ": " << saved.message();
      auto loaded = load_graph_file(dir.file("a.webnn"));
      ASSERT_TRUE(loaded.has_value()) << id << ": " << loaded.status().message();
      ASSERT_EQ(loaded->outputs.size(), g->outputs.size());
      for (size_t k = 0; k < g->outputs.size(); ++k) {
        EXPECT_EQ(loaded->outputs[k].name, g->outputs[k].name) << id;
        EXPECT_EQ(loaded->desc(loaded->outputs[k].id), g->desc(g->outputs[k].id)) << id;
      }
      ASSERT_TRUE(save_graph(*loaded, dir.file("b.webnn")).is_ok()) << id;
      ASSERT_EQ(read_bytes(dir.file("b.webnn")), read_bytes(dir.file("a.webnn"))) << id;
      ASSERT_EQ(read_bytes(dir.file("b.safetensors")), read_bytes(dir.file("a.safetensors"))) << id;
      fs::remove(dir.file("a.safetensors"));
      fs::remove(dir.file("b.safetensors"));
      ++round_trips;
    }
  }
  EXPECT_EQ(cases, 2227);
  EXPECT_EQ(round_trips, 2222);
  EXPECT_EQ(rejected, 5);
}

}  // namespace
}  // namespace webnn
