# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "EIN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ein_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "Package", "Unit", "fuzz_no_crash.py", "numpy_reference.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%ein_src_root", config.ein_src_root))
config.substitutions.append(("%ein_obj_root", config.ein_obj_root))
# The hand-written bundles, as the runtime's build assembles them.
config.substitutions.append(("%bundles", os.path.join(config.ein_obj_root, "runtime", "test", "bundles")))
config.substitutions.append(("%python", sys.executable))
# Scripts that need NumPy use Debian's python3 (python3-numpy), not the one on PATH.
config.substitutions.append(("%numpy_python", "/usr/bin/python3"))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.ein_tools_dir, config.llvm_tools_dir]
tools = ["ein-opt", "ein-compile", "ein-eval", "ein-run"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# ein-lower-to-cuda compiles kernels with the CUDA toolkit's ptxas and
# libdevice; the build machines have it at /usr/local/cuda.
if os.access("/usr/local/cuda/bin/ptxas", os.X_OK):
    config.available_features.add("cuda-toolkit")

# ein-compile --explain=FILE.svg draws with Graphviz's dot (scripts/setup.sh
# installs graphviz).
import shutil

# Runs of several ranks start under Open MPI's mpirun (scripts/setup.sh
# installs openmpi-bin): as root it needs --allow-run-as-root, more ranks
# than cores need --oversubscribe, and in containers the shared-memory
# transport must do without its single-copy mechanism.
mpirun = shutil.which("mpirun") or "mpirun"
config.substitutions.append(("%mpirun", "env OMPI_MCA_btl_vader_single_copy_mechanism=none "
                             f"{mpirun} --allow-run-as-root --oversubscribe"))
if shutil.which("dot"):
    config.available_features.add("graphviz")

# import-runner-oracle.test runs upstream's lowering of the same linalg with
# mlir-runner (Debian's mlir-22-tools) and its runtime libraries (libmlir-22-dev).
runner_libs = [os.path.join(config.llvm_tools_dir, "..", "lib", f"lib{name}.so")
               for name in ("mlir_runner_utils", "mlir_c_runner_utils")]
if os.access(os.path.join(config.llvm_tools_dir, "mlir-runner"), os.X_OK) and all(
        os.path.exists(lib) for lib in runner_libs):
    config.available_features.add("mlir-runner")
    config.substitutions.append(("%mlir_runner_libs", ",".join(os.path.normpath(lib) for lib in runner_libs)))
