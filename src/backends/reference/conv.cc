// Reference kernels for the conv family. TODO: being implemented.
#include "backends/reference/kernels.h"

namespace webnn {

void register_reference_conv(KernelTable&) {}

}  // namespace webnn
