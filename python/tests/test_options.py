"""ein-compile's options reach Python: every flag ein-compile takes is a
keyword of einsummable.compile() with ein-compile's default, or is listed
here as deliberately not one, with the reason. The flags and their defaults
are read from where they are declared once
(include/Einsummable/Pipelines/CompileOptions.def) and from ein-compile
--help itself, so an option added there and not here fails this test."""

import inspect
import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

import einsummable  # noqa: E402
from einsummable import _tools  # noqa: E402

DEFINITIONS = os.path.join(ROOT, "include", "Einsummable", "Pipelines",
                           "CompileOptions.def")

# Flags that are not keywords of compile(), and why.
NOT_KEYWORDS = {
    "o": "the bundle is written into `workdir`",
    "explain": "always written, to workdir/explain.json (Compiled.explain)",
    "weights": "the front end marks the model's parameters and buffers as "
               "weights itself",
    "print-pipeline": "prints the ein-opt command and exits: no bundle",
    "emit-shard": "annotates the program for upstream `shard`: run "
                  "ein-compile --emit-shard on workdir/model.mlir",
    "timing": "MLIR's pass timing, on standard error",
    "gradients": "compile() builds the model's forward pass; gradients and "
                 "training steps are ein-autodiff's (docs/training.md)",
    "optimizer": "a training step, ein-autodiff's (docs/training.md)",
}
# Defaults of the flags ein-compile spells its own way (declared
# EIN_PLANNER_OPTION_OWN in CompileOptions.def), as compile() spells them.
OWN_DEFAULTS = {"compute": "auto", "memory-limit": None}


def declared():
    """{flag: (kind, python default)} from CompileOptions.def."""
    text = open(DEFINITIONS).read()
    found = {}
    pattern = re.compile(
        r"^(EIN_\w+)\(\s*([\w:]+),\s*(\w+),\s*\"([\w-]+)\",\s*"
        r"(\"[^\"]*\"|[\w]+)?", re.M)
    for kind, ctype, _, flag, default in pattern.findall(text):
        if kind == "EIN_COMPILE_LIST_OPTION":
            found[flag] = (kind, None)
            continue
        if ctype == "bool":
            value = {"true": True, "false": False}[default]
        elif ctype.endswith("int64_t"):
            value = int(default)
        else:
            value = default.strip('"')
        found[flag] = (kind, value)
    return found


def ein_compile_flags():
    """The flags `ein-compile --help` lists under its own options."""
    done = subprocess.run([_tools.tool("ein-compile"), "--help"],
                          capture_output=True, text=True, check=True)
    own = done.stdout.split("ein-compile options:", 1)[1]
    return set(re.findall(r"^\s+--?([\w-]+)", own, re.M))


class Options(unittest.TestCase):
    def test_every_flag_reaches_compile_with_its_default(self):
        flags = ein_compile_flags()
        definitions = declared()
        keywords = inspect.signature(einsummable.compile).parameters
        self.assertGreater(len(flags), 20, flags)
        for flag in sorted(flags):
            with self.subTest(flag=flag):
                if flag in NOT_KEYWORDS:
                    self.assertNotIn(flag.replace("-", "_"), keywords)
                    continue
                keyword = flag.replace("-", "_")
                self.assertIn(keyword, keywords,
                              "ein-compile --%s is not a keyword of "
                              "einsummable.compile()" % flag)
                if flag in OWN_DEFAULTS:
                    want = OWN_DEFAULTS[flag]
                else:
                    self.assertIn(flag, definitions,
                                  "--%s is not declared in "
                                  "CompileOptions.def" % flag)
                    want = definitions[flag][1]
                self.assertEqual(keywords[keyword].default, want, flag)

    def test_every_declared_flag_is_a_flag_of_ein_compile(self):
        flags = ein_compile_flags()
        for flag, (kind, _) in declared().items():
            with self.subTest(flag=flag):
                if kind == "EIN_PIPELINE_OPTION":
                    self.assertNotIn(flag, flags)
                else:
                    self.assertIn(flag, flags)

    def test_a_keyword_reaches_ein_compile(self):
        """A keyword away from its default is passed on (and a bad value is
        ein-compile's error, naming the flag)."""
        import torch
        model = torch.nn.Linear(4, 4).eval()
        with self.assertRaisesRegex(einsummable.CompileError,
                                    "--remarks must be missed or none"):
            einsummable.compile(model, (torch.randn(2, 4),), remarks="some")


if __name__ == "__main__":
    unittest.main()
