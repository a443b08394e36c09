#!/usr/bin/env python3
"""A ResNet-50 convolution layer (N=32, 56x56x64 -> 64, 3x3, padding 1,
bf16) as linalg, the way front ends write it: a zero tensor.pad, then
linalg.conv_2d_nhwc_hwcf (or _nchw_fchw) from a zero fill. Writes
DIR/conv_resnet_nhwc.mlir and DIR/conv_resnet_nchw.mlir; bench/torch_conv.py
is their peer.

    python3 bench/gen_conv_bench.py DIR [N H W C F K]
"""
import os
import sys


def program(layout, n, h, w, c, f, k):
    p = k // 2
    if layout == "nhwc":
        x, xp = (n, h, w, c), (n, h + 2 * p, w + 2 * p, c)
        filt, out = (k, k, c, f), (n, h, w, f)
        low = high = "0, %d, %d, 0" % (p, p)
        op = "linalg.conv_2d_nhwc_hwcf"
    else:
        x, xp = (n, c, h, w), (n, c, h + 2 * p, w + 2 * p)
        filt, out = (f, c, k, k), (n, f, h, w)
        low = high = "0, 0, %d, %d" % (p, p)
        op = "linalg.conv_2d_nchw_fchw"

    def t(shape):
        return "tensor<%sxbf16>" % "x".join(map(str, shape))

    return """func.func @conv_%s(%%x: %s, %%w: %s) -> %s {
  %%zero = arith.constant 0.0 : bf16
  %%p = tensor.pad %%x low[%s] high[%s] {
  ^bb0(%%i: index, %%j: index, %%k: index, %%l: index):
    tensor.yield %%zero : bf16
  } : %s to %s
  %%e = tensor.empty() : %s
  %%f = linalg.fill ins(%%zero : bf16) outs(%%e : %s) -> %s
  %%y = %s {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%%p, %%w : %s, %s) outs(%%f : %s) -> %s
  return %%y : %s
}
""" % (layout, t(x), t(filt), t(out), low, high, t(x), t(xp), t(out), t(out),
       t(out), op, t(xp), t(filt), t(out), t(out), t(out))


def main():
    out = sys.argv[1]
    dims = [int(v) for v in sys.argv[2:]] or [32, 56, 56, 64, 64, 3]
    os.makedirs(out, exist_ok=True)
    for layout in ("nhwc", "nchw"):
        with open(os.path.join(out, "conv_resnet_%s.mlir" % layout), "w") as f:
            f.write(program(layout, *dims))


if __name__ == "__main__":
    main()
