"""Writes a one-device CPU bundle DIR whose program copies its [ROWS, 1024]
f32 argument to its result (a transfer step): a bundle with a large output
(4 MiB at 1024 rows) and no kernels, for tests of how outputs are written.

usage: copy_bundle.py DIR [ROWS]
"""
import json
import os
import sys

directory = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
os.makedirs(directory, exist_ok=True)
tensor = {"dtype": "f32", "shape": [rows, 1024]}
size = rows * 1024 * 4
manifest = {
    "format": "ein-bundle", "version": 1, "target": "cpu", "chip": "host",
    "devices": 1, "arena_bytes": [2 * size], "kernel_libraries": [],
    "buffers": [{"name": "X", "device": 0, "offset": 0, "type": tensor},
                {"name": "Y", "device": 0, "offset": size, "type": tensor}],
    "inputs": [{"type": tensor, "blocks": [{"buffer": "X", "offset": [0, 0]}]}],
    "outputs": [{"type": tensor,
                 "blocks": [{"buffer": "Y", "offset": [0, 0]}]}],
    "steps": [{"kind": "transfer", "device": 0, "from": "X", "to": "Y",
               "deps": []}]}
program = {
    "format": "ein-program", "version": 1, "function": "copy",
    "arguments": [{"name": "x", "type": tensor}],
    "ops": [{"kind": "reshape", "inputs": ["x"], "result": "y",
             "reassociation": [[0], [1]], "type": tensor}],
    "results": ["y"]}
with open(os.path.join(directory, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=2)
with open(os.path.join(directory, "program.json"), "w") as f:
    json.dump(program, f, indent=2)
