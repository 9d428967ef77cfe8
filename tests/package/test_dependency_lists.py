#!/usr/bin/env python3
"""Every list of the libraries' packages names every library (issue 38).

test_dependency_lists.py SOURCE_DIR [BUILD_DIR]

The libraries are CMake's pkg_check_modules modules (every CMakeLists.txt of
the tree).  packaging/dependencies gives each one its packages; then:
  - scripts/setup.sh's list (`scripts/setup.sh packages build|test`, what it
    would install) has every build package;
  - the Dockerfile's build stage installs every build package, and its last
    (runtime) stage every runtime package, under Debian 12's names and under
    Ubuntu 24.04's (its RUN lines are read: literal names, ARG defaults, and
    what scripts/packages.sh prints where a RUN calls it);
  - .ci/run installs every build package (by name or through packages.sh);
  - the .deb's Depends (CPackConfig.cmake in BUILD_DIR) has every runtime
    package of this machine's distribution;
  - on a Debian or Ubuntu machine, each module's .pc file belongs to the
    build package named for it, and that package depends on the runtime
    package named for it (the names are checked against dpkg, not only
    against each other).
Then the same checks run on copies of those files with a package taken out
of one list at a time (and on the Dockerfile as it was before issue 38),
and each copy must fail: the test shows it would catch the next forgotten
library.

Exit 0 passed, 1 failed."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

KEYWORDS = {"REQUIRED", "QUIET", "IMPORTED_TARGET", "GLOBAL", "NO_CMAKE_PATH",
            "NO_CMAKE_ENVIRONMENT_PATH"}
DISTROS = {"debian": 3, "ubuntu": 4}  # column of packaging/dependencies


class Missing(Exception):
    pass


def cmake_modules(src):
    """{module: 'file:line'} of every pkg_check_modules/pkg_search_module."""
    mods = {}
    for dirpath, dirnames, files in os.walk(src):
        dirnames[:] = [d for d in dirnames
                       if not d.startswith(".") and not d.startswith("build")]
        if "CMakeLists.txt" not in files:
            continue
        path = os.path.join(dirpath, "CMakeLists.txt")
        text = open(path).read()
        text = re.sub(r"#[^\n]*", "", text)
        for m in re.finditer(r"\bpkg_(?:check_modules|search_module)\s*\(([^)]*)\)", text,
                             re.IGNORECASE):
            args = m.group(1).split()[1:]  # the first is the prefix
            for a in args:
                if a in KEYWORDS:
                    continue
                name = re.split(r"[<>=]", a)[0]
                line = text[:m.start()].count("\n") + 1
                mods[name] = "%s:%d" % (os.path.relpath(path, src), line)
    return mods


def dependency_table(src):
    rows = {}
    path = os.path.join(src, "packaging", "dependencies")
    for n, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        f = line.split()
        if len(f) != 4:
            raise Missing("packaging/dependencies:%d: not 4 fields: %s" % (n, line))
        rows[f[0]] = f
    return rows


def packages_sh(src, what, distro=None):
    cmd = ["sh", os.path.join(src, "scripts", "packages.sh"), what] + ([distro] if distro else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise Missing("%s failed: %s" % (" ".join(cmd[1:]), p.stderr.strip()))
    return p.stdout.split()


def logical_lines(text):
    """A Dockerfile's instructions, continuation lines joined."""
    out, cur = [], ""
    for line in text.splitlines():
        if not cur and line.lstrip().startswith("#"):
            continue
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if cur.strip():
            out.append(cur.strip())
        cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out


def installed_by(run_cmd, args, src, distro):
    """The packages a shell command installs with apt-get install: the
    literal names, ${ARG}s expanded from their defaults, and the output of
    packages.sh where the command calls it."""
    pkgs = set()
    for name, value in args.items():
        run_cmd = run_cmd.replace("${%s}" % name, value).replace("$" + name + " ", value + " ")

    def listed(m):
        what = m.group("what")
        return " ".join(packages_sh(src, what, distro if what == "run" else None))
    # VAR=$(... packages.sh build|run): its names where the install says $VAR
    call = r"\$\([^)]*packages\.sh\s+(?P<what>build|run)[^)]*\)"
    for m in re.finditer(r"(\w+)=" + call, run_cmd):
        names = listed(m)
        run_cmd = run_cmd.replace(m.group(0), "")
        run_cmd = re.sub(r"\$\{%s\}|\$%s\b" % (m.group(1), m.group(1)), names, run_cmd)
    run_cmd = re.sub(call, listed, run_cmd)  # $(packages.sh ...) in the install itself
    for part in re.split(r"&&|;|\|\|", run_cmd):
        m = re.search(r"apt-get\s+install\b(.*)", part)
        if not m:
            continue
        for tok in m.group(1).split():
            if tok.startswith("-") or "$" in tok or tok in ("\\",) or ")" in tok:
                continue
            pkgs.add(tok.strip('"\''))
    return pkgs


