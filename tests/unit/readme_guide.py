#!/usr/bin/env python3
"""The README stays a user's guide: its first screen starts gpubench, a
table of contents follows, every link of it leads to a heading and every
section is in it, and it speaks to a user rather than about the project's
own history (which belongs in git and bench/RESULTS.md). The first
screen also says what `start` does to the terminal (foreground, Ctrl-C,
options passed through, a second terminal) and how long `test` takes, and
keeps the older exports' caveats below it. The history words are refused in
every other *.md of the tree too (bench/RESULTS.md, the measurements'
record, aside), and in the comments of the code outside tests/.

usage: readme_guide.py SOURCE_DIR"""
import os
import re
import sys

# The two commands a newcomer runs first; CI runs the second.
FIRST_COMMANDS = (
    "scripts/setup.sh start   # install what is missing, build, start gpubenchd on 127.0.0.1:8080",
    "scripts/setup.sh test    # the same set-up, then the whole test suite",
)
FIRST_SCREEN = 40
# What the first screen must say (a pattern each, and what it stands for).
FIRST_SCREEN_SAYS = (
    (r"foreground", "that start runs in the foreground"),
    (r"Ctrl-C stops it", "that Ctrl-C stops it"),
    (r"setup\.sh start --listen", "that options pass through to the daemon"),
    (r"second terminal", "that the next commands need a second terminal"),
    (r"\d+ minutes on \d+ cores", "how long test takes"),
)
# What belongs below the first screen: the older exports' caveats.
NOT_FIRST_SCREEN = (
    (r"0\.1\.0", "the older exports' version"),
    (r"pageable", "the older exports' pageable memory"),
)
# The code a newcomer reads (its comments): the same words, but "wave" and
# "session", which are GPU and CUPTI terms there.
CODE_DIRS = ("server", "common", "client", "web", "worker", "kernels", "packaging", "scripts")
CODE_EXTS = (".c", ".h", ".cu", ".cuh", ".js", ".css", ".html", ".py", ".sh", ".yml", ".txt")
# Markdown files that record measurements as they happened, history and all.
HISTORY_ALLOWED = ("bench/RESULTS.md",)
SKIP_DIRS = (".git", "node_modules")

# Words that narrate how the project was made, not how to use it.
HISTORY = (
    (r"\bissues?\s+#?\d+", "an issue number"),
    (r"\blent\b", "\"lent\""),
    (r"\b(this|that|the|latest|last|each) session\b", "a session"),
    (r"\bwaves?\b", "\"wave\""),
    (r"\bthe seed('s)?\b", "\"the seed\""),
    (r"\bthe project\b", "\"the project\""),
)
CODE_HISTORY = tuple(h for h in HISTORY if h[1] not in ('"wave"', "a session"))


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


def history_problems(path, name):
    """The lines of one markdown file that narrate the project's history."""
    problems = []
    text = open(path, encoding="utf-8").read()
    for n, line in prose_lines(text):
        for pattern, what in HISTORY:
            m = re.search(pattern, line, re.IGNORECASE)
            if m:
                problems.append(f"{name}:{n} speaks of the project's history ({what}): "
                                f"{line.strip()[:100]!r}")
    return problems


def code_files(root):
    """The source files of CODE_DIRS, relative."""
    for top in CODE_DIRS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(CODE_EXTS):
                    yield os.path.relpath(os.path.join(d, f), root)


def code_problems(path, name):
    problems = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            for pattern, what in CODE_HISTORY:
                if re.search(pattern, line, re.IGNORECASE):
                    problems.append(f"{name}:{n} speaks of the project's history ({what}): "
                                    f"{line.strip()[:100]!r}")
    return problems


def markdown_files(root):
    """Every *.md under root, relative, build folders and .git aside."""
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")
                   and not os.path.exists(os.path.join(d, x, "CMakeCache.txt"))]
        for f in files:
            if f.endswith(".md"):
                yield os.path.relpath(os.path.join(d, f), root)


def main():
    root = sys.argv[1]
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    lines = text.splitlines()
    problems = []

    head = "\n".join(lines[:FIRST_SCREEN])
    for cmd in FIRST_COMMANDS:
        if cmd not in head:
            problems.append(f"the first {FIRST_SCREEN} lines lack {cmd!r}")
    for pattern, what in FIRST_SCREEN_SAYS:
        if not re.search(pattern, head):
            problems.append(f"the first {FIRST_SCREEN} lines do not say {what} ({pattern!r})")
    for pattern, what in NOT_FIRST_SCREEN:
        if re.search(pattern, head):
            problems.append(f"the first {FIRST_SCREEN} lines hold {what}: move it below")

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

    files = sorted(markdown_files(root))
    for name in files:
        if name not in HISTORY_ALLOWED:
            problems += history_problems(os.path.join(root, name), name)
    code = sorted(code_files(root))
    for name in code:
        problems += code_problems(os.path.join(root, name), name)

    for p in problems:
        print("readme_guide:", p, file=sys.stderr)
    print(f"readme_guide: {len(headings)} headings, {len(files)} markdown files, "
          f"{len(code)} source files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
