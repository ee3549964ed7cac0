// Reference kernels for the gather family. TODO: being implemented.
#include "backends/reference/kernels.h"

namespace webnn {

void register_reference_gather(KernelTable&) {}

}  // namespace webnn