def dockerfile_stages(src, distro):
    """[(stage name, packages installed)] of the Dockerfile, for a base of
    this distribution."""
    text = open(os.path.join(src, "Dockerfile")).read()
    stages, args, copied = [], {}, set()
    for ins in logical_lines(text):
        word, _, rest = ins.partition(" ")
        word = word.upper()
        if word == "FROM":
            m = re.search(r"\bAS\s+(\S+)", rest, re.IGNORECASE)
            stages.append([m.group(1) if m else "runtime", set(), set()])
            args = {k: v for k, v in args.items() if k.startswith("global:")}
        elif word == "ARG":
            m = re.match(r"(\w+)=(.*)", rest.strip())
            if m:
                key = m.group(1) if stages else "global:" + m.group(1)
                args[key] = m.group(2).strip().strip('"\'')
        elif word == "COPY" and stages:
            stages[-1][2].update(rest.split()[:-1])
        elif word == "RUN" and stages:
            local = {k.replace("global:", ""): v for k, v in args.items()}
            if "packages.sh" in rest and not {"packaging/dependencies",
                                              "scripts/packages.sh"} <= stages[-1][2] \
                    and "." not in stages[-1][2]:
                raise Missing("Dockerfile, %s: runs packages.sh without COPYing "
                              "packaging/dependencies and scripts/packages.sh first" % stages[-1][0])
            stages[-1][1].update(installed_by(rest, local, src, distro))
    return [(name, pkgs) for name, pkgs, _ in stages]


def check(src, build=None, host=False):
    """Raises Missing naming every gap; prints what it checked."""
    gaps = []
    mods = cmake_modules(src)
    if not mods:
        raise Missing("no pkg_check_modules found in CMakeLists.txt")
    table = dependency_table(src)
    for mod, where in sorted(mods.items()):
        if mod not in table:
            gaps.append("%s (%s) has no line in packaging/dependencies" % (mod, where))
    for mod in table:
        if mod not in mods:
            gaps.append("packaging/dependencies names %s, which no pkg_check_modules asks for"
                        % mod)
    rows = [table[m] for m in sorted(mods) if m in table]
    build_pkgs = [r[1] for r in rows]

    for cmd in ("build", "test"):
        p = subprocess.run(["bash", os.path.join(src, "scripts", "setup.sh"), "packages", cmd],
                           capture_output=True, text=True)
        if p.returncode != 0:
            gaps.append("scripts/setup.sh packages %s failed: %s" % (cmd, p.stderr.strip()))
            continue
        have = set(p.stdout.split())
        for pkg in build_pkgs:
            if pkg not in have:
                gaps.append("scripts/setup.sh %s does not install %s" % (cmd, pkg))

    for distro, col in DISTROS.items():
        stages = dockerfile_stages(src, distro)
        if len(stages) < 2:
            gaps.append("Dockerfile: expected a build stage and a runtime stage")
            continue
        (bname, bpkgs), (rname, rpkgs) = stages[0], stages[-1]
        for r in rows:
            if r[1] not in bpkgs:
                gaps.append("Dockerfile, %s stage (%s base): does not install %s (for %s)"
                            % (bname, distro, r[1], r[0]))
            if r[col - 1] not in rpkgs:
                gaps.append("Dockerfile, %s stage (%s base): does not install %s (for %s)"
                            % (rname, distro, r[col - 1], r[0]))

    # .ci/run: its apt-get install lines, with "${VAR[@]}" of
    # `mapfile -t VAR < <(scripts/packages.sh build)` standing for the names
    ci = open(os.path.join(src, ".ci", "run")).read()
    ci_installs = " ".join(line for line in logical_lines(ci) if "apt-get install" in line)
    for m in re.finditer(r"mapfile\s+-t\s+(\w+)\s+<\s*<\([^)]*packages\.sh\s+build\)", ci):
        ci_installs = ci_installs.replace('"${%s[@]}"' % m.group(1), " ".join(build_pkgs))
    for pkg in build_pkgs:
        if not re.search(r"(^|\s)%s(\s|$)" % re.escape(pkg), ci_installs):
            gaps.append(".ci/run does not install %s" % pkg)

    if build:
        conf = os.path.join(build, "CPackConfig.cmake")
        text = open(conf).read()
        m = re.search(r'set\(CPACK_DEBIAN_PACKAGE_DEPENDS "([^"]*)"', text)
        depends = {d.strip().split()[0] for d in m.group(1).split(",")} if m else set()
        col = DISTROS.get(host_distro(), 3)
        for r in rows:
            if r[col - 1] not in depends:
                gaps.append("the .deb's Depends (%s) lacks %s (for %s)" % (conf, r[col - 1], r[0]))

    if host:
        gaps += check_against_dpkg(rows)
    if gaps:
        raise Missing("\n".join(gaps))
    return rows


def host_distro():
    try:
        text = open("/etc/os-release").read()
    except OSError:
        return None
    ids = " ".join(re.findall(r'^(?:ID|ID_LIKE)="?([^"\n]*)"?', text, re.M)).split()
    for d in ("ubuntu", "debian"):
        if d in ids:
            return d
    return None


