#include "format/weights_record.h"

#include <charconv>

#include "format/value.h"

namespace webnn::format {

namespace {

constexpr std::string_view kPrefix = "# webnn-weights:";

}  // namespace

std::string format_weights_record(const WeightsRecord& r) {
  return str_cat(kPrefix, " bytes=", r.bytes, " sha256=", r.sha256, "\n");
}

Expected<std::optional<WeightsRecord>> parse_weights_record(std::string_view source,
                                                            const std::string& path) {
  if (source.substr(0, 3) == "\xEF\xBB\xBF") source.remove_prefix(3);
  if (source.substr(0, kPrefix.size()) != kPrefix) return std::optional<WeightsRecord>();
  std::string_view line = source.substr(0, source.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto bad = [&](const char* why) {
    return error_at(path, Loc{1, 1}, "malformed weights record (", why,
                    "); expected # webnn-weights: bytes=<n> sha256=<hex>");
  };
  std::string_view rest = line.substr(kPrefix.size());
  // `key=value`, after spaces; the value runs to the next space.
  auto take = [&](std::string_view key) -> std::optional<std::string_view> {
    size_t k = rest.find_first_not_of(' ');
    if (k == std::string_view::npos || rest.substr(k, key.size()) != key) return std::nullopt;
    rest.remove_prefix(k + key.size());
    std::string_view value = rest.substr(0, rest.find(' '));
    rest.remove_prefix(value.size());
    return value;
  };
  WeightsRecord r;
  auto bytes = take("bytes=");
  if (!bytes) return bad("bytes is missing");
  auto [end, ec] = std::from_chars(bytes->data(), bytes->data() + bytes->size(), r.bytes);
  if (ec != std::errc() || bytes->empty() || end != bytes->data() + bytes->size()) {
    return bad("bytes is not a number");
  }
  auto digest = take("sha256=");
  if (!digest || digest->size() != 64 ||
      digest->find_first_not_of("0123456789abcdef") != std::string_view::npos) {
    return bad("sha256 must be 64 lower-case hex digits");
  }
  r.sha256 = std::string(*digest);
  if (rest.find_first_not_of(' ') != std::string_view::npos) {
    return bad("unexpected text after the digest");
  }
  return std::optional<WeightsRecord>(std::move(r));
}

}  // namespace webnn::format
