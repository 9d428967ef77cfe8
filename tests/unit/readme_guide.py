#!/usr/bin/env python3
"""The README stays a user's guide: its first screen starts gpubench, a
table of contents follows, every link of it leads to a heading and every
section is in it, and it speaks to a user rather than about the project's
own history (which belongs in git and bench/RESULTS.md).

usage: readme_guide.py README.md"""
import re
import sys

# The two commands a newcomer runs first; CI runs the second.
FIRST_COMMANDS = (
    "scripts/setup.sh start   # install what is missing, build, start gpubenchd on 127.0.0.1:8080",
    "scripts/setup.sh test    # the same set-up, then the whole test suite",
)
FIRST_SCREEN = 40

# Words that narrate how the project was made, not how to use it.
HISTORY = (
    (r"\bissues?\s+#?\d+", "an issue number"),
    (r"\blent\b", "\"lent\""),
    (r"\b(this|that|the|latest|last|each) session\b", "a session"),
    (r"\bwaves?\b", "\"wave\""),
    (r"\bthe seed('s)?\b", "\"the seed\""),
    (r"\bthe project\b", "\"the project\""),
)


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def slug(heading):
    """The anchor GitHub gives a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    lines = text.splitlines()
    problems = []

    head = "\n".join(lines[:FIRST_SCREEN])
    for cmd in FIRST_COMMANDS:
        if cmd not in head:
            problems.append(f"the first {FIRST_SCREEN} lines lack {cmd!r}")

    headings, anchors = [], {}
    for n, line in prose_lines(text):
        m = re.match(r"(#{1,6}) (.*)$", line)
        if m:
            a = slug(m.group(2))
            count = anchors.get(a, 0)
            anchors[a] = count + 1
            if count:
                a = f"{a}-{count}"
                anchors[a] = 1
            headings.append((n, len(m.group(1)), m.group(2), a))

    toc = [h for h in headings if h[1] == 2 and h[2] == "Contents"]
    if not toc:
        problems.append("no '## Contents' section")
    else:
        at = toc[0][0]
        if at <= 10:
            problems.append(f"the contents start at line {at}, inside the first screen's commands")
        end = next((h[0] for h in headings if h[0] > at and h[1] <= 2), len(lines) + 1)
        links = re.findall(r"\]\(#([^)]+)\)", "\n".join(lines[at:end - 1]))
        if not links:
            problems.append("the contents have no links")
        for link in links:
            if link not in anchors:
                problems.append(f"the contents link #{link} leads to no heading")
        for n, level, title, a in headings:
            if level == 2 and n > at and a not in links:
                problems.append(f"'## {title}' (line {n}) is not in the contents")

    for n, line in prose_lines(text):
        for pattern, what in HISTORY:
            m = re.search(pattern, line, re.IGNORECASE)
            if m:
                problems.append(f"line {n} speaks of the project's history ({what}): "
                                f"{line.strip()[:100]!r}")

    for p in problems:
        print("readme_guide:", p, file=sys.stderr)
    print(f"readme_guide: {len(headings)} headings, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
