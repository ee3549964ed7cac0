// libFuzzer entry point; WEBNN_FUZZ_TARGET names the target (one executable per target).
#include <cstdio>
#include <cstdlib>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string finding = webnn::fuzz::run_target(WEBNN_FUZZ_TARGET, data, size);
  if (!finding.empty()) {
    // A finding is a crash for libFuzzer, so it saves the input as a reproducer.
    std::fprintf(stderr, "webnn fuzz finding (%s): %s\n", WEBNN_FUZZ_TARGET, finding.c_str());
    std::abort();
  }
  return 0;
}
