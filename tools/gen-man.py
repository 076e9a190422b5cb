#!/usr/bin/env python3
"""Writes fikit's man pages from the one source each already has, so that no second
copy can drift: fikit(1), fikit-launch(1) and fikitd(8) from the programs' own --help
(fikit(1) with every command's), fikit.ini(5) from the example configuration, whose
comments document every key.

  gen-man.py --build BUILD --out DIR [--ini conf/fikit.ini] [--version V]

A --help text is read as: the Usage line (the synopsis), paragraphs (the description),
then blocks that start with a line ending in ':' ("Options:", "Signals:", "Exit
status: ..."), each a section of the page, kept as preformatted text so that the
alignment of option lists survives."""
import argparse
import datetime
import os
import re
import subprocess
import sys

PAGES = (("fikit", 1, "tools/fikit"), ("fikit-launch", 1, "tools/fikit-launch"), ("fikitd", 8, "tools/fikitd"))
SEE_ALSO = ("fikit(1)", "fikit-launch(1)", "fikitd(8)", "fikit.ini(5)")


def esc(line):
    """One line of text as roff reads it: backslashes doubled, a leading dot or
    quote kept as text."""
    line = line.replace("\\", "\\e")
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def help_of(path, args=()):
    r = subprocess.run([path, *args, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not r.stdout.startswith("Usage:"):
        sys.exit(f"gen-man: {path} {' '.join(args)} --help: exit {r.returncode}: {r.stderr.strip()[:200]}")
    return r.stdout.rstrip("\n").splitlines()


def split(lines):
    """(synopsis, description paragraphs, [(heading, lines)])."""
    usage = lines[0][len("Usage:"):].strip()
    desc, blocks = [], []
    para = []
    for line in lines[1:]:
        heading = re.match(r"^([A-Z][A-Za-z ]+):(.*)$", line)
        if heading and (blocks or heading.group(1) in ("Options", "Commands", "Signals", "Exit status",
                                                        "Environment", "Files")):
            if para:
                desc.append(para)
                para = []
            rest = heading.group(2).strip()
            blocks.append((heading.group(1), [rest] if rest else []))
            continue
        if blocks:
            blocks[-1][1].append(line)
        elif line.strip():
            para.append(line.strip())
        elif para:
            desc.append(para)
            para = []
    if para:
        desc.append(para)
    return usage, desc, blocks


def preformatted(lines):
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    while lines and not lines[0].strip():
        lines = lines[1:]
    return [".nf"] + [esc(l) for l in lines] + [".fi"]


def page(name, section, summary, help_lines, sub=(), version="", date=""):
    usage, desc, blocks = split(help_lines)
    out = [f'.TH "{name.upper()}" "{section}" "{date}" "fikit {version}" "fikit"', ".SH NAME",
           f"{esc(name)} \\- {esc(summary)}", ".SH SYNOPSIS", ".nf", esc(usage), ".fi", ".SH DESCRIPTION"]
    for i, p in enumerate(desc):
        if i:
            out.append(".PP")
        out += [esc(l) for l in p]
    for heading, lines in blocks:
        if heading == "See also":
            continue  # the page's own SEE ALSO names them all
        out.append(f".SH {esc(heading.upper())}")
        out += preformatted(lines)
    for cmd, lines in sub:
        u, d, b = split(lines)
        out += [f'.SS "{name} {cmd}"', ".nf", esc(u), ".fi"]
        for p in d:
            out += [".PP"] + [esc(l) for l in p]
        for heading, ls in b:
            out += [".PP", esc(heading + ":")] + preformatted(ls)
    out += [".SH SEE ALSO", ", ".join(f"\\fB{s.split('(')[0]}\\fR({s.split('(')[1]}" for s in SEE_ALSO
                                        if not s.startswith(name + "("))]
    return "\n".join(out) + "\n"


def ini_page(path, version, date):
    """fikit.ini(5): the example file's header comment as the description, then each
    section's keys with the comments above them."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out = [f'.TH "FIKIT.INI" "5" "{date}" "fikit {version}" "fikit"',
           ".SH NAME", "fikit.ini \\- configuration of fikit, the priority scheduler for shared GPUs",
           ".SH DESCRIPTION"]
    i = 0
    para = []
    # The header: comment lines up to the first section.
    while i < len(lines) and not lines[i].startswith("["):
        text = lines[i].lstrip(";").strip()
        if i == 0:
            i += 1
            continue
        if text:
            para.append(text)
        elif para:
            out += [esc(l) for l in para] + [".PP"]
            para = []
        i += 1
    if para:
        out += [esc(l) for l in para]
    comment = []
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("["):
            out.append(f".SH {esc(line.strip())}")
            comment = []
        elif line.startswith(";"):
            comment.append(line[1:].rstrip())
        elif re.match(r"^\s*[a-z_]+\s*=", line):
            out += [".TP", f"\\fB{esc(line.strip())}\\fR"] + preformatted([c[1:] if c.startswith(" ") else c
                                                                           for c in comment])
            comment = []
        elif not line.strip() and comment and not any(c.strip() for c in comment):
            comment = []
    out += [".SH FILES", "$FIKIT_CONFIG, $XDG_CONFIG_HOME/fikit/fikit.ini, /etc/fikit/fikit.ini",
            ".SH SEE ALSO", "\\fBfikit\\fR(1), \\fBfikit-launch\\fR(1), \\fBfikitd\\fR(8)"]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ini", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                  "conf", "fikit.ini"))
    ap.add_argument("--version", default="")
    a = ap.parse_args()
    # The pages' date: the source's, for reproducible builds.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    day = datetime.datetime.fromtimestamp(int(epoch) if epoch else os.path.getmtime(a.ini), datetime.timezone.utc)
    date = day.strftime("%Y-%m-%d")
    os.makedirs(a.out, exist_ok=True)
    summaries = {"fikit": "inspect and control the fikit GPU scheduler",
                 "fikit-launch": "run a program under the fikit GPU scheduler",
                 "fikitd": "the fikit GPU scheduler daemon"}
    for name, section, rel in PAGES:
        path = os.path.join(a.build, rel)
        lines = help_of(path)
        sub = []
        if name == "fikit":
            cmds = []
            _, _, blocks = split(lines)
            for heading, ls in blocks:
                if heading == "Commands":
                    cmds = [l.split()[0] for l in ls if re.match(r"^  [a-z]+ ", l)]
            sub = [(c, help_of(path, (c,))) for c in cmds]
        text = page(name, section, summaries[name], lines, sub, a.version, date)
        with open(os.path.join(a.out, f"{name}.{section}"), "w") as f:
            f.write(text)
    with open(os.path.join(a.out, "fikit.ini.5"), "w") as f:
        f.write(ini_page(a.ini, a.version, date))
    return 0


if __name__ == "__main__":
    sys.exit(main())
