// A GPT-2-sized embedding lookup (bench/results/2026-12-02-import-checks-cuda-h200.md).
func.func @big(%t: tensor<50257x768xbf16> {ein.weight}, %i: tensor<8x1024xi64>) -> tensor<8x1024x768xbf16> {
  %e = ein.gather %t[%i] : tensor<50257x768xbf16>, tensor<8x1024xi64> -> tensor<8x1024x768xbf16>
  return %e : tensor<8x1024x768xbf16>
}
