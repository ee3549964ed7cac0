"""Writes the small seed inputs of the fuzz targets into tests/fuzz/seeds/<target>/.

The seeds are checked in (a few KB); tools/fuzz.sh copies them, together with the graph
files of tests/data/format, into the generated corpus under build/fuzz/corpus/.
Rerun after changing a seed here: python3 tests/fuzz/make_seeds.py
"""

import json
import pathlib
import random
import struct

ROOT = pathlib.Path(__file__).resolve().parent / "seeds"

TEXT = {
    "edge.webnn": """webnn_graph "edge_detector" v2 {
  inputs {
    image: f32[1, 1, 8, 8];
  }
  consts {
    kernel: f32[4, 1, 3, 3] @scalar(0.25);
    kbias: f32[4] @bytes([0, 0, 128, 63, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 128, 191]);
  }
  nodes {
    c = conv2d(image, kernel, padding=[1, 1, 1, 1], bias=kbias);
    r = clamp(c, minValue=0, maxValue=6);
    p = maxPool2d(r, windowDimensions=[2, 2], strides=[2, 2]);
    flat = reshape(p, newShape=[1, 64]);
    s = softmax(flat, axis=1);
  }
  outputs { s; }
}
""",
    "lstm.webnn": """webnn_graph "seq_encoder" v2 {
  inputs {
    seq: f32[5, 1, 3];
  }
  consts {
    w: f32[1, 8, 3] @scalar(0.1);
    r: f32[1, 8, 2] @scalar(-0.2);
    b: f32[1, 8] @scalar(0.5);
  }
  nodes {
    [h, c, all_h] = lstm(seq, w, r, steps=5, hiddenSize=2, bias=b, returnSequence=true);
  }
  outputs { h; all_h; }
}
""",
    "split_heads.webnn": """webnn_graph "split_heads" v2 {
  inputs {
    q: f16[dyn("batch", 4), 16, 64];
  }
  nodes {
    q4 = reshape(q, newShape=[{"name": "batch", "maxSize": 4}, 16, 8, 8]);
    qt = transpose(q4, permutation=[0, 2, 1, 3]);
  }
  outputs { qt; }
}
""",
    "options.webnn": """# legacy forms and many option kinds
webnn_graph "mix" v 1 @quantized {
  inputs { x: f32[2, 3, 4, 4]; i: i32[2]; q: u8[2, 3]; }
  consts { z: i4[3] @bytes([18, 3]); one: u64[] @scalar(18446744073709551615); }
  nodes {
    a = pad(x, beginningPadding=[0, 0, 1, 1], endingPadding=[0, 0, 1, 1], mode="edge");
    b = resample2d(a, mode="linear", scales=[0.5, 0.5], axes=[2, 3]);
    c = reduceMean(b, axes=[1], keepDimensions=true, label="mean \\"c\\"");
    d = gemm(q, q, bTranspose=true, alpha=1e-05);
    e = cast(i, to="float16");
    [f] = split(x, splits=[1, 1], axis=0);
    g = gather(x, i, axis=1, batchDimensions=0);
    h = layerNormalization(x, axes=[3], epsilon=1e-05);
  }
  outputs { c, d; e; f; g; h }
}
""",
}

