"""webnn: a native C++ engine for the W3C WebNN API.

The classes are implemented in the ``_webnn`` extension module; this package only
re-exports them (plus the pure-Python helpers).
"""

from ._webnn import (
    ML,
    MLContext,
    MLGraph,
    MLGraphBuilder,
    MLOperand,
    MLTensor,
    __version__,
    backends,
)
from ._async import AsyncMLContext

__all__ = [
    "ML",
    "MLContext",
    "MLGraph",
    "MLGraphBuilder",
    "MLOperand",
    "MLTensor",
    "AsyncMLContext",
    "__version__",
    "backends",
]
