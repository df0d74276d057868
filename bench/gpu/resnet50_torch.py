#!/usr/bin/env python3
"""ResNet-50 (batch 1, 224x224, random weights) for the GPU comparison: PyTorch eager is the peer.

  export DIR     writes DIR/resnet50.onnx, DIR/input.npy and DIR/torch_output.npy (the logits
                 computed in FP32 on the CPU), from a seeded model: the architecture of
                 torchvision's resnet50 (bottleneck v1.5), written here so that only PyTorch
                 itself is needed.
  time DIR       times PyTorch eager on the GPU (TF32 off, no grad, the input already on the
                 device, CUDA synchronized after every run: median of at least 100 runs and
                 2 s after 20 warm-up runs) and writes DIR/torch.json.
  compare DIR OUT.npy   prints the largest difference between tirtune's logits and PyTorch's.
"""
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride, downsample):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inplanes = 64
        stages = []
        for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            downsample = None
            if stride != 1 or inplanes != planes * 4:
                downsample = nn.Sequential(nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False),
                                           nn.BatchNorm2d(planes * 4))
            layers = [Bottleneck(inplanes, planes, stride, downsample)]
            inplanes = planes * 4
            layers += [Bottleneck(inplanes, planes, 1, None) for _ in range(1, blocks)]
            stages.append(nn.Sequential(*layers))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2048, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def make_model():
    torch.manual_seed(0)
    return ResNet50().eval()


def export(directory):
    os.makedirs(directory, exist_ok=True)
    model = make_model()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    path = os.path.join(directory, "resnet50.onnx")
    kwargs = dict(opset_version=13, input_names=["input"], output_names=["logits"],
                  do_constant_folding=True)
    with torch.no_grad():
        try:  # newer PyTorch: the TorchScript exporter, which needs no onnx package
            torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)
        except TypeError:
            torch.onnx.export(model, (x,), path, **kwargs)
        np.save(os.path.join(directory, "input.npy"), x.numpy())
        np.save(os.path.join(directory, "torch_output.npy"), model(x).numpy())
    print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB (PyTorch {torch.__version__})")


def time_on_gpu(directory):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = make_model().cuda()
    x = torch.from_numpy(np.load(os.path.join(directory, "input.npy"))).cuda()
    samples = []
    with torch.no_grad():
        for _ in range(20):
            model(x)
        torch.cuda.synchronize()
        start = time.perf_counter()
        while len(samples) < 100 or time.perf_counter() - start < 2.0:
            t = time.perf_counter()
            y = model(x)
            torch.cuda.synchronize()
            samples.append(time.perf_counter() - t)
        expected = np.load(os.path.join(directory, "torch_output.npy"))
        error = float(np.abs(y.cpu().numpy() - expected).max())
    result = {"peer": f"PyTorch {torch.__version__} eager (cuDNN "
                      f"{torch.backends.cudnn.version()}, TF32 off)",
              "device": torch.cuda.get_device_name(0), "median_seconds": float(np.median(samples)),
              "runs": len(samples), "max_abs_error_vs_cpu": error}
    json.dump(result, open(os.path.join(directory, "torch.json"), "w"), indent=2)
    print(f"PyTorch eager on {result['device']}: {result['median_seconds'] * 1e3:.3f} ms "
          f"(median of {len(samples)}), max abs error vs the CPU {error:.2g}")


def compare(directory, output):
    expected = np.load(os.path.join(directory, "torch_output.npy"))
    got = np.load(output)
    error = float(np.abs(got.reshape(expected.shape) - expected).max())
    print(f"tirtune vs PyTorch logits: max abs error {error:.3g} "
          f"(largest |logit| {float(np.abs(expected).max()):.3g})")
    return 0 if error <= 1e-3 * max(1.0, float(np.abs(expected).max())) else 1


if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    if command == "export":
        export(directory)
    elif command == "time":
        time_on_gpu(directory)
    elif command == "compare":
        sys.exit(compare(directory, sys.argv[3]))
    else:
        sys.exit(f"unknown command {command}")
