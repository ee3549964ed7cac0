"""op_support_limits() lists exactly what builds and runs.

For every operation, operand argument and data type: a listed type must build and run on
that context; an unlisted one must be rejected at build time with ValueError. Each op
family provides sample graph builders in samples_<family>.py:

    SAMPLES = {"gather": make_gather, ...}
    def make_gather(builder, dtypes): ...  # dtypes: {"input": "int8", "indices": "int64"}

A sample builds a small valid graph whose named operand arguments have the requested data
types (others get consistent defaults) and returns the operation's output operand(s).
"""

import pytest
import webnn
from samples_common import all_samples

ALL_TYPES = [
    "float32",
    "float16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "int8",
    "uint8",
    "int4",
    "uint4",
]


SAMPLES = all_samples()
BACKENDS = webnn.backends()


def _limits(backend):
    return webnn.ML().create_context(accelerated=False, backend=backend).op_support_limits()


def _cases():
    for backend in BACKENDS:
        for op, entry in _limits(backend).items():
            if not isinstance(entry, dict) or "dataTypes" in entry or op not in SAMPLES:
                continue
            for field, limit in entry.items():
                yield pytest.param(backend, op, field, limit, id=f"{backend}:{op}:{field}")


def test_every_operation_has_samples_and_limits():
    limits = _limits("cpu")
    ops = {k for k, v in limits.items() if isinstance(v, dict) and "dataTypes" not in v}
    assert ops == set(SAMPLES), sorted(ops ^ set(SAMPLES))
    assert limits["preferredInputLayout"] in ("nchw", "nhwc")
    for key in ("input", "constant", "output"):
        assert set(limits[key]["dataTypes"]) == set(ALL_TYPES)


def _outputs(result):
    results = result if isinstance(result, list) else [result]
    return {f"out{i}": r for i, r in enumerate(results)}


@pytest.mark.parametrize("backend,op,field,limit", list(_cases()))
def test_listed_types_run_and_unlisted_are_rejected(backend, op, field, limit):
    context = webnn.ML().create_context(accelerated=False, backend=backend)
    for data_type in ALL_TYPES:
        builder = context.create_graph_builder()
        if data_type in limit["dataTypes"]:
            outputs = _outputs(SAMPLES[op](builder, {field: data_type}))
            if field == "output":
                assert data_type in {builder.operand_data_type(o) for o in outputs.values()}
            graph = builder.build(outputs)
            results = context.compute(graph, {})
            assert set(results) == set(outputs)
            for name, array in results.items():
                want = graph.output_descriptors[name]
                assert list(array.shape) == want["shape"]
        elif field == "output":
            # The output type usually follows the inputs: it must never be an unlisted type.
            try:
                outputs = _outputs(SAMPLES[op](builder, {field: data_type}))
            except ValueError:
                continue
            assert data_type not in {builder.operand_data_type(o) for o in outputs.values()}
        else:
            with pytest.raises(ValueError):
                SAMPLES[op](builder, {field: data_type})