JSON_GRAPHS = {
    "token_mixer.json": {
        "format": "webnn-graph-json",
        "version": 2,
        "name": "token_mixer",
        "inputs": {
            "x": {"dataType": "float32", "shape": [2, 6]},
            "mask": {"dataType": "uint8", "shape": [2, 6]},
        },
        "consts": {
            "zero": {"dataType": "float32", "shape": [], "init": {"kind": "scalar", "value": 0}},
            "idx": {
                "dataType": "int64",
                "shape": [1],
                "init": {"kind": "inlineBytes", "bytes": [2, 0, 0, 0, 0, 0, 0, 0]},
            },
        },
        "nodes": [
            {
                "id": "left",
                "op": "split",
                "inputs": ["x"],
                "options": {"splits": 2, "axis": 1},
                "outputs": ["left", "right"],
            },
            {"id": "swapped", "op": "concat", "inputs": ["right", "left"], "options": {"axis": 1}},
            {"id": "picked", "op": "gather", "inputs": ["swapped", "idx"], "options": {"axis": 1}},
            {"id": "masked", "op": "where", "inputs": ["mask", "swapped", "zero"]},
        ],
        "outputs": {"swapped": "swapped", "picked": "picked", "m": "masked"},
    },
    "dynamic.json": {
        "format": "webnn-graph-json",
        "version": 2,
        "inputs": {"x": {"dataType": "float32", "shape": [{"name": "batch", "maxSize": 8}, 4]}},
        "nodes": [
            {"id": "y", "op": "relu", "inputs": ["x"], "outputs": None},
            {"id": "z", "op": "reduceSum", "inputs": ["y"], "options": {"axes": [1]}},
        ],
        "outputs": {"z": "z"},
    },
}


def manifest_seed(tensors):
    """2-byte manifest length, manifest JSON, then the WGWT blob (fuzz_targets.h)."""
    blob = bytearray(b"WGWT" + struct.pack("<I", 1))
    entries = {}
    for key, dtype, shape, payload in tensors:
        entries[key] = {
            "dataType": dtype,
            "shape": shape,
            "byteOffset": len(blob),
            "byteLength": len(payload),
            "layout": "row-major",
        }
        blob += payload
    manifest = json.dumps(
        {"format": "wg-weights-manifest", "version": 1, "endianness": "little", "tensors": entries}
    ).encode()
    return struct.pack("<H", len(manifest)) + manifest + bytes(blob)


def safetensors_seed(tensors, metadata=True):
    header = {"__metadata__": {"format": "pt"}} if metadata else {}
    data = bytearray()
    for key, dtype, shape, payload in tensors:
        header[key] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [len(data), len(data) + len(payload)],
        }
        data += payload
    text = json.dumps(header).encode()
    text += b" " * ((8 - (len(text) + 8) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + bytes(data)


def main():
    for name, text in TEXT.items():
        write("text_parser", name, text.encode())
    for name, doc in JSON_GRAPHS.items():
        write("json_graph", name, json.dumps(doc, indent=1).encode())
    f32 = lambda *v: struct.pack(f"<{len(v)}f", *v)
    write(
        "weights_manifest",
        "edge.bin",
        manifest_seed(
            [
                ("conv.bias", "float32", [4], f32(1, 2, 3, 4)),
                ("conv.kernel", "float32", [4, 1, 1, 1], f32(0.5, -1, 2, 0)),
                ("q", "int4", [3], bytes([0x21, 0x03])),
                ("q_unpacked", "int4", [3], bytes([1, 2, 3])),
            ]
        ),
    )
    write("weights_manifest", "bare.bin", manifest_seed([("k", None, None, b"\x01\x02")]))
    write(
        "safetensors",
        "mixed.safetensors",
        safetensors_seed(
            [
                ("w", "F32", [2, 2], f32(1, 2, 3, 4)),
                ("h", "F16", [3], struct.pack("<3e", 1, -2, 0.5)),
                ("b", "BF16", [2], bytes([0x80, 0x3F, 0x00, 0x40])),
                ("i", "I64", [], struct.pack("<q", -7)),
                ("u", "U8", [0], b""),
            ]
        ),
    )
    write(
        "safetensors",
        "plain.safetensors",
        safetensors_seed([("x", "I32", [1, 2], struct.pack("<2i", 5, 6))], False),
    )
    rng = random.Random(8)
    for k in range(6):
        write("builder", f"random{k}.bin", bytes(rng.randrange(256) for _ in range(96)))


def write(target, name, data):
    d = ROOT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


if __name__ == "__main__":
    main()
