// Reference kernels for the reduction family. TODO: being implemented.
#include "backends/reference/kernels.h"

namespace webnn {

void register_reference_reduction(KernelTable&) {}

}  // namespace webnn
