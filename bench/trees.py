"""Times a random forest (TreeEnsembleClassifier made with onnx.helper: unpruned random trees,
like a scikit-learn RandomForestClassifier's) on webnn's cpu backend with each tree evaluator
(the dense tables of ops/trees.py, the walk of ops/walk.py, and the one the cost rule picks)
and on ONNX Runtime, in one process, interleaved.

    python bench/trees.py [--trees 100] [--depth 12] [--leaf-prob 0.12] [--rows 256]
                          [--features 20] [--classes 4] [--rounds 15] [--threads 1]
                          [--sklearn]   # a fitted RandomForestClassifier via skl2onnx instead

Each engine's call is run on the same numpy input (context.compute for ours, which writes the
input and reads the outputs; InferenceSession.run for ORT, which does the same); the outputs
are compared with ORT's first (labels equal, probabilities within 1e-5 of max|ORT|). Medians
over the rounds and the ratios ours/ORT (below 1: webnn faster) are printed, with the import
time of each of our graphs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def random_forest(trees, depth, leaf_prob, features, classes, seed=0):
    from onnx import helper

    rng = np.random.default_rng(seed)
    cols = {k: [] for k in ("treeids", "nodeids", "featureids", "values", "modes",
                            "truenodeids", "falsenodeids")}  # fmt: skip
    weights = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}

    def grow(t, counter, level):
        node = counter[0]
        counter[0] += 1
        at = len(cols["treeids"])
        for k, v in zip(cols, (t, node, 0, 0.0, "LEAF", 0, 0)):
            cols[k].append(v)
        if level == depth or (level > 2 and rng.random() < leaf_prob):
            p = rng.dirichlet(np.ones(classes))
            for k in range(classes):
                for key, v in zip(weights, (t, node, k, float(p[k]) / trees)):
                    weights[key].append(v)
            return node
        cols["featureids"][at] = int(rng.integers(features))
        cols["values"][at] = float(np.float32(rng.normal()))
        cols["modes"][at] = "BRANCH_LEQ"
        cols["truenodeids"][at] = grow(t, counter, level + 1)
        cols["falsenodeids"][at] = grow(t, counter, level + 1)
        return node

    for t in range(trees):
        grow(t, [0], 0)
    attrs = {f"nodes_{k}": v for k, v in cols.items()}
    attrs.update({f"class_{k}": v for k, v in weights.items()})
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"],
                            domain="ai.onnx.ml", classlabels_int64s=list(range(classes)),
                            **attrs)  # fmt: skip
    return node, len(cols["treeids"])


def sklearn_forest(args):
    """A scikit-learn RandomForestClassifier (unpruned trees) exported by skl2onnx, without
    ZipMap (both packages must be installed; they are not in the bench extra)."""
    from skl2onnx import to_onnx
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    x, y = make_classification(n_samples=2000, n_features=args.features, n_informative=10,
                               n_classes=args.classes, random_state=0)  # fmt: skip
    forest = RandomForestClassifier(n_estimators=args.trees, random_state=0)
    forest.fit(x.astype(np.float32), y)
    model = to_onnx(forest, x[:1].astype(np.float32), options={"zipmap": False})
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = args.rows
    return model, sum(e.tree_.node_count for e in forest.estimators_)


def build(args):
    from onnx import TensorProto, helper

    if args.sklearn:
        return sklearn_forest(args)

    node, count = random_forest(args.trees, args.depth, args.leaf_prob, args.features,
                                args.classes)  # fmt: skip
    graph = helper.make_graph(
        [node], "forest",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [args.rows, args.features])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, [args.rows]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT,
                                       [args.rows, args.classes])],
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    )
    model.ir_version = 8
    return model, count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--leaf-prob", type=float, default=0.12)
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--sklearn", action="store_true", help="a fitted RandomForestClassifier")
    args = parser.parse_args()
    os.environ.setdefault("WEBNN_NUM_THREADS", str(args.threads))

    import onnxruntime as ort
    import webnn
    import webnn.onnx as wo
    from webnn.onnx.ops import walk

    model, count = build(args)
    x = np.random.default_rng(1).normal(size=(args.rows, args.features)).astype(np.float32)
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])  # fmt: skip
    want = session.run(None, {"X": x})
    names = [o.name for o in session.get_outputs()]
    context = webnn.ML().create_context(accelerated=False, backend="cpu")

    rule = walk.walk_is_cheaper
    runners = {"ort": lambda: session.run(None, {"X": x})}
    for name, choice in (("dense", False), ("walk", True), ("auto", None)):
        walk.walk_is_cheaper = rule if choice is None else (lambda f, c=choice: c)
        start = time.perf_counter()
        try:
            graph = wo.load(context, model)
        except wo.OnnxImportError as exc:
            print(f"{name}: not imported ({exc})")
            continue
        finally:
            walk.walk_is_cheaper = rule
        got = context.compute(graph, {"X": x})
        np.testing.assert_array_equal(got[names[0]], want[0])
        err = float(np.max(np.abs(got[names[1]] - want[1])))
        assert err <= 1e-5 * float(np.max(np.abs(want[1]))), (name, err)
        print(f"{name}: imported in {time.perf_counter() - start:.2f} s, max error {err:.2g}")
        runners[name] = lambda g=graph: context.compute(g, {"X": x})

    times = {k: [] for k in runners}
    for _ in range(args.rounds):
        for name, run in runners.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    shape = "scikit-learn, unpruned" if args.sklearn else f"depth <= {args.depth}"
    print(f"{args.trees} trees, {count} nodes, {shape}, {args.rows} rows x "
          f"{args.features} features, {args.threads} thread(s); median of {args.rounds}:")  # fmt: skip
    ort_median = statistics.median(times["ort"])
    for name, t in times.items():
        median = statistics.median(t)
        ratio = "" if name == "ort" else f"  ours/ORT {median / ort_median:.2f}"
        print(f"  {name:6s} {median * 1e3:9.2f} ms{ratio}")


if __name__ == "__main__":
    main()
