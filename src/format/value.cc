#include "format/value.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace webnn::format {

bool Value::same_as(const Value& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return b == o.b;
    case Kind::kInt:
      return i == o.i;
    case Kind::kUint:
      return u == o.u;
    case Kind::kDouble:
      return std::memcmp(&d, &o.d, sizeof d) == 0;
    case Kind::kString:
    case Kind::kIdent:
      return s == o.s;
    case Kind::kArray:
      if (items.size() != o.items.size()) return false;
      for (size_t k = 0; k < items.size(); ++k) {
        if (!items[k].same_as(o.items[k])) return false;
      }
      return true;
    case Kind::kObject:
      if (members.size() != o.members.size()) return false;
      for (size_t k = 0; k < members.size(); ++k) {
        if (members[k].first != o.members[k].first) return false;
        if (!members[k].second.same_as(o.members[k].second)) return false;
      }
      return true;
  }
  return false;
}

const char* Value::kind_name() const {
  switch (kind) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean";
    case Kind::kInt:
    case Kind::kUint:
      return "an integer";
    case Kind::kDouble:
      return "a floating-point number";
    case Kind::kString:
      return "a string";
    case Kind::kIdent:
      return "an identifier";
    case Kind::kArray:
      return "an array";
    case Kind::kObject:
      return "an object";
  }
  return "a value";
}

bool is_text_identifier(std::string_view s) {
  if (s.empty() || !is_identifier_start(s[0])) return false;
  for (char c : s.substr(1)) {
    if (!is_identifier_char(c)) return false;
  }
  return true;
}

bool is_reserved_word(std::string_view s) { return s == "true" || s == "false" || s == "null"; }

bool valid_utf8(std::string_view text, Loc* loc) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    }
    bool ok = len != 0 && n - i >= len;
    for (size_t k = 1; ok && k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (!ok) {
      if (loc) *loc = loc_of(text, i);
      return false;
    }
    i += len;
  }
  return true;
}

Loc loc_of(std::string_view text, size_t offset) { return LocTracker(text).at(offset); }

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string format_double(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

}  // namespace webnn::format
