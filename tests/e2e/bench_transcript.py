#!/usr/bin/env python3
"""bench_transcript.py: one benchmark_train run as comparable lines, for test_bench_golden.sh.

  bench_transcript.py golden GOLDEN_FILE K            section K (1-based) of a golden transcript
  bench_transcript.py tipc DRYRUN JUNIT ENVLOG ROOT FILES   what tipc did (its dry run, JUnit report,
                                                      the stub's FLAGS log, the files it made)
  bench_transcript.py golden-plan GOLDEN_FILE K       / tipc DRYRUN - - ROOT -: only what a dry run
                                                      shows (commands, flags; no statuses, no files)

Lines, in order:
  harness<TAB>[timeout Ns ]LOG     each run of the repo's harness the script makes, with its log
  train<TAB>ok|failed<TAB>CMD<TAB>FLAGS  each training command, its status, the FLAGS_* it got
  speed<TAB>ARGS                   the analysis: analysis.py's arguments (tipc: `tipc speed`'s), one
                                   space between words, quotes removed (PaddleSeg's LOG_filtered: LOG)
  file<TAB>PATH                    sorted; without test_tipc/benchmark_train.txt (tipc edits the copy
                                   in memory), index/*_speed (the stub analysis writes no record) and
                                   tipc's own OUTPUT/tipc/ folder
"""
import re
import shlex
import sys
import xml.etree.ElementTree as ET


def dur(s):
    m = re.fullmatch(r"(\d+)([smh]?)", s)
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def keep_file(p):
    return not (p == "test_tipc/benchmark_train.txt" or re.search(r"(^|/)index/.+_speed$", p)
                or re.search(r"^test_tipc/output/[^/]+/[^/]+/tipc(/|$)", p))


def golden(path, k):
    sec, n = [], 0
    for line in open(path, encoding="utf-8", errors="surrogateescape").read().split("\n"):
        if line.startswith("### run "):
            n += 1
            continue
        if n == k and line:
            sec.append(line)
    out, files = [], []
    for line in sec:
        f = line.split("\t")
        if f[0] == "harness":
            m = re.fullmatch(r"(?:timeout (\S+) )?bash test_tipc/test_train_inference_python\.sh \S+ benchmark_train > (\S+) 2>&1 ", f[1])
            out.append("harness\t%s%s" % ("timeout %ds " % dur(m.group(1)) if m.group(1) else "", m.group(2)))
        elif f[0] == "cmd":
            if "/scripts/analysis.py " in f[2]:
                # PaddleSeg's script first runs the repo's test_tipc/filter_log.py when the config
                # sets skip_iters, and analyses LOG_filtered; tipc analyses LOG itself (README)
                args = [re.sub(r"_log_filtered$", "_log", w) for w in shlex.split(f[2])[2:]]
                out.append("speed\t" + " ".join(args))
            else:
                out.append("train\t%s\t%s\t%s" % ("ok" if f[1] == "0" else "failed", f[2], f[3] if len(f) > 3 else ""))
        elif f[0] == "file" and keep_file(f[1].rstrip("/")):
            files.append(line)
    return out, files


def tipc(dry, junit, envlog, root, filelist):
    """junit "-": a dry run only (commands and flags from the plan, no statuses, no files)."""
    harness, planned, env = [], [], ""
    for line in open(dry, encoding="utf-8", errors="surrogateescape"):
        line = line.rstrip("\n")
        m = re.match(r"\s+output: > (.*?)(?: \(timeout (\d+)s\))?(?: \(no command\))?$", line)
        if m:
            harness.append("harness\t%s%s" % ("timeout %ss " % m.group(2) if m.group(2) else "",
                                              m.group(1).replace(root, "@ROOT@")))
        if line.startswith("# env:"):
            env = " ".join(sorted(w for w in line[6:].split() if w.startswith("FLAGS_")))
        m = re.match(r"\s*\d+ (\w+)\s+line \d+\s+(.*)$", line)
        if m:
            planned.append((m.group(1), m.group(2).replace(root, "@ROOT@")))
    out = []
    if junit == "-":
        for kind, cmd in planned:
            if kind == "train":
                out.append("train\t%s\t%s" % (cmd, env))
            elif kind == "speed":
                out.append("speed\t" + " ".join(shlex.split(cmd)[2:]))
            else:
                out.append("%s\t%s" % (kind, cmd))
        return harness + out, []
    flags = [l.rstrip("\n") for l in open(envlog)]
    t = 0
    for case in ET.parse(junit).getroot().iter("testcase"):
        so = case.findtext("system-out") or ""
        cmd = next((l[len("command: "):] for l in so.split("\n") if l.startswith("command: ")), "")
        cmd = cmd.replace(root, "@ROOT@")
        kind = case.get("name", "").split(".")[2].split("[")[0]
        word = "skipped" if case.find("skipped") is not None else "failed" if case.find("failure") is not None else "ok"
        if kind == "train":
            out.append("train\t%s\t%s\t%s" % (word, cmd, flags[t] if t < len(flags) else "?"))
            t += 1
        elif kind == "speed":
            out.append("speed\t" + " ".join(shlex.split(cmd)[2:]))
        else:
            out.append("%s\t%s\t%s" % (kind, word, cmd))
    files = ["file\t" + p for p in (l.rstrip("\n") for l in open(filelist)) if keep_file(p.rstrip("/"))]
    return harness + out, files


if __name__ == "__main__":
    if sys.argv[1] in ("golden", "golden-plan"):
        lines, files = golden(sys.argv[2], int(sys.argv[3]))
        lines = [l for l in lines if l.startswith("harness")] + [l for l in lines if not l.startswith("harness")]
        if sys.argv[1] == "golden-plan":   # what a dry run can show: no statuses, no files
            lines = [re.sub(r"^train\t[^\t]*\t", "train\t", l) for l in lines]
            files = []
    else:
        lines, files = tipc(*sys.argv[2:7])
    print("\n".join(lines + sorted(files)))
