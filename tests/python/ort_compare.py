"""An ONNX model imported with webnn.onnx compared with ONNX Runtime running the same model, on
both WebNN backends (the ONNX operator tests against ORT share this)."""

import numpy as np
import onnx
import onnxruntime as ort
import webnn
import webnn.onnx as wo

BACKENDS = ("cpu", "reference")


def onnxruntime_outputs(model, feeds):
    """ORT's CPU outputs by name, one intra-op thread, for a ModelProto or a file path."""
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def assert_matches_onnxruntime(model, feeds, rtol=1e-5, atol=1e-6, check=None, **load_options):
    """Every output of `model` on each backend has ORT's shape and is within rtol/atol of ORT's
    (or passes check(got, want, where), for another criterion)."""
    want = onnxruntime_outputs(model, feeds)
    for backend in BACKENDS:
        context = webnn.ML().create_context(accelerated=False, backend=backend)
        got = context.compute(wo.load(context, model, **load_options), feeds)
        for name, w in want.items():
            where = f"{backend}: output {name}"
            assert got[name].shape == w.shape, where
            if check is not None:
                check(got[name], w, where)
            else:
                np.testing.assert_allclose(got[name], w, rtol=rtol, atol=atol, err_msg=where)


def within_peak(rtol):
    """A check: the largest error is at most rtol times the largest magnitude of ORT's output
    (for results whose small elements are cancellations, e.g. after int8 matmuls); integer
    outputs are exact."""

    def check(got, want, where):
        if not np.issubdtype(want.dtype, np.floating):
            np.testing.assert_array_equal(got, want, err_msg=where)
            return
        err = float(np.max(np.abs(got - want)))
        assert err <= rtol * float(np.max(np.abs(want))), (where, err)

    return check


def exact(got, want, where):
    """A check: bit-exact (integer and quantized outputs)."""
    np.testing.assert_array_equal(got, want, err_msg=where)


def graph_model(nodes, feeds, outputs, initializers=None, opsets=None, ir_version=8):
    """A one-graph ModelProto: inputs typed and shaped like `feeds` (name -> array),
    `initializers` (name -> array), `outputs` (name -> TensorProto element type, shapes left to
    inference), `opsets` (domain -> version, default the standard domain at 17)."""
    from onnx import helper, numpy_helper

    graph = helper.make_graph(
        list(nodes),
        "g",
        [
            helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for k, v in feeds.items()
        ],
        [helper.make_tensor_value_info(k, t, None) for k, t in outputs.items()],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    versions = opsets or {"": 17}
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in versions.items()]
    )
    model.ir_version = ir_version
    return model
