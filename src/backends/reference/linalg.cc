// Reference kernels for the linalg family. TODO: being implemented.
#include "backends/reference/kernels.h"

namespace webnn {

void register_reference_linalg(KernelTable&) {}

}  // namespace webnn
