#!/usr/bin/env python3
"""derive-tipc-logs.py: write MODE.cmds.tipc and MODE.files.tipc beside the golden fixtures where
tipc deliberately differs from the original harness in one way: an inference log that an earlier
command of the same run already wrote (the second gpu_list / trainer pass, or the second whole_infer
model, all writing python_infer_*.log again) gets the pass's name in front, so the first pass's log
is not overwritten (README "Differences from the original, on purpose").

Independent of tipc's C code: it reads the original's commands (MODE.cmds, or MODE.cmds.firstcolon
where that exists) and applies the rule:
  * the pass of an inference is named by the export before it: `..._export.log` ->
    `<trainer>_gpus_<g>_autocast_<a>_nodes_<n>` (the export log's name without `_export.log`);
    whole_infer's `_export_<k>.log` -> `model_<k>`; before any export in whole_infer: `model_0`;
  * a `> LOG 2>&1` of a python_infer_* log already written earlier in the run becomes
    `> DIR/<pass>_<name> 2>&1`.
Usage: scripts/golden/derive-tipc-logs.py tests/fixtures/golden   (rewrites the .tipc files)
"""
import os
import re
import sys

MODES = ["lite_train_lite_infer", "lite_train_whole_infer", "whole_infer", "whole_train_whole_infer",
         "klquant_whole_infer"]
REDIR = re.compile(r"> (\S+) 2>&1 ")


def derive(lines):
    seen, out, tag, renamed = set(), [], "model_0", []
    for line in lines:
        status, cmd = line.split("\t", 1)
        m = REDIR.search(cmd)
        log = m.group(1) if m else None
        if log:
            base = os.path.basename(log)
            k = re.fullmatch(r"_export_(\d+)\.log", base)
            if k:
                tag = "model_" + k.group(1)
            elif base.endswith("_export.log"):
                tag = base[: -len("_export.log")]
            elif base.startswith("python_infer_") and log in seen:
                new = os.path.join(os.path.dirname(log), tag + "_" + base)
                cmd = cmd[: m.start()] + "> " + new + " 2>&1 " + cmd[m.end():]
                renamed.append(new)
                log = new
            seen.add(log)
        out.append(status + "\t" + cmd)
    return out, renamed


def main(root):
    n = 0
    for d in sorted(os.listdir(root)):
        fd = os.path.join(root, d)
        if not os.path.isfile(os.path.join(fd, "config.txt")):
            continue
        for mode in MODES:
            src = os.path.join(fd, mode + ".cmds.firstcolon")
            if not os.path.exists(src):
                src = os.path.join(fd, mode + ".cmds")
            with open(src) as f:
                lines = f.read().splitlines()
            out, renamed = derive(lines)
            for ext in (".cmds.tipc", ".files.tipc"):
                p = os.path.join(fd, mode + ext)
                if os.path.exists(p):
                    os.remove(p)
            if not renamed:
                continue
            with open(os.path.join(fd, mode + ".cmds.tipc"), "w") as f:
                f.write("\n".join(out) + "\n")
            with open(os.path.join(fd, mode + ".files")) as f:
                files = f.read().splitlines()
            files = sorted(set(files) | {p[2:] if p.startswith("./") else p for p in renamed},
                           key=lambda s: s.encode())
            with open(os.path.join(fd, mode + ".files.tipc"), "w") as f:
                f.write("\n".join(files) + "\n")
            n += 1
            print(f"{d} {mode}: {len(renamed)} inference logs renamed")
    print(f"{n} fixture runs with .tipc variants")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/golden")
