"""The default build compiles every kernel for sm_80, 86, 89, 90, 100 and 120 (machine code)
and compute_120 (PTX, for newer GPUs): read from the build's compile_commands.json. Skipped
(exit 77) when the build was configured with its own CMAKE_CUDA_ARCHITECTURES.

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

want_sass = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}
want_ptx = {"compute_120"}
commands = json.load(open(sys.argv[1], encoding="utf-8"))
kernels = [c for c in commands if re.search(r"/kernels/[^/]+\.cu$", c["file"])]
if not kernels:
    print("FAIL: no kernel translation unit in the compile commands")
    sys.exit(1)
fail = False
for c in kernels:
    codes = set()
    for group in re.findall(r"code=\[([^]]*)\]", c["command"]):
        codes.update(group.split(","))
    missing = (want_sass | want_ptx) - codes
    if missing:
        print(f"FAIL: {os.path.basename(c['file'])} lacks {sorted(missing)} (has {sorted(codes)})")
        fail = True
print(f"{len(kernels)} kernel files, each with SASS for {sorted(want_sass)} and PTX {sorted(want_ptx)}"
      if not fail else "")
sys.exit(1 if fail else 0)
