"""Writes program.json FILE with COUNT f32 arguments of 2^31 elements each
(the most one argument of the CPU reference may have, 16 GiB as float64)
and one op, a reshape of the first: a program that declares more memory than
a machine has, read without allocating any of it.

usage: huge_program.py FILE [COUNT]
"""
import json
import sys

count = int(sys.argv[2]) if len(sys.argv) > 2 else 1
elements = 2 ** 31
arguments = [{"name": f"x{i}", "type": {"dtype": "f32", "shape": [elements]}}
             for i in range(count)]
program = {
    "format": "ein-program", "version": 1, "function": "huge",
    "arguments": arguments,
    "ops": [{"kind": "reshape", "inputs": ["x0"], "result": "y",
             "reassociation": [[0, 1]],
             "type": {"dtype": "f32", "shape": [2, elements // 2]}}],
    "results": ["y"]}
with open(sys.argv[1], "w") as f:
    json.dump(program, f, indent=2)
