#!/usr/bin/env python3
"""doc_links.py -- every link of README.md and docs/*.md to a file of the tree
exists, and every link to a heading (FILE.md#anchor or #anchor) names a
heading of that file, with GitHub's anchors (lower case, punctuation other
than '-' and '_' dropped, spaces to '-').  Exit 0 ok, 1 with one line per
broken link.  usage: doc_links.py SOURCE_DIR"""
import os
import re
import sys


def slug(heading):
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs"))
                                   if f.endswith(".md"))
    anchors = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            anchors[f] = {slug(m.group(1)) for line in fh for m in [re.match(r"^#+\s+(.*)", line)] if m}
    bad = 0
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            text = fh.read()
        for m in re.finditer(r"\]\(([^)\s#]*)(?:#([^)\s]+))?\)", text):
            target, anchor = m.group(1), m.group(2)
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            tf = os.path.normpath(os.path.join(os.path.dirname(f), target)) if target else f
            if target and not os.path.exists(os.path.join(root, tf)):
                print(f"{f}: link to {target}: no such file")
                bad += 1
            elif anchor and tf in anchors and anchor not in anchors[tf]:
                print(f"{f}: link to {target or ''}#{anchor}: no such heading in {tf}")
                bad += 1
    print(f"{len(files)} files, {bad} broken links")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
