"""Native core of the webnn package (W3C WebNN API)."""

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy

def backends() -> list[str]:
    """Names of the backends usable on this machine, in preference order."""

class MLContext:
    def __init__(self) -> None: ...
    @property
    def accelerated(self) -> bool: ...
    @property
    def power_preference(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def device_type(self) -> str: ...
    def create_graph_builder(self) -> MLGraphBuilder: ...
    def create_tensor(
        self,
        shape: Sequence[int],
        data_type: str,
        readable: bool = False,
        writable: bool = False,
        exportable_to_gpu: bool = False,
    ) -> MLTensor: ...
    def write_tensor(self, tensor: MLTensor, data: Any) -> None: ...
    def read_tensor(self, tensor: MLTensor) -> numpy.ndarray: ...
    def resize_tensor(self, tensor: MLTensor, shape: Sequence[int]) -> None: ...
    def set_tensor_capacity(self, tensor: MLTensor, max_shape: Sequence[int]) -> None: ...
    def dispatch(
        self, graph: MLGraph, inputs: Mapping[str, MLTensor], outputs: Mapping[str, MLTensor]
    ) -> None: ...
    def compute(
        self, graph: MLGraph, inputs: Mapping[str, Any], outputs: Any = None
    ) -> dict[str, numpy.ndarray]: ...
    def load_graph(self, path: str | os.PathLike) -> MLGraph: ...
    def op_support_limits(self) -> dict: ...

class MLGraphBuilder:
    def __init__(self) -> None: ...
    def input(
        self, name: str, shape: Sequence[int | dict[str, Any]], data_type: str
    ) -> MLOperand: ...
    def constant(
        self, value: Any, shape: Sequence[int] | None = None, data_type: str | None = None
    ) -> MLOperand: ...
    def operand_shape(self, operand: MLOperand) -> list[int | dict[str, Any]]: ...
    def operand_data_type(self, operand: MLOperand) -> str: ...
    def build(self, outputs: Mapping[str, MLOperand]) -> MLGraph: ...
    def save(self, outputs: Mapping[str, MLOperand], path: str | os.PathLike) -> None: ...
    def add(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def sub(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def mul(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def div(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def max(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def min(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def pow(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def equal(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def not_equal(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def greater(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def greater_or_equal(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def lesser(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def lesser_or_equal(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def logical_and(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def logical_or(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def logical_xor(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def logical_not(self, a: MLOperand, *, label: str = "") -> MLOperand: ...
    def is_nan(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def is_infinite(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def abs(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def ceil(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def cos(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def erf(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def exp(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def floor(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def identity(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def log(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def neg(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def reciprocal(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def round_even(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def sin(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def sign(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def sqrt(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def tan(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def relu(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def sigmoid(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def tanh(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def softplus(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def softsign(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def gelu(self, input: MLOperand, *, label: str = "") -> MLOperand: ...
    def hard_swish(
        self,
        input: MLOperand,
        *,
        alpha: float = 0.16666666666666666,
        beta: float = 0.5,
        label: str = "",
    ) -> MLOperand: ...
    def elu(self, input: MLOperand, alpha: float = 1.0, *, label: str = "") -> MLOperand: ...
    def leaky_relu(
        self, input: MLOperand, alpha: float = 0.01, *, label: str = ""
    ) -> MLOperand: ...
    def hard_sigmoid(
        self, input: MLOperand, alpha: float = 0.2, beta: float = 0.5, *, label: str = ""
    ) -> MLOperand: ...
    def linear(
        self, input: MLOperand, alpha: float = 1.0, beta: float = 0.0, *, label: str = ""
    ) -> MLOperand: ...
    def prelu(self, input: MLOperand, slope: MLOperand, *, label: str = "") -> MLOperand: ...
    def clamp(
        self,
        input: MLOperand,
        min_value: float | None = None,
        max_value: float | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def softmax(self, input: MLOperand, axis: int, *, label: str = "") -> MLOperand: ...
    def reduce_l1(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reduce_l2(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reduce_log_sum(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reduce_log_sum_exp(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reduce_max(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reduce_mean(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reduce_min(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reduce_product(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reduce_sum(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reduce_sum_square(
        self,
        input: MLOperand,
        axes: Sequence[int] | None = None,
        keep_dimensions: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def arg_min(
        self,
        input: MLOperand,
        axis: int,
        keep_dimensions: bool = False,
        output_data_type: str = "int32",
        *,
        label: str = "",
    ) -> MLOperand: ...
    def arg_max(
        self,
        input: MLOperand,
        axis: int,
        keep_dimensions: bool = False,
        output_data_type: str = "int32",
        *,
        label: str = "",
    ) -> MLOperand: ...
    def cumulative_sum(
        self,
        input: MLOperand,
        axis: int,
        exclusive: bool = False,
        reversed: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def cast(self, input: MLOperand, data_type: str, *, label: str = "") -> MLOperand: ...
    def concat(self, inputs: Sequence[MLOperand], axis: int, *, label: str = "") -> MLOperand: ...
    def expand(
        self, input: MLOperand, new_shape: Sequence[int | dict[str, Any]], *, label: str = ""
    ) -> MLOperand: ...
    def reshape(
        self, input: MLOperand, new_shape: Sequence[int | dict[str, Any]], *, label: str = ""
    ) -> MLOperand: ...
    def slice(
        self,
        input: MLOperand,
        starts: Sequence[int],
        sizes: Sequence[int | dict[str, Any]],
        strides: Sequence[int] | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def split(
        self, input: MLOperand, splits: int | Sequence[int], axis: int = 0, *, label: str = ""
    ) -> list[MLOperand]: ...
    def tile(
        self, input: MLOperand, repetitions: Sequence[int], *, label: str = ""
    ) -> MLOperand: ...
    def transpose(
        self, input: MLOperand, permutation: Sequence[int] | None = None, *, label: str = ""
    ) -> MLOperand: ...
    def pad(
        self,
        input: MLOperand,
        beginning_padding: Sequence[int],
        ending_padding: Sequence[int] | None = None,
        mode: str = "constant",
        value: float = 0,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def reverse(
        self, input: MLOperand, axes: Sequence[int] | None = None, *, label: str = ""
    ) -> MLOperand: ...
    def triangular(
        self, input: MLOperand, upper: bool = True, diagonal: int = 0, *, label: str = ""
    ) -> MLOperand: ...
    def gather(
        self, input: MLOperand, indices: MLOperand, axis: int = 0, *, label: str = ""
    ) -> MLOperand: ...
    def gather_elements(
        self, input: MLOperand, indices: MLOperand, axis: int = 0, *, label: str = ""
    ) -> MLOperand: ...
    def gather_nd(self, input: MLOperand, indices: MLOperand, *, label: str = "") -> MLOperand: ...
    def scatter_elements(
        self,
        input: MLOperand,
        indices: MLOperand,
        updates: MLOperand,
        axis: int = 0,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def scatter_nd(
        self, input: MLOperand, indices: MLOperand, updates: MLOperand, *, label: str = ""
    ) -> MLOperand: ...
    def where(
        self,
        condition: MLOperand,
        true_value: MLOperand,
        false_value: MLOperand,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def matmul(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand: ...
    def gemm(
        self,
        a: MLOperand,
        b: MLOperand,
        c: MLOperand | None = None,
        alpha: float = 1.0,
        beta: float = 1.0,
        a_transpose: bool = False,
        b_transpose: bool = False,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def conv2d(
        self,
        input: MLOperand,
        filter: MLOperand,
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        padding: Sequence[int] | None = None,
        groups: int = 1,
        input_layout: str = "nchw",
        filter_layout: str = "oihw",
        bias: MLOperand | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def conv_transpose2d(
        self,
        input: MLOperand,
        filter: MLOperand,
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        padding: Sequence[int] | None = None,
        output_padding: Sequence[int] | None = None,
        output_sizes: Sequence[int] | None = None,
        groups: int = 1,
        input_layout: str = "nchw",
        filter_layout: str = "iohw",
        bias: MLOperand | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def average_pool2d(
        self,
        input: MLOperand,
        window_dimensions: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        padding: Sequence[int] | None = None,
        layout: str = "nchw",
        output_shape_rounding: str = "floor",
        output_sizes: Sequence[int] | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def l2_pool2d(
        self,
        input: MLOperand,
        window_dimensions: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        padding: Sequence[int] | None = None,
        layout: str = "nchw",
        output_shape_rounding: str = "floor",
        output_sizes: Sequence[int] | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def max_pool2d(
        self,
        input: MLOperand,
        window_dimensions: Sequence[int] | None = None,
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        padding: Sequence[int] | None = None,
        layout: str = "nchw",
        output_shape_rounding: str = "floor",
        output_sizes: Sequence[int] | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def resample2d(
        self,
        input: MLOperand,
        sizes: Sequence[int] | None = None,
        scales: Sequence[float] | None = None,
        mode: str = "nearest-neighbor",
        axes: Sequence[int] | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def batch_normalization(
        self,
        input: MLOperand,
        mean: MLOperand,
        variance: MLOperand,
        scale: MLOperand | None = None,
        bias: MLOperand | None = None,
        epsilon: float = 1e-05,
        axis: int = 1,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def instance_normalization(
        self,
        input: MLOperand,
        scale: MLOperand | None = None,
        bias: MLOperand | None = None,
        epsilon: float = 1e-05,
        layout: str = "nchw",
        *,
        label: str = "",
    ) -> MLOperand: ...
    def layer_normalization(
        self,
        input: MLOperand,
        scale: MLOperand | None = None,
        bias: MLOperand | None = None,
        epsilon: float = 1e-05,
        axes: Sequence[int] | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def quantize_linear(
        self,
        input: MLOperand,
        scale: MLOperand,
        zero_point: MLOperand | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def dequantize_linear(
        self,
        input: MLOperand,
        scale: MLOperand,
        zero_point: MLOperand | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def gru(
        self,
        input: MLOperand,
        weight: MLOperand,
        recurrent_weight: MLOperand,
        steps: int,
        hidden_size: int,
        bias: MLOperand | None = None,
        recurrent_bias: MLOperand | None = None,
        initial_hidden_state: MLOperand | None = None,
        reset_after: bool = True,
        return_sequence: bool = False,
        direction: str = "forward",
        layout: str = "zrn",
        activations: Sequence[str] | None = None,
        *,
        label: str = "",
    ) -> list[MLOperand]: ...
    def gru_cell(
        self,
        input: MLOperand,
        weight: MLOperand,
        recurrent_weight: MLOperand,
        hidden_state: MLOperand,
        hidden_size: int,
        bias: MLOperand | None = None,
        recurrent_bias: MLOperand | None = None,
        reset_after: bool = True,
        layout: str = "zrn",
        activations: Sequence[str] | None = None,
        *,
        label: str = "",
    ) -> MLOperand: ...
    def lstm(
        self,
        input: MLOperand,
        weight: MLOperand,
        recurrent_weight: MLOperand,
        steps: int,
        hidden_size: int,
        bias: MLOperand | None = None,
        recurrent_bias: MLOperand | None = None,
        peephole_weight: MLOperand | None = None,
        initial_hidden_state: MLOperand | None = None,
        initial_cell_state: MLOperand | None = None,
        return_sequence: bool = False,
        direction: str = "forward",
        layout: str = "iofg",
        activations: Sequence[str] | None = None,
        *,
        label: str = "",
    ) -> list[MLOperand]: ...
    def lstm_cell(
        self,
        input: MLOperand,
        weight: MLOperand,
        recurrent_weight: MLOperand,
        hidden_state: MLOperand,
        cell_state: MLOperand,
        hidden_size: int,
        bias: MLOperand | None = None,
        recurrent_bias: MLOperand | None = None,
        peephole_weight: MLOperand | None = None,
        layout: str = "iofg",
        activations: Sequence[str] | None = None,
        *,
        label: str = "",
    ) -> list[MLOperand]: ...
    def global_average_pool(
        self, input: MLOperand, layout: str = "nchw", *, label: str = ""
    ) -> MLOperand: ...
    def global_max_pool(
        self, input: MLOperand, layout: str = "nchw", *, label: str = ""
    ) -> MLOperand: ...
    def squeeze(
        self, input: MLOperand, axes: Sequence[int] | None = None, *, label: str = ""
    ) -> MLOperand: ...
    def unsqueeze(self, input: MLOperand, axes: Sequence[int], *, label: str = "") -> MLOperand: ...
    def shape(self, input: MLOperand, *, label: str = "") -> MLOperand: ...

class MLOperand:
    def __init__(self) -> None: ...

class MLGraph:
    def __init__(self) -> None: ...
    @property
    def input_descriptors(self) -> dict: ...
    @property
    def output_descriptors(self) -> dict: ...
    @property
    def operand_count(self) -> int: ...
    @property
    def operation_count(self) -> int: ...
    def get_input_names(self) -> list[str]: ...
    def get_output_names(self) -> list[str]: ...

class MLTensor:
    def __init__(self) -> None: ...
    @property
    def data_type(self) -> str: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def size(self) -> int: ...
    @property
    def readable(self) -> bool: ...
    @property
    def writable(self) -> bool: ...
    @property
    def exportable_to_gpu(self) -> bool: ...
    def destroy(self) -> None: ...

class ML:
    def __init__(self) -> None: ...
    def create_context(
        self, power_preference: str = "default", accelerated: bool = True, backend: str = "auto"
    ) -> MLContext: ...
