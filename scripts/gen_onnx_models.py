#!/usr/bin/python3
"""Generates ONNX models with random weights for benches and import checks, offline.

  resnet18.onnx, resnet50.onnx   torchvision's architectures (weights=None), batch 1
  mobilenet_v2.onnx              torchvision's MobileNetV2 (depthwise-separable), the same way
  bert_tiny.onnx                 a BERT-style encoder built with torch.nn: 2 layers, hidden 128,
                                 4 heads, sequence 32; inputs input_ids (int64) and
                                 attention_mask (float32, 1 = attend), outputs the last hidden
                                 state and the tanh pooler output

Every model has static shapes. Next to each model, <name>_data/ holds input_N.pb and output_N.pb
(TensorProtos, as ONNX's own test cases) computed by PyTorch on seeded inputs, so an importer can
be checked against PyTorch without PyTorch at hand (tests/onnx/onnx_import_check.cc).

Needs Debian's python3-torch, python3-torchvision and python3-onnx.

  scripts/gen_onnx_models.py OUT_DIR [--resnet-size 224] [--opset 13] [--models resnet18,bert_tiny]
"""
import argparse
import math
import os
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision
from onnx import numpy_helper


class EncoderLayer(nn.Module):
    """Post-norm transformer encoder layer, as in BERT (GELU feed-forward)."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ffn1 = nn.Linear(hidden, ffn)
        self.ffn2 = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)
        self.gelu = nn.GELU()

    def forward(self, x, mask_bias):
        b, s, h = x.shape
        d = h // self.heads

        def split(t):  # [b, s, h] -> [b, heads, s, d]
            return t.view(b, s, self.heads, d).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + mask_bias
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
        x = self.ln1(x + self.out(ctx))
        return self.ln2(x + self.ffn2(self.gelu(self.ffn1(x))))


class TinyBert(nn.Module):
    def __init__(self, vocab=1000, hidden=128, heads=4, layers=2, seq=32):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(seq, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, 4 * hidden) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.position(positions))
        mask_bias = (1.0 - attention_mask[:, None, None, :]) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x, torch.tanh(self.pooler(x[:, 0]))


def save_data(directory, inputs, outputs):
    os.makedirs(directory, exist_ok=True)
    for i, t in enumerate(inputs):
        with open(os.path.join(directory, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.numpy()).SerializeToString())
    for i, t in enumerate(outputs):
        with open(os.path.join(directory, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.detach().numpy()).SerializeToString())


def export(model, inputs, input_names, output_names, path, opset):
    model.eval()
    with torch.no_grad():
        outputs = model(*inputs)
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs,)
        torch.onnx.export(model, tuple(inputs), path, opset_version=opset,
                          input_names=input_names, output_names=output_names,
                          do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    save_data(path[:-len(".onnx")] + "_data", inputs, outputs)
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB, operators: {' '.join(ops)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--models", default="resnet18,resnet50,bert_tiny")
    parser.add_argument("--resnet-size", type=int, default=224, help="input height and width")
    parser.add_argument("--opset", type=int, default=13)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(args.seed)
    for name in args.models.split(","):
        start = time.time()
        path = os.path.join(args.out_dir, f"{name}.onnx")
        if name in ("resnet18", "resnet50", "mobilenet_v2"):
            model = getattr(torchvision.models, name)(weights=None)
            x = torch.randn(1, 3, args.resnet_size, args.resnet_size)
            export(model, [x], ["input"], ["logits"], path, args.opset)
        elif name == "bert_tiny":
            model = TinyBert()
            ids = torch.randint(0, 1000, (1, 32), dtype=torch.int64)
            mask = torch.ones(1, 32)
            mask[0, 24:] = 0.0  # the last 8 tokens are padding
            export(model, [ids, mask], ["input_ids", "attention_mask"],
                   ["last_hidden_state", "pooled"], path, args.opset)
        else:
            parser.error(f"unknown model {name}")
        print(f"  {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
