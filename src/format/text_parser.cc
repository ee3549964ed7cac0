// Parser of the `.webnn` text form (format.md §3): tokens -> GraphDoc. Only syntax is
// checked here; names, operations and arguments are checked by the loader and GraphBuilder.
#include <charconv>
#include <cmath>

#include "format/document.h"
#include "format/lexer.h"

namespace webnn::format {

namespace {

constexpr int kMaxValueDepth = 64;

using K = Token::Kind;

std::string describe(const Token& t) {
  switch (t.kind) {
    case K::kEof:
      return "end of input";
    case K::kError:
      return t.text;
    case K::kIdent:
      return "'" + t.text + "'";
    case K::kString:
      return "string \"" + t.text + "\"";
    case K::kNumber:
      return "number " + t.text;
    case K::kPunct:
      return std::string("'") + t.punct + "'";
    case K::kAt:
      return "'@" + t.text + "'";
  }
  return "token";
}

class TextParser {
 public:
  TextParser(std::string_view text, const std::string& source) : lex_(text), source_(source) {}

  Expected<GraphDoc> parse() {
    GraphDoc doc;
    doc.source = source_;
    WEBNN_RETURN_IF_ERROR(parse_header(doc));
    while (true) {
      const Token& t = lex_.peek();
      if (is_punct(t, '}')) {
        lex_.next();
        break;
      }
      if (t.kind == K::kIdent && is_punct(lex_.peek(1), '{')) {
        Token word = lex_.next();
        lex_.next();
        if (word.text == "inputs") {
          WEBNN_RETURN_IF_ERROR(parse_decls(doc.inputs, false));
          continue;
        }
        if (word.text == "consts") {
          WEBNN_RETURN_IF_ERROR(parse_decls(doc.consts, true));
          continue;
        }
        if (word.text == "nodes") {
          WEBNN_RETURN_IF_ERROR(parse_nodes(doc));
          continue;
        }
        if (word.text == "outputs") {
          WEBNN_RETURN_IF_ERROR(parse_outputs(doc));
          continue;
        }
        return error(word, "unknown block '", word.text,
                     "' (expected inputs, consts, nodes or outputs)");
      }
      if (t.kind == K::kEof) return error(t, "missing '}' closing the graph");
      return unexpected(t, "a block (inputs, consts, nodes, outputs) or '}'");
    }
    const Token& rest = lex_.peek();
    if (rest.kind != K::kEof) {
      return error(rest, "unexpected ", describe(rest), " after the graph's closing '}'");
    }
    return doc;
  }

 private:
  static bool is_punct(const Token& t, char c) { return t.kind == K::kPunct && t.punct == c; }

  template <class... Args>
  Status error(const Token& t, const Args&... args) {
    if (t.kind == K::kError) return error_at(source_, t.loc, t.text);
    return error_at(source_, t.loc, args...);
  }
  Status unexpected(const Token& t, const char* wanted) {
    return error(t, "expected ", wanted, ", found ", describe(t));
  }
  Status expect_punct(char c) {
    Token t = lex_.next();
    if (!is_punct(t, c)) {
      std::string wanted = std::string("'") + c + "'";
      return unexpected(t, wanted.c_str());
    }
    return Status::ok();
  }
  Status expect_ident(Token& out, const char* wanted) {
    out = lex_.next();
    if (out.kind != K::kIdent || is_reserved_word(out.text)) return unexpected(out, wanted);
    return Status::ok();
  }
  Status expect_string(std::string& out, const char* wanted) {
    Token t = lex_.next();
    if (t.kind != K::kString) return unexpected(t, wanted);
    out = std::move(t.text);
    return Status::ok();
  }
  // Int of the grammar: decimal digits, no sign, within int64.
  Status expect_int(int64_t& out, const char* wanted) {
    Token t = lex_.next();
    if (t.kind != K::kNumber || !t.is_integer || t.text[0] == '-') return unexpected(t, wanted);
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), out);
    if (ec != std::errc()) return error(t, "integer ", t.text, " is out of range");
    return Status::ok();
  }

