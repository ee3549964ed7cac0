#include "backends/registry.h"

#include "backends/cpu/cpu_backend.h"
#include "backends/reference/reference_backend.h"

namespace webnn {

const std::vector<const Backend*>& registered_backends() {
  static const std::vector<const Backend*> backends = {&cpu_backend(), &reference_backend()};
  return backends;
}

const Backend* find_backend(const std::string& name) {
  for (const Backend* b : registered_backends()) {
    if (name == b->name()) return b;
  }
  return nullptr;
}

}  // namespace webnn
