#include "format/json.h"

#include <cerrno>
#include <charconv>
#include <cmath>

namespace webnn::format {

namespace {

class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& source)
      : text_(text), source_(source), locs_(text) {}

  Expected<Value> parse_document() {
    skip_ws();
    Value v;
    WEBNN_RETURN_IF_ERROR(parse_value(v, 0));
    skip_ws();
    if (pos_ != text_.size()) return error("unexpected text after the JSON document");
    return v;
  }

 private:
  Loc here() { return locs_.at(pos_); }
  template <class... Args>
  Status error(const Args&... args) {
    return error_at(source_, here(), args...);
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  void skip_ws() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }
  bool consume_word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  Status parse_value(Value& out, int depth) {
    if (depth > kMaxJsonDepth) return error("JSON nesting deeper than ", kMaxJsonDepth);
    out.loc = here();
    char c = peek();
    if (c == '{') return parse_object(out, depth);
    if (c == '[') return parse_array(out, depth);
    if (c == '"') {
      out.kind = Value::Kind::kString;
      return parse_string(out.s);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(out);
    if (consume_word("true")) {
      out.kind = Value::Kind::kBool;
      out.b = true;
      return Status::ok();
    }
    if (consume_word("false")) {
      out.kind = Value::Kind::kBool;
      return Status::ok();
    }
    if (consume_word("null")) {
      out.kind = Value::Kind::kNull;
      return Status::ok();
    }
    if (at_end()) return error("unexpected end of JSON input");
    // The offending byte itself is not echoed: the file may not be text at all.
    return error("expected a JSON value (object, array, string, number, true, false or null)");
  }

  Status parse_object(Value& out, int depth) {
    out.kind = Value::Kind::kObject;
    ++pos_;
    skip_ws();
    if (peek() == '}') {
      ++pos_;
      return Status::ok();
    }
    while (true) {
      skip_ws();
      if (peek() != '"') return error("expected a string key in JSON object");
      Loc key_loc = here();
      std::string key;
      WEBNN_RETURN_IF_ERROR(parse_string(key));
      if (out.find(key)) return error_at(source_, key_loc, "duplicate JSON key \"", key, "\"");
      skip_ws();
      if (peek() != ':') return error("expected ':' after JSON key");
      ++pos_;
      skip_ws();
      Value v;
      WEBNN_RETURN_IF_ERROR(parse_value(v, depth + 1));
      out.members.emplace_back(std::move(key), std::move(v));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return Status::ok();
      }
      return error("expected ',' or '}' in JSON object");
    }
  }

  Status parse_array(Value& out, int depth) {
    out.kind = Value::Kind::kArray;
    ++pos_;
    skip_ws();
    if (peek() == ']') {
      ++pos_;
      return Status::ok();
    }
    while (true) {
      skip_ws();
      Value v;
      WEBNN_RETURN_IF_ERROR(parse_value(v, depth + 1));
      out.items.push_back(std::move(v));
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return Status::ok();
      }
      return error("expected ',' or ']' in JSON array");
    }
  }

  Status parse_hex4(uint32_t& cp) {
    if (text_.size() - pos_ < 4) return error("truncated \\u escape");
    cp = 0;
    for (int k = 0; k < 4; ++k) {
      char h = text_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') {
        cp |= h - '0';
      } else if (h >= 'a' && h <= 'f') {
        cp |= h - 'a' + 10;
      } else if (h >= 'A' && h <= 'F') {
        cp |= h - 'A' + 10;
      } else {
        return error("invalid \\u escape");
      }
    }
    return Status::ok();
  }

  static void append_utf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  Status parse_string(std::string& out) {
    Loc start = here();
    ++pos_;  // opening quote
    while (true) {
      if (at_end()) return error_at(source_, start, "unterminated JSON string");
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return Status::ok();
      }
      if (static_cast<unsigned char>(c) < 0x20) return error("control character in JSON string");
      if (c != '\\') {
        out += c;
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) return error_at(source_, start, "unterminated JSON string");
      char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          WEBNN_RETURN_IF_ERROR(parse_hex4(cp));
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo = 0;
            if (!consume_word("\\u")) return error("unpaired surrogate in \\u escape");
            WEBNN_RETURN_IF_ERROR(parse_hex4(lo));
            if (lo < 0xDC00 || lo > 0xDFFF) return error("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return error("unpaired surrogate in \\u escape");
          }
          append_utf8(out, cp);
          break;
        }
        default:
          // Not echoed: `e` may be one byte of a multi-byte character.
          return error(
              "invalid escape in JSON string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
      }
    }
  }

  Status parse_number(Value& out) {
    size_t start = pos_;
    bool negative = peek() == '-';
    if (negative) ++pos_;
    auto digits = [&] {
      size_t n = 0;
      while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_, ++n;
      return n;
    };
    size_t int_start = pos_;
    size_t n = digits();
    if (n == 0) return error("invalid JSON number");
    if (n > 1 && text_[int_start] == '0') return error("leading zero in JSON number");
    bool is_float = false;
    if (peek() == '.') {
      ++pos_;
      is_float = true;
      if (digits() == 0) return error("invalid JSON number");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      is_float = true;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) return error("invalid JSON number");
    }
    std::string_view num = text_.substr(start, pos_ - start);
    if (is_float) {
      double d = 0;
      auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), d);
      if (ec != std::errc() || !std::isfinite(d)) return error("JSON number out of range: ", num);
      out.kind = Value::Kind::kDouble;
      out.d = d;
      return Status::ok();
    }
    std::string_view mag = text_.substr(int_start, pos_ - int_start);
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(mag.data(), mag.data() + mag.size(), u);
    if (ec != std::errc()) return error("JSON integer out of range: ", num);
    if (negative) {
      if (u > uint64_t{1} << 63) return error("JSON integer out of range: ", num);
      out.kind = Value::Kind::kInt;
      out.i = u == uint64_t{1} << 63 ? INT64_MIN : -static_cast<int64_t>(u);
    } else if (u > static_cast<uint64_t>(INT64_MAX)) {
      out.kind = Value::Kind::kUint;
      out.u = u;
    } else {
      out.kind = Value::Kind::kInt;
      out.i = static_cast<int64_t>(u);
    }
    return Status::ok();
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  LocTracker locs_;
};

}  // namespace

Expected<Value> parse_json(std::string_view text, const std::string& source) {
  Loc bad;
  if (!valid_utf8(text, &bad)) return error_at(source, bad, "invalid UTF-8");
  return JsonParser(text, source).parse_document();
}

}  // namespace webnn::format
