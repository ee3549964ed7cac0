#include "format/lexer.h"

namespace webnn::format {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

const Token& Lexer::peek(size_t k) {
  while (ahead_.size() <= k) {
    if (!ahead_.empty() &&
        (ahead_.back().kind == Token::Kind::kEof || ahead_.back().kind == Token::Kind::kError)) {
      ahead_.push_back(ahead_.back());
    } else {
      ahead_.push_back(scan());
    }
  }
  return ahead_[k];
}

Token Lexer::next() {
  peek(0);
  Token t = std::move(ahead_.front());
  ahead_.pop_front();
  // Keep the terminal token sticky so callers never read past the end or an error.
  if (t.kind == Token::Kind::kEof || t.kind == Token::Kind::kError) ahead_.push_front(t);
  return t;
}

Loc Lexer::here() { return locs_.at(pos_); }

Token Lexer::error_token(Loc loc, std::string message) {
  Token t;
  t.kind = Token::Kind::kError;
  t.text = std::move(message);
  t.loc = loc;
  pos_ = text_.size();
  return t;
}

Token Lexer::scan() {
  // Whitespace and comments.
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  Token t;
  t.loc = here();
  if (pos_ >= text_.size()) return t;  // kEof
  char c = text_[pos_];
  if (is_identifier_start(c)) {
    t.kind = Token::Kind::kIdent;
    t.text += c;  // '$' may only start an identifier
    ++pos_;
    while (pos_ < text_.size()) {
      char d = text_[pos_];
      if (is_identifier_char(d)) {
        t.text += d;
        ++pos_;
      } else if (d == ':' && pos_ + 2 < text_.size() && text_[pos_ + 1] == ':' &&
                 is_identifier_char(text_[pos_ + 2])) {
        // Legacy RustNN sanitisation (format.md §7.4): `::` in identifiers means `__`.
        t.text += "__";
        pos_ += 2;
      } else {
        break;
      }
    }
    return t;
  }
  if (c == '@') {
    ++pos_;
    t.kind = Token::Kind::kAt;
    while (pos_ < text_.size() && is_identifier_char(text_[pos_])) t.text += text_[pos_++];
    if (t.text.empty()) return error_token(t.loc, "expected a word after '@'");
    return t;
  }
  if (c == '"') {
    ++pos_;
    t.kind = Token::Kind::kString;
    while (true) {
      if (pos_ >= text_.size()) return error_token(t.loc, "unterminated string");
      char d = text_[pos_++];
      if (d == '"') break;
      // Only \" and \\ are escapes; any other backslash stands for itself (format.md §2).
      if (d == '\\' && pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\\')) {
        d = text_[pos_++];
      }
      t.text += d;
    }
    return t;
  }
  if (is_digit(c) || (c == '-' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) {
    size_t start = pos_;
    t.kind = Token::Kind::kNumber;
    t.is_integer = true;
    if (c == '-') ++pos_;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      t.is_integer = false;
      if (pos_ >= text_.size() || !is_digit(text_[pos_])) {
        return error_token(t.loc, "invalid number: digits must follow '.'");
      }
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      t.is_integer = false;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (pos_ >= text_.size() || !is_digit(text_[pos_])) {
        return error_token(t.loc, "invalid number: digits must follow the exponent");
      }
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && is_identifier_start(text_[pos_])) {
      return error_token(t.loc,
                         str_cat("invalid number '", text_.substr(start, pos_ - start + 1), "'"));
    }
    t.text = std::string(text_.substr(start, pos_ - start));
    return t;
  }
  switch (c) {
    case '{':
    case '}':
    case '[':
    case ']':
    case '(':
    case ')':
    case ':':
    case ';':
    case ',':
    case '=':
      ++pos_;
      t.kind = Token::Kind::kPunct;
      t.punct = c;
      return t;
    default:
      break;
  }
  if (static_cast<unsigned char>(c) >= 0x80)
    return error_token(t.loc, "unexpected non-ASCII character");
  return error_token(t.loc, "unexpected character");  // position only: no raw bytes echoed
}

}  // namespace webnn::format
