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

# compile_bundle DIR NAME LIST_LINE SOURCE [ein-compile flags...]: compiles
# SOURCE with the caller's $compile into DIR/bundles/NAME (its log
# DIR/src/NAME.log) and adds LIST_LINE to DIR/list.txt; a refusal adds
# "NAME: its first error line" to the caller's `skipped` and is left out.
# Returns ein-compile's verdict.
compile_bundle() {
  local dir=$1 name=$2 line=$3 source=$4
  shift 4
  if "$compile" "$source" -o "$dir/bundles/$name" "$@" > "$dir/src/$name.log" 2>&1; then
    echo "$line" >> "$dir/list.txt"
    return 0
  fi
  skipped+=("$name: $(grep -m1 -i 'error' "$dir/src/$name.log" | cut -c1-160 || true)")
  echo "skipped $name"
  return 1
}

# end_bundle_dir DIR: lists what the build left out (the caller's
# `skipped`) and removes DIR/src.
end_bundle_dir() {
  local s
  for s in "${skipped[@]}"; do echo "left out: $s"; done
  rm -rf "$1/src"
}
