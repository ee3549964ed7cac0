"""Converters, one module per operator family; importing them fills the TABLE."""

from . import (  # noqa: F401  (imported for their registrations)
    activation,
    attention,
    control,
    deform,
    det,
    elementwise,
    extra,
    flex_attention,
    indexing,
    linalg,
    loss,
    microsoft,
    ml,
    ml_encoders,
    ms_decoder,
    ms_fused,
    nn,
    quantization,
    quantized_recurrent,
    recurrent,
    reduction,
    resize,
    roi,
    sequence,
    spectral,
    svm,
    tensor,
    tfidf,
    topk,
    tree_v5,
    trees,
    weight_only,
)
from .registry import TABLE, lookup

__all__ = ["TABLE", "lookup"]
