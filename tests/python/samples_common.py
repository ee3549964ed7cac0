"""Helpers for samples_<family>.py (see test_support_limits.py)."""

import importlib
from pathlib import Path

import numpy as np

SAMPLES = {}


def all_samples():
    """Every family's SAMPLES, merged: spec op name -> sample builder."""
    samples = {}
    for path in sorted(Path(__file__).parent.glob("samples_*.py")):
        samples.update(importlib.import_module(path.stem).SAMPLES)
    return samples


def const(builder, shape, data_type, values=None):
    """A constant of `data_type` with small values valid for every type (0..3 by default)."""
    count = int(np.prod(shape)) if shape else 1
    if values is None:
        values = np.arange(count) % 4
    return builder.constant(np.asarray(values).reshape(shape), shape=shape, data_type=data_type)
