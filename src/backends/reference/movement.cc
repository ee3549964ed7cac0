// Reference kernels for the movement family. TODO: being implemented.
#include "backends/reference/kernels.h"

namespace webnn {

void register_reference_movement(KernelTable&) {}

}  // namespace webnn
