// Reference kernels for the quantization family. TODO: being implemented.
#include "backends/reference/kernels.h"

namespace webnn {

void register_reference_quantization(KernelTable&) {}

}  // namespace webnn
