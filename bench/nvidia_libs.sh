# Sourced by the GPU-machine scripts: puts the NVIDIA libraries that exist
# there only inside PyTorch's environment (cuDNN, NVRTC) on LD_LIBRARY_PATH,
# so ein-run's dlopen finds them as PyTorch does, and keeps NVLink
# multicast off (docs/toolchain.md).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia_dirs=$(python3 - <<'PY' 2>/dev/null
import glob, os, torch
root = os.path.join(os.path.dirname(torch.__file__), "..", "nvidia")
dirs = sorted({os.path.realpath(os.path.dirname(p)) for p in
               glob.glob(os.path.join(root, "*", "lib", "libcudnn*.so*")) +
               glob.glob(os.path.join(root, "*", "lib", "libnvrtc*.so*"))})
print(":".join(dirs))
PY
)
for dir in /usr/local/cuda/lib64; do
  [ -d "$dir" ] && nvidia_dirs=${nvidia_dirs:+$nvidia_dirs:}$dir
done
export LD_LIBRARY_PATH=${nvidia_dirs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