  Status parse_header(GraphDoc& doc) {
    Token t = lex_.next();
    if (t.kind != K::kIdent || t.text != "webnn_graph") {
      return unexpected(t, "'webnn_graph' at the start of the file");
    }
    WEBNN_RETURN_IF_ERROR(expect_string(doc.name, "the graph name string"));
    // "v2" lexes as one identifier; "v 2" as an identifier and a number.
    Token v = lex_.next();
    std::string digits;
    if (v.kind == K::kIdent && v.text == "v") {
      Token n = lex_.next();
      if (n.kind != K::kNumber || !n.is_integer || n.text[0] == '-') {
        return unexpected(n, "the format version");
      }
      digits = n.text;
    } else if (v.kind == K::kIdent && v.text.size() > 1 && v.text[0] == 'v' &&
               v.text.find_first_not_of("0123456789", 1) == std::string::npos) {
      digits = v.text.substr(1);
    } else {
      return unexpected(v, "the format version (v2)");
    }
    if (digits != "1" && digits != "2") {
      return error(v, "unsupported format version ", digits, " (this reader accepts 1 and 2)");
    }
    if (lex_.peek().kind == K::kAt) {
      Token q = lex_.next();
      if (q.text != "quantized") return unexpected(q, "'@quantized' or '{'");
      doc.quantized = true;
    }
    return expect_punct('{');
  }

  Status parse_type(DeclDoc& d, bool is_const) {
    Token t = lex_.next();
    if (t.kind != K::kIdent) return unexpected(t, "a data type (f32, f16, i32, ...)");
    auto type = short_type_name(t.text);
    if (!type) return error(t, "unknown data type '", t.text, "'");
    d.data_type = *type;
    WEBNN_RETURN_IF_ERROR(expect_punct('['));
    if (is_punct(lex_.peek(), ']')) {
      lex_.next();
      return Status::ok();
    }
    while (true) {
      const Token& p = lex_.peek();
      if (d.shape.size() >= kMaxRank) {
        return error(p, "rank exceeds the maximum of ", kMaxRank);
      }
      if (p.kind == K::kIdent && p.text == "dyn") {
        Token dyn = lex_.next();
        if (is_const) return error(dyn, "dyn(...) dimensions are not allowed in constants");
        std::string name;
        int64_t max_size = 0;
        WEBNN_RETURN_IF_ERROR(expect_punct('('));
        WEBNN_RETURN_IF_ERROR(expect_string(name, "the dynamic dimension name"));
        WEBNN_RETURN_IF_ERROR(expect_punct(','));
        WEBNN_RETURN_IF_ERROR(expect_int(max_size, "the dynamic dimension's maximum size"));
        WEBNN_RETURN_IF_ERROR(expect_punct(')'));
        d.shape.push_back(Dim(std::move(name), max_size));
      } else {
        int64_t size = 0;
        WEBNN_RETURN_IF_ERROR(expect_int(size, "a dimension"));
        d.shape.push_back(Dim(size));
      }
      Token sep = lex_.next();
      if (is_punct(sep, ']')) return Status::ok();
      if (!is_punct(sep, ',')) return unexpected(sep, "',' or ']'");
    }
  }

  Status parse_const_init(DeclDoc& d) {
    Token at = lex_.next();
    d.init.loc = at.loc;
    WEBNN_RETURN_IF_ERROR(expect_punct('('));
    if (at.text == "weights") {
      d.init.kind = ConstInit::Kind::kWeights;
      WEBNN_RETURN_IF_ERROR(expect_string(d.init.key, "the weights key string"));
    } else if (at.text == "scalar") {
      d.init.kind = ConstInit::Kind::kScalar;
      Token n = lex_.next();
      if (n.kind != K::kNumber) return unexpected(n, "a number");
      WEBNN_RETURN_IF_ERROR(number_value(n, d.init.scalar));
    } else if (at.text == "bytes") {
      d.init.kind = ConstInit::Kind::kBytes;
      d.init.bytes.clear();
      WEBNN_RETURN_IF_ERROR(expect_punct('['));
      if (is_punct(lex_.peek(), ']')) {
        lex_.next();
      } else {
        while (true) {
          const Token& p = lex_.peek();
          Token where = p;
          int64_t b = 0;
          WEBNN_RETURN_IF_ERROR(expect_int(b, "a byte value"));
          if (b > 255) return error(where, "byte value ", b, " is out of range 0-255");
          d.init.bytes.push_back(static_cast<uint8_t>(b));
          Token sep = lex_.next();
          if (is_punct(sep, ']')) break;
          if (!is_punct(sep, ',')) return unexpected(sep, "',' or ']'");
        }
      }
    } else {
      return error(at, "unknown initialiser '@", at.text,
                   "' (expected @weights, @scalar or @bytes)");
    }
    return expect_punct(')');
  }

