#!/usr/bin/env python3
"""Says a benchmark plan in one phrase, from its ein-compile --explain JSON.

    python3 bench/plan_phrase.py llama W-2.json   # a block of gen_llama_block.py
    python3 bench/plan_phrase.py chain C.json     # a chain of gen_matrix_chain.py

The explain JSON names loops d0, d1, ... (docs/explain.md); this script
knows the workloads' shapes, so it can name them: a LLaMA block's first op
is the RMSNorm over x[batch, tokens, hidden], a chain's first op the matmul
over (rows, inner, columns) (batched: batch first). Prints e.g.
"x by tokens/2, attention by kv_head/2; 84 MB in 8 exchanges".
"""
import json
import sys

NAMES = {
    "llama": ["batch", "tokens", "hidden"],
    "chain": ["rows", "inner", "columns"],
    "chain-batched": ["batch", "rows", "columns", "inner"],
}


def cut(spec, names):
    parts = ["%s/%d" % (n, p) for n, p in zip(names, spec) if p > 1]
    return " x ".join(parts) or "replicated"


def phrase(kind, plan):
    ops = plan["ops"]
    first = ops[0]
    if kind == "chain" and len(first["spec"]) == 4:
        kind = "chain-batched"
    words = []
    subject = "x" if kind == "llama" else "first matmul"
    words.append("%s by %s" % (subject, cut(first["spec"], NAMES[kind])))
    for op in ops:
        if op["op"].startswith("ein.attention"):
            words.append("attention by %s" % cut(op["spec"], op["indices"].split(",")))
            break
    moved = sum(e["bytes"] for e in plan["exchanges"])
    text = ", ".join(words)
    if plan["exchanges"]:
        return "%s; %.0f MB in %d exchanges" % (text, moved / 1e6, len(plan["exchanges"]))
    return text + "; nothing moved"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("llama", "chain"):
        sys.exit("usage: plan_phrase.py llama|chain EXPLAIN.json")
    try:
        with open(sys.argv[2]) as f:
            plan = json.load(f)
        print(phrase(sys.argv[1], plan))
    except (OSError, ValueError, KeyError, IndexError) as e:
        sys.exit("plan_phrase.py: cannot read a plan from '%s': %s" % (sys.argv[2], e))


if __name__ == "__main__":
    main()
