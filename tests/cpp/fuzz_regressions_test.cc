// Replays every input the fuzzers found (tests/data/fuzz_regressions/<target>/) and the seed
// corpora (tests/fuzz/seeds/<target>/): each must now be handled without a finding.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace {

namespace fs = std::filesystem;

const char* const kTargets[] = {"text_parser", "json_graph", "weights_manifest", "safetensors",
                                "builder"};

int replay_dir(const fs::path& root) {
  int replayed = 0;
  for (const char* target : kTargets) {
    fs::path dir = root / target;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
      EXPECT_EQ(webnn::fuzz::run_target(target, bytes.data(), bytes.size()), "")
          << target << " " << entry.path();
      ++replayed;
    }
  }
  return replayed;
}

TEST(FuzzRegressions, FoundInputsAreHandled) {
  replay_dir(fs::path(WEBNN_TEST_DATA_DIR) / "fuzz_regressions");
}

TEST(FuzzRegressions, SeedCorporaAreHandled) {
  EXPECT_GT(replay_dir(fs::path(WEBNN_TEST_DATA_DIR) / ".." / "fuzz" / "seeds"), 0);
}

}  // namespace
