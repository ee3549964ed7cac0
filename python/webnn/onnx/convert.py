"""webnn.onnx.load (ONNX -> MLGraph) and webnn.onnx.convert (ONNX -> .webnn file)."""

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from .errors import OnnxImportError
from .importer import import_model

_FILE_NAME = re.compile(r"^[A-Za-z_/$][A-Za-z0-9_./]*$")
_RESERVED = {"true", "false", "null"}

# The comment line convert() writes into the .webnn file: the ONNX names that were renamed.
NAME_MAP_PREFIX = "# onnx-names: "
WEIGHTS_RECORD_PREFIX = "# webnn-weights:"


def load(context, model, *, free_dims=None, input_shapes=None, constants=None, base_dir=None,
         max_sizes=None, weights=None, float16="float32", float64="float32"):  # fmt: skip
    """Import an ONNX model and build it: an MLGraph whose inputs and outputs keep the ONNX names.

    model: a path, bytes or onnx.ModelProto. free_dims: {"batch": 1} fixes named symbolic
    dimensions; input_shapes: {"x": [1, 3, 640, 640]} fixes whole inputs; constants:
    {"sr": 16000} turns a graph input into a constant (so what depends on it folds);
    base_dir: where external-data files are (default: the model's directory); max_sizes:
    {"seq": 512} keeps a named dimension dynamic with that upper bound; weights: a
    webnn.onnx.importer.SharedWeights shared by the imports of one model for several shapes
    (what InferenceSession does), so that its weights are read and folded once; float16:
    "float32" computes float16 values in float32, rounded where the graph casts to float16
    and at its outputs (ONNX Runtime's CPU provider), "float16" rounds every operator's result
    (ONNX's definition); float64: "float32" holds and computes double tensors as float32
    (inputs and outputs of the graph are float32; a webnn.onnx.Float64Warning says so),
    "error" refuses a model with double tensors.
    A sequence input needs input_shapes={"xs": [[2, 3], [4, 3]]} (its elements' shapes; the
    graph inputs are 'xs[0]', 'xs[1]', ...), an optional one None or its element's shape;
    sequence outputs are the graph outputs 'ys[0]', ... (docs/onnx.md, Sequences and
    optionals).
    Raises webnn.onnx.OnnxImportError (a ValueError) when the model cannot be imported, and
    for a model with outputs WebNN cannot hold (string labels, ZipMap's maps: run those with
    webnn.onnx.InferenceSession, which finishes them on the host).
    """
    builder = context.create_graph_builder()
    imported = import_model(
        builder,
        model,
        free_dims=free_dims,
        input_shapes=input_shapes,
        constants=constants,
        base_dir=base_dir,
        max_sizes=max_sizes,
        weights=weights,
        float16=float16,
        float64=float64,
    )
    _refuse_host_outputs(imported.host_outputs, imported.host_inputs)
    return imported.build()


def _refuse_host_outputs(host, host_inputs=None):
    if host_inputs:
        listed = ", ".join(f"'{name}'" for name in host_inputs)
        raise OnnxImportError(
            f"string inputs {listed} (read by LabelEncoder / CategoryMapper) cannot be fed to a "
            "WebNN graph; webnn.onnx.InferenceSession runs this model (it maps the strings to "
            "indices on the host)"
        )
    if host:
        listed = ", ".join(f"'{name}' ({h.kind}, from {h.where})" for name, h in host.items())
        raise OnnxImportError(
            f"outputs {listed} are not tensors WebNN can hold; webnn.onnx.InferenceSession "
            "runs this model (it computes the numbers in the graph and makes the strings or "
            "maps on the host)"
        )


def file_name_for(name):
    """A name the .webnn text format can hold, derived deterministically from an ONNX name."""
    if _FILE_NAME.match(name) and name not in _RESERVED:
        return name
    text = re.sub(r"[^A-Za-z0-9_./]", "_", name)
    if not text or not re.match(r"[A-Za-z_/$]", text[0]):
        text = "_" + text
    return text


class _Renamer:
    def __init__(self):
        self.mapping = {}  # onnx name -> file name (only the renamed ones)
        self.taken = set()

    def __call__(self, name):
        new = file_name_for(name)
        if new != name or new in self.taken:
            base, k = new, 1
            while new in self.taken or (new != name and new in self.mapping.values()):
                k += 1
                new = f"{base}_{k}"
            self.mapping[name] = new
        self.taken.add(new)
        return new


def convert(model, path, *, free_dims=None, input_shapes=None, constants=None, base_dir=None,
            max_sizes=None, context=None, float16="float32", float64="float32"):  # fmt: skip
    """Import an ONNX model and write it as a .webnn graph file plus its weights.

    Input and output names the .webnn format cannot hold (e.g. 'onnx::Shape_422', '463') are
    renamed deterministically ('onnx__Shape_422', '_463'); the mapping is written into the
    file as a comment line '# onnx-names: {"463": "_463", ...}' (readers ignore comments) and
    returned as a dict {onnx name: file name} of the renamed names.
    """
    import webnn

    if context is None:
        context = webnn.ML().create_context(accelerated=False, backend="reference")
    renamer = _Renamer()
    builder = context.create_graph_builder()
    imported = import_model(
        builder,
        model,
        free_dims=free_dims,
        input_shapes=input_shapes,
        constants=constants,
        base_dir=base_dir,
        max_sizes=max_sizes,
        rename=renamer,
        float16=float16,
        float64=float64,
    )
    _refuse_host_outputs(imported.host_outputs, imported.host_inputs)
    path = Path(path)
    builder.save(imported.operands, path)
    if renamer.mapping:
        _insert_header_comment(path, NAME_MAP_PREFIX + json.dumps(renamer.mapping, sort_keys=True))
    return dict(renamer.mapping)


def read_name_map(path):
    """The {onnx name: file name} mapping convert() recorded in a .webnn file ({} if none)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith(NAME_MAP_PREFIX):
                return json.loads(line[len(NAME_MAP_PREFIX) :])
            if not line.startswith("#"):
                break
    return {}


def _insert_header_comment(path, line):
    # save() writes the weights record ("# webnn-weights: ...") as the first line, where the loader
    # looks for it to verify the sidecar; the name map goes after it.
    text = Path(path).read_text(encoding="utf-8")
    record = ""
    if text.startswith(WEIGHTS_RECORD_PREFIX):
        end = text.find("\n") + 1
        record, text = text[:end], text[end:]
    fd, tmp = tempfile.mkstemp(dir=str(Path(path).parent), prefix=".onnx-names-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(record + line + "\n" + text)
        shutil.copymode(path, tmp)  # mkstemp creates 0600; keep the mode save() gave the file
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
