// Reference kernels for the recurrent family. TODO: being implemented.
#include "backends/reference/kernels.h"

namespace webnn {

void register_reference_recurrent(KernelTable&) {}

}  // namespace webnn
