"""Converters, one module per operator family; importing them fills the TABLE."""

from . import (  # noqa: F401  (imported for their registrations)
    activation,
    indexing,
    linalg,
    nn,
    reduction,
    elementwise,
    tensor,
)
from .registry import TABLE, lookup

__all__ = ["TABLE", "lookup"]
