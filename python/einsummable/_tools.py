"""Where the built tools and the runtime library are: build/ beside the
package's repository, or EIN_BUILD_DIR."""

import os
import shutil


def build_dir():
    env = os.environ.get("EIN_BUILD_DIR")
    if env:
        return os.path.abspath(env)
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "build"))


def tool(name):
    """The path of an ein tool (ein-compile, ein-run, ...)."""
    path = os.path.join(build_dir(), "bin", name)
    if os.path.exists(path):
        return path
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        "%s not found in %s/bin or on PATH: build the project "
        "(scripts/setup.sh) or set EIN_BUILD_DIR" % (name, build_dir()))


def runtime_library():
    """The path of libeinsummable_runtime.so."""
    candidates = [os.path.join(build_dir(), "lib",
                               "libeinsummable_runtime.so")]
    env = os.environ.get("EIN_RUNTIME_LIBRARY")
    if env:
        candidates.insert(0, env)
    for path in candidates:
        if os.path.exists(path):
            return path
    raise FileNotFoundError(
        "libeinsummable_runtime.so not found (looked in %s): build the "
        "project (scripts/setup.sh) or set EIN_BUILD_DIR"
        % ", ".join(candidates))
