"""load(..., device_map=...): a CUDA bundle's devices on fewer GPUs
(docs/cuda-runtime.md, "Logical devices"). What needs no GPU is checked
here: the argument's type and values (TypeError and ValueError naming
device_map, before the bundle is read), the runtime's refusals as a
ValueError naming it (a map for a cpu bundle; a count other than a CUDA
bundle's devices), and that a load without a map is as before (gpus 0 on
the cpu target). bench/check_logical_devices.sh runs models on one GPU
through device_map on the GPU machine."""

import os
import shutil
import sys
import tempfile
import unittest
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import einsummable  # noqa: E402
import models  # noqa: E402
from einsummable import _runtime, _tools  # noqa: E402
from test_frontend import error  # noqa: E402


class DeviceMap(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        torch.manual_seed(3)
        cls.model = models.MLPClassifier().eval()
        cls.x = torch.randn(4, 20)
        cls.work = tempfile.mkdtemp(prefix="ein-device-map-")
        cls.compiled = einsummable.compile(cls.model, (cls.x,), devices=2,
                                           workdir=cls.work)
        cls.bundle = cls.compiled.bundle

    @classmethod
    def tearDownClass(cls):
        cls.compiled.close()
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_refuses_what_is_no_list_of_gpu_indices(self):
        # Checked before the bundle is read: a path that is no bundle
        # still gets the argument's error.
        for value in ("0,0", 0, {0: 0}, b"\x00"):
            with self.assertRaisesRegex(TypeError,
                                        "device_map must be a list of GPU "
                                        "indices"):
                einsummable.load("/nonexistent", device_map=value)
        for value, index in (([0, 1.0], 1), ([True, 0], 0), (["0"], 0),
                             ([0, None], 1)):
            with self.assertRaisesRegex(TypeError,
                                        r"device_map\[%d\] must be an int"
                                        % index):
                einsummable.load("/nonexistent", device_map=value)
        with self.assertRaisesRegex(ValueError, "device_map is empty"):
            einsummable.load("/nonexistent", device_map=[])
        with self.assertRaisesRegex(ValueError,
                                    r"device_map\[1\] is -1: a GPU index is "
                                    "0 or more"):
            einsummable.load("/nonexistent", device_map=(0, -1))
        with self.assertRaisesRegex(ValueError, r"device_map\[0\] is 2147483648"):
            einsummable.load("/nonexistent", device_map=[2 ** 31])

    def test_a_cpu_bundle_refuses_a_map(self):
        for value in ([0, 0], (1, 0)):
            with self.assertRaises(ValueError) as caught:
                einsummable.load(self.bundle, self.model, device_map=value)
            text = str(caught.exception)
            self.assertTrue(text.startswith("device_map=%s: the device map "
                                            % list(value)), text)
            self.assertIn("applies to the CUDA backend, and this bundle "
                          "targets cpu", text)

    def test_without_a_map_as_before(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no LogicalDevicesWarning
            loaded = einsummable.load(self.bundle, self.model)
        self.assertEqual(loaded.devices, 2)
        self.assertEqual(loaded.gpus, 0)  # the cpu target has none
        with torch.no_grad():
            self.assertLess(error(loaded(self.x), self.model(self.x)), 1e-4)
        loaded.close()

    def test_a_cuda_bundle_takes_one_entry_per_device(self):
        # The hand-written 2-device CUDA bundle, where this build has the
        # CUDA backend; the count is checked before the backend, with or
        # without a GPU here.
        bundle = os.path.join(_tools.build_dir(), "runtime", "test",
                              "bundles", "matmul-2gpu-cuda")
        if not os.path.isdir(bundle):
            self.skipTest("no CUDA bundles in this build (%s)" % bundle)
        with self.assertRaisesRegex(
                ValueError,
                r"device_map=\[0\]: the device map 0 has 1 entry, but the "
                r"bundle has 2 devices"):
            _runtime.Bundle(bundle, device_map=[0])
        with self.assertRaisesRegex(ValueError,
                                    r"device_map=\[0, 0, 0\]: the device map "
                                    "0,0,0 has 3 entries"):
            _runtime.Bundle(bundle, device_map=[0, 0, 0])
        try:
            folded = _runtime.Bundle(bundle, device_map=[0, 0])
        except RuntimeError as e:
            # No GPU (or no CUDA backend) here: the backend says so, not
            # the map's checks.
            self.assertIn("the bundle targets cuda, but", str(e))
        else:
            self.assertEqual((folded.devices, folded.gpus), (2, 1))
            folded.close()


if __name__ == "__main__":
    unittest.main()
