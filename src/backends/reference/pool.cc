// Reference kernels for the pool family. TODO: being implemented.
#include "backends/reference/kernels.h"

namespace webnn {

void register_reference_pool(KernelTable&) {}

}  // namespace webnn
