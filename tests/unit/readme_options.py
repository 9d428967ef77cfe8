#!/usr/bin/env python3
"""The README's Configuration table and `gpubenchd --help` list the same
options with the same defaults, so that neither can drift from the other.

usage: readme_options.py README.md GPUBENCHD
A README row may name several options ("`--rate-limit N`, `--rate-burst N`")
with their defaults in the same order ("120, 30"); an empty default cell
means --help shows no default either."""
import re
import subprocess
import sys


def readme_options(path):
    text = open(path, encoding="utf-8").read()
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    options = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`--"):
            continue
        names = re.findall(r"`(--[a-z0-9-]+)[^`]*`", cells[0])
        default = cells[1].replace("`", "")
        defaults = [d.strip() for d in default.split(",")] if len(names) > 1 else [default]
        if len(names) > 1 and default == "":
            defaults = [""] * len(names)
        if len(defaults) != len(names):
            sys.exit(f"README row {cells[0]!r}: {len(names)} options but defaults {default!r}")
        for name, d in zip(names, defaults):
            options[name] = d
    return options


def help_options(daemon):
    out = subprocess.run([daemon, "--help"], capture_output=True, text=True, check=True,
                         timeout=10).stdout
    options, name, words = {}, None, []

    def close():
        if name:
            m = re.search(r"\(default: (.*)\)$", " ".join(words))
            options[name] = m.group(1) if m else ""

    for line in out.splitlines():
        m = re.match(r"  (--[a-z0-9-]+)(.*)$", line)
        if m:
            close()
            name, words = m.group(1), m.group(2).split()
        elif name and line.startswith(" "):
            words += line.split()
        else:
            close()
            name, words = None, []
    close()
    return options


def main():
    readme, daemon = sys.argv[1], sys.argv[2]
    in_readme, in_help = readme_options(readme), help_options(daemon)
    problems = []
    for name in sorted(set(in_readme) | set(in_help)):
        if name not in in_help:
            problems.append(f"{name} is in the README but not in --help")
        elif name not in in_readme:
            problems.append(f"{name} is in --help but not in the README")
        elif in_readme[name] != in_help[name]:
            problems.append(f"{name}: the README's default is {in_readme[name]!r}, "
                            f"--help says {in_help[name]!r}")
    if len(in_help) < 10:
        problems.append(f"only {len(in_help)} options read from --help: has its layout changed?")
    for p in problems:
        print("readme_options:", p, file=sys.stderr)
    print(f"readme_options: {len(in_help)} options in --help, {len(in_readme)} in the README")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
