// Tokenizer of the `.webnn` text format (format.md §2). Streams tokens on demand so a large
// `@bytes([...])` list is never held as a token vector.
#pragma once

#include <deque>
#include <string>
#include <string_view>

#include "format/value.h"

namespace webnn::format {

struct Token {
  enum class Kind { kEof, kError, kIdent, kString, kNumber, kPunct, kAt };
  Kind kind = Kind::kEof;
  std::string text;         // identifier, string contents, number text, word after '@', error
  char punct = 0;           // kPunct: one of { } [ ] ( ) : ; , =
  bool is_integer = false;  // kNumber: no '.', 'e' or 'E'
  Loc loc;
};

class Lexer {
 public:
  // `text` must be valid UTF-8 without a BOM.
  Lexer(std::string_view text) : text_(text), locs_(text) {}

  // The k-th token ahead (0 = next). After an error every further token is that kError.
  const Token& peek(size_t k = 0);
  Token next();

 private:
  Token scan();
  Loc here();
  Token error_token(Loc loc, std::string message);

  std::string_view text_;
  size_t pos_ = 0;
  LocTracker locs_;
  std::deque<Token> ahead_;
};

}  // namespace webnn::format