def check_against_dpkg(rows):
    """The names against this machine's dpkg: the .pc file's owner is the
    build package; the build package depends on the runtime package."""
    distro = host_distro()
    if distro is None or shutil.which("dpkg-query") is None or shutil.which("pkg-config") is None:
        print("NOT CHECKED against dpkg: not a Debian or Ubuntu machine with dpkg and pkg-config")
        return []
    col = DISTROS[distro]
    gaps = []
    for r in rows:
        mod, dev, run = r[0], r[1], r[col - 1]
        p = subprocess.run(["pkg-config", "--variable=pcfiledir", mod], capture_output=True,
                           text=True)
        if p.returncode != 0:
            gaps.append("pkg-config does not know %s here" % mod)
            continue
        pc = os.path.realpath(os.path.join(p.stdout.strip(), mod + ".pc"))
        owners = set()
        for cand in {pc, os.path.join(p.stdout.strip(), mod + ".pc")}:
            q = subprocess.run(["dpkg-query", "-S", cand], capture_output=True, text=True)
            for line in q.stdout.splitlines():
                owners.update(o.strip().split(":")[0] for o in line.split(": ")[0].split(","))
        if dev not in owners:
            gaps.append("%s.pc belongs to %s here, not to %s as packaging/dependencies says"
                        % (mod, sorted(owners) or "no package", dev))
            continue
        q = subprocess.run(["dpkg-query", "-W", "-f=${Depends}", dev], capture_output=True,
                           text=True)
        deps = {d.strip().split()[0].split(":")[0]
                for alt in q.stdout.split(",") for d in alt.split("|") if d.strip()}
        if run not in deps:
            gaps.append("%s does not depend on %s (its Depends: %s)" % (dev, run, q.stdout))
    if not gaps:
        print("against dpkg (%s): each .pc file's package and its runtime library agree" % distro)
    return gaps


FILES = ["CMakeLists.txt", "packaging/dependencies", "scripts/setup.sh", "scripts/packages.sh",
         "Dockerfile", ".ci/run"]

# The runtime stage as it was before issue 38 (neither libyaml nor GnuTLS).
OLD_RUNTIME = '''FROM ${RUN_IMAGE}
ARG RUN_PACKAGES="libmicrohttpd12t64 libcjson1 libsqlite3-0 libcurl4t64 libnettle8t64"
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
      ${RUN_PACKAGES} libjs-chart.js curl \\
    && rm -rf /var/lib/apt/lists/*
'''


def mutations(src):
    """(what, file, function from text to text) that each take a package
    out of one list."""
    def sub(pattern, repl, count=1):
        def f(text):
            new, n = re.subn(pattern, repl, text, count=count, flags=re.S | re.M)
            assert n, "mutation found nothing to change: %s" % pattern
            return new
        return f

    build = packages_sh(src, "build")
    literal = " ".join(p for p in build if p != "libyaml-dev")
    return [
        ("a new pkg_check_modules module with no line", "CMakeLists.txt",
         sub(r"(pkg_check_modules\(YAML[^\n]*\n)",
             r"\1pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)\n")),
        ("yaml-0.1's line gone from packaging/dependencies", "packaging/dependencies",
         sub(r"^yaml-0\.1\s[^\n]*\n", "")),
        ("setup.sh naming its libraries itself, without libyaml-dev", "scripts/setup.sh",
         sub(r'"\$\{lib_packages\[@\]\}"', literal)),
        ("the Dockerfile's build stage naming its libraries, without libyaml-dev", "Dockerfile",
         sub(r"(AS build.*?)\$\{packages\}", r"\1" + literal)),
        ("the Dockerfile's runtime stage as before issue 38", "Dockerfile",
         sub(r"^FROM \$\{RUN_IMAGE\}\n.*?/tmp/gpubench-deps \\\n", OLD_RUNTIME)),
        (".ci/run naming its libraries, without libgnutls28-dev", ".ci/run",
         sub(r'"\$\{libs\[@\]\}"', " ".join(p for p in build if p != "libgnutls28-dev"))),
    ]


def main(src, build=None):
    rows = check(src, build, host=True)
    print("packaging/dependencies: %d modules, every list has them: %s"
          % (len(rows), " ".join(r[0] for r in rows)))
    failed = False
    tmp = tempfile.mkdtemp(prefix="gpubench-deplists-")
    try:
        for what, name, change in mutations(src):
            copy = os.path.join(tmp, "src")
            shutil.rmtree(copy, ignore_errors=True)
            for f in FILES:
                os.makedirs(os.path.dirname(os.path.join(copy, f)), exist_ok=True)
                shutil.copy2(os.path.join(src, f), os.path.join(copy, f))
            check(copy)  # the copy as it is passes
            path = os.path.join(copy, name)
            with open(path) as f:
                text = change(f.read())
            with open(path, "w") as f:
                f.write(text)
            try:
                check(copy)
            except Missing as e:
                print("caught: %s:\n    %s" % (what, str(e).replace("\n", "\n    ")))
            else:
                print("FAILED: not caught: %s" % what)
                failed = True
    finally:
        shutil.rmtree(tmp)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main(*sys.argv[1:3]))
    except Missing as e:
        print("FAILED: a list lacks a package:\n  " + str(e).replace("\n", "\n  "))
        sys.exit(1)
