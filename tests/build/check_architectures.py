"""The default build compiles every kernel of the library for sm_80, 86, 89, 90, 100 and 120
(machine code) and compute_120 (PTX, for newer GPUs), and the device code of the test
programs, benchmarks and examples for sm_80 and compute_80 (PTX the driver compiles for any
newer GPU), except overlap_probe, which times a kernel of its own: read from the build's
compile_commands.json. Skipped (exit 77) when the build was configured with its own
CMAKE_CUDA_ARCHITECTURES.

Usage: check_architectures.py COMPILE_COMMANDS_JSON
"""
import json
import os
import re
import sys

configured = os.environ.get("OZDGEMM_CONFIGURED_ARCHITECTURES", "")
default = os.environ.get("OZDGEMM_DEFAULT_ARCHITECTURES", "")
if configured != default:
    print(f"CMAKE_CUDA_ARCHITECTURES={configured} overrides the default: not run")
    sys.exit(77)

library = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "compute_120"}
# The tools' list is checked where it is the default's (-DOZDGEMM_TOOLS_CUDA_ARCHITECTURES=...
# may set another).
tools = {"sm_80", "compute_80"} if os.environ.get("OZDGEMM_TOOLS_ARCHITECTURES", "80") == "80" else None
commands = json.load(open(sys.argv[1], encoding="utf-8"))
cuda = [c for c in commands if c["file"].endswith(".cu")]


def codes_of(command):
    codes = set()
    for group in re.findall(r"code=\[([^]]*)\]", command):
        codes.update(group.split(","))
    return codes


def wanted(path):
    if re.search(r"/kernels/[^/]+\.cu$", path) or path.endswith("/overlap_probe.cu"):
        return library
    return tools


kernels = [c for c in cuda if wanted(c["file"]) is library]
if not kernels or len(kernels) == len(cuda):
    print("FAIL: the compile commands lack the library's kernels or the tools' device code")
    sys.exit(1)
fail = False
for c in cuda:
    codes, want = codes_of(c["command"]), wanted(c["file"])
    if want is not None and codes != want:
        print(f"FAIL: {os.path.basename(c['file'])} has {sorted(codes)}, wants {sorted(want)}")
        fail = True
if not fail:
    print(f"{len(kernels)} library files with {sorted(library)}; "
          f"{len(cuda) - len(kernels)} tool files with {sorted(tools) if tools else 'their own list'}")
sys.exit(1 if fail else 0)
