"""Every relative link and every repository path in backticks in the user docs names a file
or folder that exists, so the docs cannot silently point at a moved source. The results pages
under bench/results/ are left out: they record the commands of their own commit.

Usage: check_links.py SOURCE_DIR
"""
import glob
import os
import re
import sys

root = sys.argv[1]
os.chdir(root)
pages = ["README.md", "CONTRIBUTING.md", "tests/README.md", "bench/probes/README.md"]
pages += sorted(glob.glob("tests/*/README.md"))
pages += sorted(glob.glob("docs/*.md"))
link = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")
path = re.compile(r"`((?:src|kernels|include|tests|bench|scripts|docs|cmake)/[A-Za-z0-9_./*-]+)`")
bad = []
for page in pages:
    text = open(page, encoding="utf-8").read()
    for m in link.finditer(text):
        target = m.group(1)
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(page), target))):
            bad.append(f"{page}: link {target}")
    for m in path.finditer(text):
        target = m.group(1).rstrip(".")
        if not glob.glob(target) and not glob.glob(target + "*"):
            bad.append(f"{page}: path `{target}`")
for b in bad:
    print("FAIL:", b)
print(f"{len(pages)} pages checked, {len(bad)} broken reference(s)")
sys.exit(1 if bad else 0)