  Status parse_decls(std::vector<DeclDoc>& out, bool is_const) {
    while (!is_punct(lex_.peek(), '}')) {
      Token name;
      WEBNN_RETURN_IF_ERROR(
          expect_ident(name, is_const ? "a constant name or '}'" : "an input name or '}'"));
      DeclDoc d;
      d.name = std::move(name.text);
      d.loc = name.loc;
      WEBNN_RETURN_IF_ERROR(expect_punct(':'));
      WEBNN_RETURN_IF_ERROR(parse_type(d, is_const));
      if (is_const) {
        // No initialiser means @weights("<name>"); several: the last wins (format.md §4.3).
        d.init.kind = ConstInit::Kind::kWeights;
        d.init.key = d.name;
        d.init.loc = d.loc;
        while (lex_.peek().kind == K::kAt) WEBNN_RETURN_IF_ERROR(parse_const_init(d));
      }
      WEBNN_RETURN_IF_ERROR(expect_punct(';'));
      out.push_back(std::move(d));
    }
    lex_.next();
    return Status::ok();
  }

  Status number_value(const Token& t, Value& v) {
    v.loc = t.loc;
    if (!t.is_integer) {
      double d = 0;
      auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), d);
      if (ec != std::errc() || !std::isfinite(d))
        return error(t, "number ", t.text, " is out of range");
      v.kind = Value::Kind::kDouble;
      v.d = d;
      return Status::ok();
    }
    bool negative = t.text[0] == '-';
    const char* begin = t.text.data() + (negative ? 1 : 0);
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(begin, t.text.data() + t.text.size(), u);
    if (ec != std::errc() || (negative && u > uint64_t{1} << 63)) {
      return error(t, "integer ", t.text, " is out of the 64-bit range");
    }
    if (negative) {
      v.kind = Value::Kind::kInt;
      v.i = u == uint64_t{1} << 63 ? INT64_MIN : -static_cast<int64_t>(u);
    } else if (u > static_cast<uint64_t>(INT64_MAX)) {
      v.kind = Value::Kind::kUint;
      v.u = u;
    } else {
      v.kind = Value::Kind::kInt;
      v.i = static_cast<int64_t>(u);
    }
    return Status::ok();
  }

  Status parse_value(Value& v, int depth) {
    if (depth > kMaxValueDepth)
      return error(lex_.peek(), "value nested deeper than ", kMaxValueDepth);
    Token t = lex_.next();
    v.loc = t.loc;
    switch (t.kind) {
      case K::kNumber:
        return number_value(t, v);
      case K::kString:
        v.kind = Value::Kind::kString;
        v.s = std::move(t.text);
        return Status::ok();
      case K::kIdent:
        if (t.text == "true" || t.text == "false") {
          v.kind = Value::Kind::kBool;
          v.b = t.text == "true";
        } else if (t.text == "null") {
          v.kind = Value::Kind::kNull;
        } else {
          v.kind = Value::Kind::kIdent;
          v.s = std::move(t.text);
        }
        return Status::ok();
      case K::kPunct:
        if (t.punct == '[') {
          v.kind = Value::Kind::kArray;
          if (is_punct(lex_.peek(), ']')) {
            lex_.next();
            return Status::ok();
          }
          while (true) {
            v.items.emplace_back();
            WEBNN_RETURN_IF_ERROR(parse_value(v.items.back(), depth + 1));
            Token sep = lex_.next();
            if (is_punct(sep, ']')) return Status::ok();
            if (!is_punct(sep, ',')) return unexpected(sep, "',' or ']'");
          }
        }
        if (t.punct == '{') {
          v.kind = Value::Kind::kObject;
          if (is_punct(lex_.peek(), '}')) {
            lex_.next();
            return Status::ok();
          }
          while (true) {
            Token key = lex_.next();
            if (key.kind != K::kString && key.kind != K::kIdent)
              return unexpected(key, "an object key");
            if (v.find(key.text)) return error(key, "duplicate key \"", key.text, "\"");
            WEBNN_RETURN_IF_ERROR(expect_punct(':'));
            Value member;
            WEBNN_RETURN_IF_ERROR(parse_value(member, depth + 1));
            v.members.emplace_back(std::move(key.text), std::move(member));
            Token sep = lex_.next();
            if (is_punct(sep, '}')) return Status::ok();
            if (!is_punct(sep, ',')) return unexpected(sep, "',' or '}'");
          }
        }
        break;
      default:
        break;
    }
    return unexpected(t, "a value");
  }

  Status parse_stmt(GraphDoc& doc) {
    StmtDoc s;
    s.loc = lex_.peek().loc;
    if (is_punct(lex_.peek(), '[')) {
      lex_.next();
      while (true) {
        Token name;
        WEBNN_RETURN_IF_ERROR(expect_ident(name, "a result name"));
        s.outputs.push_back(std::move(name.text));
        Token sep = lex_.next();
        if (is_punct(sep, ']')) break;
        if (!is_punct(sep, ',')) return unexpected(sep, "',' or ']'");
      }
    } else {
      Token name;
      WEBNN_RETURN_IF_ERROR(expect_ident(name, "a statement or '}'"));
      s.outputs.push_back(std::move(name.text));
    }
    WEBNN_RETURN_IF_ERROR(expect_punct('='));
    Token op = lex_.next();
    if (op.kind != K::kIdent || is_reserved_word(op.text) || !is_punct(lex_.peek(), '(')) {
      if (op.kind == K::kError) return error(op);
      return error(op, "expected an operation call after '=' (copy a value with identity(x))");
    }
    s.op = std::move(op.text);
    s.op_loc = op.loc;
    lex_.next();  // '('
    if (is_punct(lex_.peek(), ')')) {
      lex_.next();
    } else {
      while (true) {
        ArgDoc a;
        a.loc = lex_.peek().loc;
        if (lex_.peek().kind == K::kIdent && is_punct(lex_.peek(1), '=')) {
          a.key = lex_.next().text;
          lex_.next();
        }
        WEBNN_RETURN_IF_ERROR(parse_value(a.value, 0));
        if (a.key.empty() && a.value.kind != Value::Kind::kIdent) {
          return error_at(source_, a.loc, "positional arguments must be value names (got ",
                          a.value.kind_name(), "); options are written key=value");
        }
        s.args.push_back(std::move(a));
        Token sep = lex_.next();
        if (is_punct(sep, ')')) break;
        if (!is_punct(sep, ',')) return unexpected(sep, "',' or ')'");
      }
    }
    WEBNN_RETURN_IF_ERROR(expect_punct(';'));
    doc.nodes.push_back(std::move(s));
    return Status::ok();
  }
  Status error(const Token& t) { return error_at(source_, t.loc, t.text); }

  Status parse_nodes(GraphDoc& doc) {
    while (!is_punct(lex_.peek(), '}')) WEBNN_RETURN_IF_ERROR(parse_stmt(doc));
    lex_.next();
    return Status::ok();
  }

  Status parse_outputs(GraphDoc& doc) {
    while (!is_punct(lex_.peek(), '}')) {
      Token name;
      WEBNN_RETURN_IF_ERROR(expect_ident(name, "an output name or '}'"));
      doc.outputs.push_back({name.text, name.text, name.loc});
      const Token& sep = lex_.peek();
      if (is_punct(sep, ',')) {
        lex_.next();
        if (is_punct(lex_.peek(), '}')) return unexpected(lex_.peek(), "an output name");
      } else if (is_punct(sep, ';')) {
        lex_.next();
      } else if (!is_punct(sep, '}')) {
        return unexpected(sep, "',', ';' or '}'");
      }
    }
    lex_.next();
    return Status::ok();
  }

  Lexer lex_;
  const std::string& source_;
};

constexpr struct {
  const char* word;
  DataType type;
} kShortTypes[] = {
    {"f32", DataType::kFloat32}, {"f16", DataType::kFloat16}, {"i32", DataType::kInt32},
    {"u32", DataType::kUint32},  {"i64", DataType::kInt64},   {"u64", DataType::kUint64},
    {"i8", DataType::kInt8},     {"u8", DataType::kUint8},    {"i4", DataType::kInt4},
    {"u4", DataType::kUint4},
};

}  // namespace

std::optional<DataType> short_type_name(std::string_view word) {
  for (const auto& e : kShortTypes) {
    if (word == e.word) return e.type;
  }
  return std::nullopt;
}

const char* short_type_name(DataType t) {
  for (const auto& e : kShortTypes) {
    if (e.type == t) return e.word;
  }
  return "?";
}

Expected<GraphDoc> parse_text(std::string_view text, const std::string& source) {
  Loc bad;
  if (!valid_utf8(text, &bad)) return error_at(source, bad, "invalid UTF-8");
  return TextParser(text, source).parse();
}

}  // namespace webnn::format
