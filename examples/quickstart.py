"""Quickstart: build a small convolutional network with the WebNN builder and run it.

conv2d(3->8, 3x3, pad 1) + bias -> relu -> max_pool2d(2x2) -> reshape -> gemm -> softmax
"""

import numpy as np
import webnn

rng = np.random.default_rng(0)
context = webnn.ML().create_context(accelerated=False)
print(f"context: {context}, backends available: {webnn.backends()}")

builder = context.create_graph_builder()
image = builder.input("image", [1, 3, 8, 8], "float32")
conv_w = builder.constant(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.2)
conv_b = builder.constant(np.linspace(-0.1, 0.1, 8, dtype=np.float32))
x = builder.conv2d(image, conv_w, padding=[1, 1, 1, 1], bias=conv_b, label="stem")
x = builder.relu(x)
x = builder.max_pool2d(x, window_dimensions=[2, 2], strides=[2, 2])
x = builder.reshape(x, [1, 8 * 4 * 4])
fc_w = builder.constant(rng.standard_normal((8 * 4 * 4, 10)).astype(np.float32) * 0.05)
fc_b = builder.constant(np.zeros(10, np.float32))
logits = builder.gemm(x, fc_w, c=fc_b, label="classifier")
probs = builder.softmax(logits, axis=1)
print("output shape:", builder.operand_shape(probs))
graph = builder.build({"probs": probs})
print("graph:", graph)

image_tensor = context.create_tensor([1, 3, 8, 8], "float32", writable=True)
probs_tensor = context.create_tensor([1, 10], "float32", readable=True)
context.write_tensor(image_tensor, rng.standard_normal((1, 3, 8, 8)))
context.dispatch(graph, {"image": image_tensor}, {"probs": probs_tensor})
result = context.read_tensor(probs_tensor)
np.set_printoptions(precision=4, suppress=True)
print("class probabilities:", result)
print("sum:", float(result.sum()), "argmax:", int(result.argmax()))
