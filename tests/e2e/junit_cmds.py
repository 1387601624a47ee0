#!/usr/bin/env python3
"""junit_cmds.py JUNIT ROOT: one line per testcase of tipc's JUnit report, in order:
cmd<TAB>ok|failed|skipped<TAB>COMMAND (the run folder ROOT written as @ROOT@), for the dialect test."""
import sys
import xml.etree.ElementTree as ET

root_dir = sys.argv[2]
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    out = case.findtext("system-out") or ""
    cmd = next((l[len("command: "):] for l in out.split("\n") if l.startswith("command: ")), None)
    if cmd is None:
        print("unparsed\t" + case.get("name", ""))
        continue
    word = "skipped" if case.find("skipped") is not None else "failed" if case.find("failure") is not None else "ok"
    print("cmd\t%s\t%s" % (word, cmd.replace(root_dir, "@ROOT@")))
