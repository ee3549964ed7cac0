"""The converter table: (domain, op_type) -> Entry."""

from dataclasses import dataclass


@dataclass
class Entry:
    convert: object  # function(NodeContext) -> value or list of values
    foldable: bool = True  # evaluate with numpy when every input is known at import
    runtime: bool = True  # False: only folding is possible (the output shape needs values)
    fold_without_inputs: bool = False  # e.g. Constant, RandomNormal: no inputs at all
    note: str = ""  # for fold-only operators: why they cannot run at run time


TABLE = {}


def op(*names, domain="", **kw):
    def deco(fn):
        for name in names:
            TABLE[(domain, name)] = Entry(fn, **kw)
        return fn

    return deco


def unary_ops(methods):
    """Registers the ONNX operators that are one builder method applied to input 0, given as
    {onnx op type: builder method name}."""

    def converter(method):
        return lambda n: getattr(n.b, method)(n.x(0))

    for onnx_name, method in methods.items():
        op(onnx_name)(converter(method))


def lookup(domain, op_type):
    return TABLE.get(("" if domain == "ai.onnx" else domain, op_type))
