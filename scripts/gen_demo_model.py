#!/usr/bin/python3
"""Writes the demo's small model: a residual CNN for 32×32 images with random weights, in ONNX.

  image [1, 3, 32, 32]
    Conv 3→16 3×3, BatchNormalization, Relu            stem
    MaxPool 2×2 stride 2                               → [1, 16, 16, 16]
    Conv 16→16 3×3, BN, Relu; Conv 16→16 3×3, BN;      a residual block
      Add (the block's input), Relu
    Conv 16→32 3×3 stride 2, BN, Relu                  → [1, 32, 8, 8]
    GlobalAveragePool, Flatten, Gemm 32→10             → logits [1, 10]

Built with python3-onnx's helpers only (no PyTorch), so scripts/demo.sh can make it on a fresh
machine from Debian packages. The weights are seeded (He-scaled, so activations stay near unit
size and float tolerances mean something).

  scripts/gen_demo_model.py OUT.onnx [--seed 0] [--size 32]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    """Collects nodes and initializers; each layer method returns its output's name."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.weights = [], []
        self.count = 0

    def name(self, kind):
        self.count += 1
        return f"{kind}_{self.count}"

    def weight(self, kind, array):
        name = self.name(kind)
        self.weights.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv_bn(self, x, cin, cout, stride=1, relu=True):
        fan_in = cin * 9
        w = self.weight("w", self.rng.normal(0, np.sqrt(2 / fan_in), (cout, cin, 3, 3)))
        b = self.weight("b", self.rng.normal(0, 0.05, cout))
        y = self.node("Conv", [x, w, b], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                      strides=[stride, stride])
        bn = [self.weight("gamma", self.rng.uniform(0.5, 1.5, cout)),
              self.weight("beta", self.rng.normal(0, 0.1, cout)),
              self.weight("mean", self.rng.normal(0, 0.1, cout)),
              self.weight("var", self.rng.uniform(0.5, 1.5, cout))]
        y = self.node("BatchNormalization", [y] + bn, epsilon=1e-5)
        return self.node("Relu", [y]) if relu else y


def build(seed, size):
    b = Builder(seed)
    x = b.conv_bn("image", 3, 16)
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    y = b.conv_bn(x, 16, 16)
    y = b.conv_bn(y, 16, 16, relu=False)
    x = b.node("Relu", [b.node("Add", [y, x])])
    x = b.conv_bn(x, 16, 32, stride=2)
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    w = b.weight("fc_w", b.rng.normal(0, np.sqrt(1 / 32), (10, 32)))
    bias = b.weight("fc_b", b.rng.normal(0, 0.05, 10))
    b.nodes.append(helper.make_node("Gemm", [x, w, bias], ["logits"], name="fc", transB=1))

    graph = helper.make_graph(
        b.nodes, "tirtune_demo_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        initializer=b.weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="tirtune scripts/gen_demo_model.py")
    model.ir_version = 8  # what opset 13 needs; readable by every onnxruntime since 1.10
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=32, help="image height and width (even)")
    args = parser.parse_args()
    if args.size < 8 or args.size % 4:
        parser.error("--size must be a multiple of 4, at least 8")
    model = build(args.seed, args.size)
    onnx.save(model, args.output)
    print(f"gen_demo_model: wrote {args.output} ({len(model.graph.node)} nodes, "
          f"{sum(np.prod(w.dims) for w in model.graph.initializer)} weights)")


if __name__ == "__main__":
    main()
