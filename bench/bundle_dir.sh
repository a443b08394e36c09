# Sourced by the check scripts' build steps (check_cuda_ranks.sh,
# check_logical_devices.sh): start_bundle_dir DIR makes DIR a fresh
# directory of bundles (DIR/bundles, DIR/src, an empty DIR/list.txt),
# replacing only a directory an earlier build made (one with list.txt);
# anything else stops the build, naming it.
start_bundle_dir() {
  local dir=$1
  if [ -e "$dir" ] && [ ! -f "$dir/list.txt" ]; then
    echo "$dir exists and is no earlier build's (no list.txt): name another directory" >&2
    exit 1
  fi
  rm -rf "$dir"
  mkdir -p "$dir/bundles" "$dir/src"
  : > "$dir/list.txt"
}
