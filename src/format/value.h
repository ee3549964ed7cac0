// Values shared by the text parser, the JSON parser and the printer: literals of named
// arguments, JSON documents (graph JSON form, manifests, SafeTensors headers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "webnn/status.h"

namespace webnn::format {

// 1-based position in a source file; line 0 means unknown.
struct Loc {
  int line = 0;
  int col = 0;
};

// Positions of non-decreasing byte offsets of one text, tracked incrementally so that a reader
// asking for every token's position stays linear in the text's size. Columns count code
// points. The one line/column rule of the text lexer, the JSON parser and loc_of().
class LocTracker {
 public:
  explicit LocTracker(std::string_view text) : text_(text) {}
  Loc at(size_t offset) {
    if (offset < pos_) *this = LocTracker(text_);  // a step back: count again from the start
    for (; pos_ < offset && pos_ < text_.size(); ++pos_) {
      char c = text_[pos_];
      if (c == '\n') {
        ++loc_.line;
        loc_.col = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {  // not a continuation byte
        ++loc_.col;
      }
    }
    return loc_;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  Loc loc_{1, 1};
};

struct Value {
  enum class Kind : uint8_t {
    kNull,
    kBool,
    kInt,     // fits int64
    kUint,    // above INT64_MAX, fits uint64
    kDouble,  // written with '.', 'e' or 'E'
    kString,
    kIdent,  // bare identifier (text format only): a value name
    kArray,
    kObject,
  };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;  // kString, kIdent
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;  // in source order, keys unique
  Loc loc;

  static Value null() { return Value{}; }
  static Value boolean(bool v) {
    Value x;
    x.kind = Kind::kBool;
    x.b = v;
    return x;
  }
  static Value integer(int64_t v) {
    Value x;
    x.kind = Kind::kInt;
    x.i = v;
    return x;
  }
  static Value uinteger(uint64_t v) {
    Value x;
    x.kind = Kind::kUint;
    x.u = v;
    return x;
  }
  static Value number(double v) {
    Value x;
    x.kind = Kind::kDouble;
    x.d = v;
    return x;
  }
  static Value string(std::string v, Kind kind = Kind::kString) {
    Value x;
    x.kind = kind;
    x.s = std::move(v);
    return x;
  }
  static Value array(std::vector<Value> v = {}) {
    Value x;
    x.kind = Kind::kArray;
    x.items = std::move(v);
    return x;
  }
  static Value object() {
    Value x;
    x.kind = Kind::kObject;
    return x;
  }

  bool is_integer() const { return kind == Kind::kInt || kind == Kind::kUint; }
  bool is_number() const { return is_integer() || kind == Kind::kDouble; }
  bool is_name() const { return kind == Kind::kIdent || kind == Kind::kString; }
  double as_double() const {
    return kind == Kind::kInt    ? static_cast<double>(i)
           : kind == Kind::kUint ? static_cast<double>(u)
                                 : d;
  }
  const Value* find(std::string_view key) const {
    for (const auto& [k, v] : members) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  // Deep equality; doubles compare by bit pattern so -0.0 and 0.0 differ (lossless writer).
  bool same_as(const Value& o) const;
  const char* kind_name() const;
};

// `s` with control characters (and DEL) written as \xNN: names and strings echoed from a
// hostile file cannot put raw bytes or terminal escapes into an error message.
inline std::string escape_control(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

// "path:line:col: message" as an kIo error (format.md: load errors are OSError).
template <class... Args>
Status error_at(const std::string& source, Loc loc, const Args&... args) {
  if (loc.line > 0) {
    return Status(ErrorKind::kIo,
                  escape_control(str_cat(source, ":", loc.line, ":", loc.col, ": ", args...)));
  }
  return Status(ErrorKind::kIo, escape_control(str_cat(source, ": ", args...)));
}

// Identifier rule of format.md §2 (first char A-Z a-z _ / $, then also digits and '.').
bool is_text_identifier(std::string_view s);
// The two character classes of that rule: the lexer reads and the printer writes by them.
inline bool is_identifier_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '/' || c == '$';
}
inline bool is_identifier_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '/';
}
// True for names a writer must not use for values (`true`, `false`, `null`).
bool is_reserved_word(std::string_view s);

// Checks `text` is valid UTF-8; on failure sets `loc` to the first bad byte's position.
bool valid_utf8(std::string_view text, Loc* loc);
// Position of byte `offset` of `text` (columns count code points).
Loc loc_of(std::string_view text, size_t offset);

// JSON string literal with the escapes JSON requires.
std::string json_quote(std::string_view s);
// Shortest decimal text that parses back to the same double, always with '.' or 'e'
// (format.md §6.6): 1.0, 0.2, 1e-05. Only finite values.
std::string format_double(double v);

}  // namespace webnn::format
