// Reference kernels for the normalization family. TODO: being implemented.
#include "backends/reference/kernels.h"

namespace webnn {

void register_reference_normalization(KernelTable&) {}

}  // namespace webnn
