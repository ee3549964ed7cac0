"""webnn: a native C++ engine for the W3C WebNN API.

The classes are implemented in the ``_webnn`` extension module; this package only
re-exports them (plus the pure-Python helpers).
"""

from ._async import AsyncMLContext
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
from .hub import Hub

__all__ = [
    "ML",
    "AsyncMLContext",
    "Hub",
    "MLContext",
    "MLGraph",
    "MLGraphBuilder",
    "MLOperand",
    "MLTensor",
    "__version__",
    "backends",
]
